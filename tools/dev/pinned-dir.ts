// Owns opening a directory inside the workspace root so that later file operations in it cannot be
// redirected: every component below the root is opened with O_NOFOLLOW, the opened directory's real
// path is checked through /proc/self/fd, and callers then name files as `/proc/self/fd/N/NAME`, which
// the kernel resolves to the opened directory whatever symlinks are swapped in afterwards.
// Does not decide which path the model meant (workspace-path.ts) nor write files (atomic-write.ts).
import { constants as fsc, existsSync } from "node:fs";
import { type FileHandle, mkdir, open, readlink, realpath } from "node:fs/promises";
import { relative, sep } from "node:path";
import { isInside, PathError } from "./workspace-path.ts";

const PROC_FD = "/proc/self/fd";
const DIR_FLAGS = fsc.O_RDONLY | fsc.O_DIRECTORY;

export class PinnedDir {
  private constructor(
    private readonly handle: FileHandle,
    /** The directory's real path when it was opened, for messages. */
    readonly real: string,
    /** Where names are resolved: the /proc path of the handle, or (without /proc) the real path. */
    private readonly base: string,
  ) {}

  /** The path through which `name` (one component) in this directory is reached. */
  path(name: string): string {
    if (name === "" || name === "." || name === ".." || name.includes("/")) throw new PathError(`not a file name: ${name}`);
    return `${this.base}/${name}`;
  }

  /** The directory itself, as a path that reaches the opened handle. */
  get self(): string {
    return this.base;
  }

  async sync(): Promise<void> {
    await this.handle.sync();
  }

  async close(): Promise<void> {
    await this.handle.close();
  }

  /**
   * Opens `dir` (a real path inside `root`) one component at a time from the root, never following a
   * symlink. With `create`, missing components are made (mode 0777 less the umask). A component that
   * is, or becomes, a symlink or a non-directory is refused: the path changed under us.
   */
  static async open(root: string, dir: string, create: boolean): Promise<PinnedDir> {
    if (!isInside(root, dir)) throw new PathError(`${dir} is outside the workspace root ${root}`);
    const parts = relative(root, dir).split(sep).filter((p) => p !== "");
    let current = await PinnedDir.verified(await open(root, DIR_FLAGS), root, root);
    for (const name of parts) {
      let next: FileHandle;
      try {
        next = await openChild(current, name, create);
      } catch (err) {
        await current.close();
        throw err;
      }
      await current.close();
      current = await PinnedDir.verified(next, root, `${current.real}${sep}${name}`);
    }
    return current;
  }

  /** Wraps an opened handle once its real path is known to be `expected`, inside `root`. */
  private static async verified(handle: FileHandle, root: string, expected: string): Promise<PinnedDir> {
    try {
      const hasProc = existsSync(PROC_FD);
      const base = hasProc ? `${PROC_FD}/${handle.fd}` : expected;
      // Without /proc the best available check is the path's real path; with it, the handle's own.
      const real = hasProc ? await readlink(base) : await realpath(expected);
      if (real !== expected || !isInside(root, real)) {
        throw new PathError(`${expected} changed while it was being opened (it now resolves to ${real}); retry`);
      }
      return new PinnedDir(handle, real, base);
    } catch (err) {
      await handle.close();
      throw err;
    }
  }
}

async function openChild(parent: PinnedDir, name: string, create: boolean): Promise<FileHandle> {
  const path = parent.path(name);
  try {
    return await open(path, DIR_FLAGS | fsc.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && create) {
      await mkdir(path).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== "EEXIST") throw e;
      });
      return openChild(parent, name, false);
    }
    if (code === "ELOOP" || code === "ENOTDIR") {
      throw new PathError(`${parent.real}${sep}${name} is not a directory inside the workspace root (a symlink or a file was found there); retry`);
    }
    throw err;
  }
}
