// Owns the rule "a path the model names must stay inside the workspace root" (or one of the session's
// additional roots), symlinks included: every check is on the real path (realpath of the file, or of
// its nearest existing ancestor).
// Does not open or write files; callers act on the real path this returns.
import { realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { isInside, rootOf } from "../../core/path-inside.ts";

export class PathError extends Error {
  override name = "PathError";
}

export { isInside };

/** How to show a real path to the model: relative to the root when inside it. */
export function displayPath(root: string, path: string): string {
  if (!isInside(root, path)) return path;
  return relative(root, path) || ".";
}

function outside(input: string, real: string, roots: readonly string[]): PathError {
  const root = roots[0]!;
  const via = resolve(root, input) === real ? "" : ` (it resolves to ${real}, through a symlink or '..')`;
  if (roots.length === 1) return new PathError(`${input} is outside the workspace root ${root}${via}; use a path inside the root`);
  return new PathError(`${input} is outside the workspace roots ${roots.join(", ")}${via}; use a path inside one of them`);
}

async function realOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ENOTDIR") {
      return undefined;
    }
    throw new PathError(`cannot resolve ${path}: ${(err as Error).message}`);
  }
}

export interface ResolvedPath {
  /** The real absolute path (for a missing file: its real parent joined with the missing names). */
  real: string;
  exists: boolean;
  /** The root that holds it. */
  root: string;
}

/**
 * `root` and `extra` (the session's additional roots) must already be real paths. Relative inputs are
 * relative to `root`.
 */
export async function resolveInside(root: string, input: string, extra: readonly string[] = []): Promise<ResolvedPath> {
  const roots = [root, ...extra];
  if (input.includes("\0")) throw new PathError("path contains a NUL byte");
  const abs = isAbsolute(input) ? resolve(input) : resolve(root, input);
  const real = await realOrUndefined(abs);
  if (real !== undefined) {
    const holder = rootOf(roots, real);
    if (holder === undefined) throw outside(input, real, roots);
    return { real, exists: true, root: holder };
  }
  // Missing: the nearest existing ancestor decides, so a symlinked parent cannot smuggle a new file out.
  const missing: string[] = [];
  let at = abs;
  for (;;) {
    const parent = dirname(at);
    missing.unshift(at.slice(parent.length).replace(/^[/\\]+/, ""));
    if (parent === at) throw new PathError(`no existing ancestor of ${input}`);
    const realParent = await realOrUndefined(parent);
    if (realParent !== undefined) {
      const target = join(realParent, ...missing);
      const holder = rootOf(roots, target);
      if (holder === undefined) throw outside(input, target, roots);
      return { real: target, exists: false, root: holder };
    }
    at = parent;
  }
}
