// Owns the one rule "is this path inside that root" for every caller (permission rules, AGENTS.md
// discovery, the dev tools, the crate reader). Pure string logic on resolved paths: callers that must
// see through symlinks pass real paths.
import { isAbsolute, relative, resolve, sep } from "node:path";

/** True when `path` (resolved against `root` when relative) is `root` or below it. */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, resolve(root, path));
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
