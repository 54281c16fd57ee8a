// Owns who made a lock file or a temp folder in the crate cache, and whether that maker is gone: this
// host's token (its name made safe for file names) and the pid test. A pid means something only on its
// own host: a cache shared between hosts (NFS, a container's mounted volume) holds other hosts' pids,
// which callers must judge by age instead. Does not decide what to remove.
import { hostname } from "node:os";
import { pidAlive } from "../../core/process-group.ts";

/** This host's name as it appears in lock files and temp folder names. */
export const HOST = hostToken(hostname());

/** A host name reduced to letters, digits, `.` and `-` (hostnames have no `_`, so two rarely meet). */
export function hostToken(name: string): string {
  return name.replace(/[^A-Za-z0-9.-]/g, "_").slice(0, 64) || "unknown-host";
}

/** True only when the maker ran on this host and its pid no longer exists; another host's maker is never judged here. */
export function ownerGone(pid: number, host: string): boolean {
  return host === HOST && Number.isInteger(pid) && pid > 0 && pid !== process.pid && !pidAlive(pid);
}
