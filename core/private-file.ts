// Owns opening the files that hold secrets (tokens in MCP `env` and `headers`, whole conversations) so
// that only their owner can read them: a new file is made 0600 and an existing regular file with a
// wider mode is tightened to 0600 (devices and pipes such as /dev/stderr are left as they are).
import { closeSync, constants, fchmodSync, fstatSync, openSync } from "node:fs";

const PRIVATE = 0o600;

/** O_EXCL|O_NOFOLLOW: made here and now, never an existing file or a symlink's target. */
const NEW_ONLY = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Opens `path` for appending ("a"), writing anew ("w") or creating a file that must not exist yet
 * ("new": fails with EEXIST on any file or symlink there, so a planted link cannot redirect the
 * write) as a private file; returns the descriptor.
 */
export function openPrivateFile(path: string, flags: "a" | "w" | "new"): number {
  const fd = openSync(path, flags === "new" ? NEW_ONLY : flags, PRIVATE);
  try {
    const st = fstatSync(fd);
    if (st.isFile() && (st.mode & 0o077) !== 0) fchmodSync(fd, PRIVATE);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}
