// Owns opening a directory inside the workspace root so that later file operations in it cannot be
// redirected: components below the root are opened with O_NOFOLLOW, and names in it are reached through
// the handle (`/proc/self/fd/N/NAME`, Linux) or, without /proc (macOS), through its re-checked real path
// (see PinMode). Does not decide which path the model meant (workspace-path.ts) nor write files.
import { constants as fsc, existsSync, realpathSync, statSync } from "node:fs";
import { type FileHandle, mkdir, open, readlink, realpath, stat } from "node:fs/promises";
import { relative, sep } from "node:path";
import { isInside, PathError } from "./workspace-path.ts";

const PROC_FD = "/proc/self/fd";
const DIR_FLAGS = fsc.O_RDONLY | fsc.O_DIRECTORY;

/**
 * How names in a pinned directory reach it. `proc-fd`: through the open handle, race-free. `checked-path`
 * (no /proc, as on macOS, where /dev/fd/N is not a directory one can look inside): through the real
 * path, which before each use must still resolve, with no symlink on the way, to the very directory
 * (device and inode) that was opened; a swap is refused, and only a swap in the instant between that
 * check and the file operation itself goes unseen.
 */
export type PinMode = "proc-fd" | "checked-path";
let pinMode: PinMode = existsSync(PROC_FD) ? "proc-fd" : "checked-path";

/** Sets the mode (tests set `checked-path` to run the fallback on Linux too); returns the previous one. */
export function setPinMode(mode: PinMode): PinMode {
  const previous = pinMode;
  pinMode = mode;
  return previous;
}

interface Identity {
  dev: number;
  ino: number;
}

export class PinnedDir {
  private constructor(
    private readonly handle: FileHandle,
    /** The directory's real path when it was opened, for messages. */
    readonly real: string,
    /** Where names are resolved: the /proc path of the handle, or (checked-path) the real path. */
    private readonly base: string,
    /** checked-path: what `real` must still be at each use. */
    private readonly identity: Identity | undefined,
  ) {}

  /** The path through which `name` (one component) in this directory is reached. */
  path(name: string): string {
    if (name === "" || name === "." || name === ".." || name.includes("/")) throw new PathError(`not a file name: ${name}`);
    this.recheck();
    return `${this.base}/${name}`;
  }

  /** The directory itself, as a path that reaches the opened handle. */
  get self(): string {
    this.recheck();
    return this.base;
  }

  /** checked-path: the real path must still lead, through no symlink, to the opened directory. */
  private recheck(): void {
    if (this.identity === undefined) return;
    let now: Identity | undefined;
    try {
      now = realpathSync(this.real) === this.real ? statSync(this.real) : undefined;
    } catch {
      now = undefined;
    }
    if (now?.dev !== this.identity.dev || now.ino !== this.identity.ino) {
      throw new PathError(`${this.real} changed while it was in use (it is no longer the directory that was opened); retry`);
    }
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
      if (pinMode === "proc-fd") {
        const base = `${PROC_FD}/${handle.fd}`;
        const real = await readlink(base);
        if (real !== expected || !isInside(root, real)) throw changed(expected, real);
        return new PinnedDir(handle, real, base, undefined);
      }
      // checked-path: the path must lead to the handle's own directory now, and at each later use.
      const [opened, real] = await Promise.all([handle.stat(), realpath(expected)]);
      const there = await stat(expected);
      if (real !== expected || !isInside(root, real) || there.dev !== opened.dev || there.ino !== opened.ino) throw changed(expected, real);
      return new PinnedDir(handle, real, real, { dev: opened.dev, ino: opened.ino });
    } catch (err) {
      await handle.close();
      throw err;
    }
  }
}

function changed(expected: string, real: string): PathError {
  return new PathError(`${expected} changed while it was being opened (it now resolves to ${real}); retry`);
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
