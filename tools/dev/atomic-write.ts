// Owns replacing a file's contents so that a crash at any instant leaves the old or the new file,
// never a mix: temp file in the same (pinned) directory, fsync, rename over, fsync the directory; and
// sweeping the temp files that interrupted writes left behind.
// Does not decide whether the path is allowed (callers pin a directory inside the root first).
import { logFailure } from "../../core/log.ts";
import { randomHex } from "../../core/ids.ts";
import { constants as fsc } from "node:fs";
import { lstat, open, readdir, rename, rm } from "node:fs/promises";
import type { PinnedDir } from "./pinned-dir.ts";

const TEMP_NAME = /^\..+\.tendril-\d+-[0-9a-f]{8}\.tmp$/;

/** Temp files this process is writing right now: never swept, whatever the configured age. */
const inFlight = new Set<string>();

function tempName(name: string): string {
  return `.${name}.tendril-${process.pid}-${randomHex(4)}.tmp`;
}

/** `mode` undefined: a new file with the default permissions (0666 less the umask). */
export async function writeFileAtomic(dir: PinnedDir, name: string, data: string, mode?: number): Promise<void> {
  const tmpName = tempName(name);
  const tmp = dir.path(tmpName);
  inFlight.add(tmpName);
  try {
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
      await fh.close().catch(logFailure("closing a temp file"));
      await rm(tmp, { force: true });
      throw err;
    }
  } finally {
    inFlight.delete(tmpName);
  }
  // some filesystems refuse fsync on a directory; the rename itself is already atomic
  await dir.sync().catch(logFailure("syncing the edited directory"));
}

/**
 * Deletes temp files of interrupted writes (`.NAME.tendril-PID-HEX.tmp`) in `dir` whose last change
 * is older than `staleMs` (this process's writes in progress are skipped whatever their age).
 * Returns how many were removed; never throws.
 */
export async function sweepStaleTemps(dir: PinnedDir, staleMs: number, now: number = Date.now()): Promise<number> {
  let removed = 0;
  try {
    for (const name of await readdir(dir.self)) {
      if (!TEMP_NAME.test(name) || inFlight.has(name)) continue;
      const path = dir.path(name);
      const st = await lstat(path).catch(() => undefined);
      if (!st?.isFile() || now - st.mtimeMs < staleMs) continue;
      await rm(path, { force: true }).then(
        () => removed++,
        () => {},
      );
    }
  } catch {
    // an unreadable directory only means nothing is swept this time
  }
  return removed;
}
