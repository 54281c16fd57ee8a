// Owns the rule "a path the model names must stay inside the workspace root", symlinks included:
// every check is on the real path (realpath of the file, or of its nearest existing ancestor).
// Does not open or write files; callers act on the real path this returns.
import { realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { isInside } from "../../core/path-inside.ts";

export class PathError extends Error {
  override name = "PathError";
}

export { isInside };

/** How to show a real path to the model: relative to the root when inside it. */
export function displayPath(root: string, path: string): string {
  if (!isInside(root, path)) return path;
  return relative(root, path) || ".";
}

function outside(input: string, real: string, root: string): PathError {
  const via = resolve(root, input) === real ? "" : ` (it resolves to ${real}, through a symlink or '..')`;
  return new PathError(`${input} is outside the workspace root ${root}${via}; use a path inside the root`);
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
}

/** `root` must already be a real path. Relative inputs are relative to the root. */
export async function resolveInside(root: string, input: string): Promise<ResolvedPath> {
  if (input.includes("\0")) throw new PathError("path contains a NUL byte");
  const abs = isAbsolute(input) ? resolve(input) : resolve(root, input);
  const real = await realOrUndefined(abs);
  if (real !== undefined) {
    if (!isInside(root, real)) throw outside(input, real, root);
    return { real, exists: true };
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
      if (!isInside(root, target)) throw outside(input, target, root);
      return { real: target, exists: false };
    }
    at = parent;
  }
}
