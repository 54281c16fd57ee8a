// Owns the per-session tool namespace spelling: `server__tool`, only [A-Za-z0-9_-], at most 64 bytes,
// unique within a session (a short hash suffix settles truncation and sanitising collisions).
// Does not decide which tools are offered (catalog.ts does).
import { sha256Hex } from "../ids.ts";

export const MAX_QUALIFIED_NAME_BYTES = 64;
const SEPARATOR = "__";
const HASH_CHARS = 6;

/** Replaces every character outside [A-Za-z0-9_-] with `_` (so the result is ASCII: bytes = chars). */
export function sanitizeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/gu, "_");
}

function shortHash(text: string): string {
  return sha256Hex(text).slice(0, HASH_CHARS);
}

/**
 * The qualified name of `tool` on `server`, not in `taken` (the caller adds it). A name that is too long
 * or already taken keeps its readable prefix and ends in `_` + a hash of the original pair.
 */
export function qualifyToolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const plain = sanitizeName(server) + SEPARATOR + sanitizeName(tool);
  if (plain.length <= MAX_QUALIFIED_NAME_BYTES && !taken.has(plain)) return plain;
  const keep = MAX_QUALIFIED_NAME_BYTES - HASH_CHARS - 1;
  for (let n = 0; n < 1000; n++) {
    const candidate = `${plain.slice(0, keep)}_${shortHash(`${server}\0${tool}\0${n}`)}`;
    if (!taken.has(candidate)) return candidate;
  }
  // Unreachable in practice (1000 distinct 24-bit hashes all taken); a counter keeps it bounded and distinct.
  return `${plain.slice(0, keep)}_${String(taken.size % 1_000_000).padStart(HASH_CHARS, "0")}`;
}
