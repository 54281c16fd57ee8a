// Owns replacing a file's contents so that a crash at any instant leaves the old or the new file,
// never a mix: temp file in the same (pinned) directory, fsync, rename over, fsync the directory.
// Does not decide whether the path is allowed (callers pin a directory inside the root first).
import { randomBytes } from "node:crypto";
import { constants as fsc } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import type { PinnedDir } from "./pinned-dir.ts";

function tempName(name: string): string {
  return `.${name}.tendril-${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
}

/** `mode` undefined: a new file with the default permissions (0666 less the umask). */
export async function writeFileAtomic(dir: PinnedDir, name: string, data: string, mode?: number): Promise<void> {
  const tmp = dir.path(tempName(name));
  // O_EXCL|O_NOFOLLOW: the temp name is fresh, and a symlink planted there is never followed.
  const fh = await open(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, mode ?? 0o666);
  try {
    await fh.writeFile(data, "utf8");
    // open() applied the umask; the edited file keeps exactly the bits it had.
    if (mode !== undefined) await fh.chmod(mode);
    await fh.sync();
    await fh.close();
    // Both names resolve inside the pinned directory: a symlink at `name` is replaced, never followed.
    await rename(tmp, dir.path(name));
  } catch (err) {
    await fh.close().catch(() => {});
    await rm(tmp, { force: true });
    throw err;
  }
  // some filesystems refuse fsync on a directory; the rename itself is already atomic
  await dir.sync().catch(() => {});
}

