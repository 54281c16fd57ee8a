// Owns the one rule "is this path inside that root" (and "which of these roots holds it", for a
// session's workspace roots: its cwd and additional directories) for every caller (permission rules,
// AGENTS.md discovery, the dev tools, the crate reader). Pure string logic on resolved paths: callers
// that must see through symlinks pass real paths.
import { isAbsolute, relative, resolve, sep } from "node:path";

/** True when `path` (resolved against `root` when relative) is `root` or below it. */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, resolve(root, path));
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The first of `roots` that holds `path` (relative paths are relative to the first root), or undefined. */
export function rootOf(roots: readonly string[], path: string): string | undefined {
  if (roots.length === 0) return undefined;
  const abs = resolve(roots[0]!, path);
  return roots.find((root) => isInside(root, abs));
}
