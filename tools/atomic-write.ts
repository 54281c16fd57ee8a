// Owns replacing a file's contents so that a crash at any instant leaves the old or the new file,
// never a mix: temp file in the same directory, fsync, rename over, fsync the directory.
// Does not decide whether the path is allowed (callers check the workspace rule first).
import { randomBytes } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** `mode` undefined: a new file with the default permissions (0666 less the umask). */
export async function writeFileAtomic(path: string, data: string, mode?: number): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.tendril-${process.pid}-${randomBytes(4).toString("hex")}.tmp`);
  const fh = await open(tmp, "wx", mode ?? 0o666);
  try {
    await fh.writeFile(data, "utf8");
    // open() applied the umask; the edited file keeps exactly the bits it had.
    if (mode !== undefined) await fh.chmod(mode);
    await fh.sync();
    await fh.close();
    await rename(tmp, path);
  } catch (err) {
    await fh.close().catch(() => {});
    await rm(tmp, { force: true });
    throw err;
  }
  await syncDir(dir);
}

async function syncDir(dir: string): Promise<void> {
  try {
    const dh = await open(dir, "r");
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  } catch {
    // some filesystems refuse fsync on a directory; the rename itself is already atomic
  }
}
