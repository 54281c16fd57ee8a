// Owns opening the files that hold secrets (tokens in MCP `env` and `headers`, whole conversations) so
// that only their owner can read them: a new file is made 0600 and an existing regular file with a
// wider mode is tightened to 0600 (devices and pipes such as /dev/stderr are left as they are).
import { closeSync, fchmodSync, fstatSync, openSync } from "node:fs";

const PRIVATE = 0o600;

/** Opens `path` for appending ("a") or writing anew ("w") as a private file; returns the descriptor. */
export function openPrivateFile(path: string, flags: "a" | "w"): number {
  const fd = openSync(path, flags, PRIVATE);
  try {
    const st = fstatSync(fd);
    if (st.isFile() && (st.mode & 0o077) !== 0) fchmodSync(fd, PRIVATE);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}
