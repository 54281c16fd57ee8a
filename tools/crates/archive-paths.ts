// Owns the path rules of a crate archive: every entry lies under `NAME-VER/`, no absolute path, no `..`,
// no entry below a symlink, and every link resolves inside the crate, following the archive's own symlinks.
// Pure string logic; verify-extract.ts applies it while writing.
/** Why `path` may not be extracted, or undefined when it may. `top` is the crate's `NAME-VER` folder. */
export function pathProblem(path: string, top: string): string | undefined {
  if (path.includes("\0")) return "contains a NUL byte";
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path) || path.startsWith("\\")) return "is an absolute path";
  const parts = path.split(/[\\/]/);
  if (parts.includes("..")) return "contains `..`";
  if (parts[0] !== top) return `is outside the crate folder ${top}/`;
  return undefined;
}

/** Entry path without `.` segments or a trailing slash, for comparing paths. */
export function normalizeEntry(path: string): string {
  return path
    .split("/")
    .filter((p) => p !== "" && p !== ".")
    .join("/");
}

/** The first ancestor of `path` that is a symlink in the archive, if any. */
export function symlinkAncestor(path: string, symlinks: ReadonlyMap<string, string>): string | undefined {
  const parts = normalizeEntry(path).split("/");
  for (let i = 1; i < parts.length; i++) {
    const at = parts.slice(0, i).join("/");
    if (symlinks.has(at)) return at;
  }
  return undefined;
}

const MAX_HOPS = 40;

/**
 * Resolves a symlink at `linkPath` with `target` the way the kernel would once every archive symlink
 * exists, and says whether every step stays under `top`. Lexical checks alone are not enough: with
 * `a -> .`, the target `a/../x` leaves the folder although it looks inside.
 */
export function linkStaysInside(linkPath: string, target: string, top: string, symlinks: ReadonlyMap<string, string>): boolean {
  if (target.startsWith("/") || target.includes("\0")) return false;
  const stack = normalizeEntry(linkPath).split("/").slice(0, -1);
  const pending = target.split("/").reverse();
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.pop()!;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      stack.pop();
      if (stack.length === 0 || stack[0] !== top) return false;
      continue;
    }
    stack.push(part);
    const link = symlinks.get(stack.join("/"));
    if (link === undefined) continue;
    if (++hops > MAX_HOPS || link.startsWith("/")) return false;
    stack.pop();
    pending.push(...link.split("/").reverse());
  }
  return stack.length > 0 && stack[0] === top;
}
