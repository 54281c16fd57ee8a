// Owns the cross-process download lock: an exclusive lock file (O_EXCL) holding pid, host and a nonce,
// refreshed while held; a lock whose holder died on this host, or that nobody refreshed for `staleS`,
// is taken over. Waiters poll for the holder's result instead of downloading again, and past `maxWaitS`
// go ahead without the lock (so the work must be safe to repeat).
import { randomHex } from "../../core/ids.ts";
import { closeSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { utimes } from "node:fs/promises";
import { dirname } from "node:path";
import { log, logFailure } from "../../core/log.ts";
import { HOST, ownerGone } from "./owner.ts";

export interface LockOptions {
  staleS: number;
  /** How long to wait for a live holder before working without the lock. */
  maxWaitS: number;
  /** How often a waiter looks again (ms). */
  pollMs?: number;
  signal?: AbortSignal;
}

const DEFAULT_POLL_MS = 25;

/**
 * Runs `work` while holding the lock at `path`. Before working, and while waiting for another holder,
 * `done()` is asked whether the result already exists; its answer is returned when it is not undefined.
 */
export async function withFileLock<T>(path: string, opts: LockOptions, done: () => Promise<T | undefined>, work: () => Promise<T>): Promise<T> {
  const mine = `${process.pid} ${HOST} ${randomHex(8)}`;
  const giveUpAt = Date.now() + opts.maxWaitS * 1000;
  let told = false;
  for (;;) {
    opts.signal?.throwIfAborted();
    if (Date.now() > giveUpAt) {
      // A holder that is alive but slower than any bound we can name: work without the lock. The work
      // must be safe to repeat (crate installs are: the rename keeps whichever copy finished first).
      log.warn("lock held too long; going ahead without it", { lock: path, waited_s: opts.maxWaitS });
      return (await done()) ?? (await work());
    }
    if (tryCreate(path, mine)) return holdWhile(path, mine, opts.staleS, async () => (await done()) ?? (await work()));
    const ready = await done();
    if (ready !== undefined) return ready;
    const held = readOrUndefined(path);
    if (held !== undefined && !told) {
      told = true;
      log.info("waiting for another fetch holding the lock", { lock: path, holder: held });
    }
    if (held !== undefined && isStale(path, held, opts.staleS)) breakLock(path, held);
    else await new Promise((resolve) => setTimeout(resolve, opts.pollMs ?? DEFAULT_POLL_MS));
  }
}

// Synchronous on purpose: microsecond calls, cheaper than thread-pool round trips.
function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function removeIfStill(path: string, content: string): void {
  if (readOrUndefined(path) !== content) return;
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** The lock's folder is made when a lock finds it missing, not asked for before every lock. */
function tryCreate(path: string, content: string): boolean {
  for (let madeFolder = false; ; madeFolder = true) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, content);
      closeSync(fd);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EEXIST") return false;
      if (code !== "ENOENT" || madeFolder) throw err;
      mkdirSync(dirname(path), { recursive: true });
    }
  }
}

async function holdWhile<T>(path: string, mine: string, staleS: number, fn: () => Promise<T>): Promise<T> {
  const beat = setInterval(() => {
    const now = new Date();
    utimes(path, now, now).catch(logFailure("refreshing a download lock"));
  }, (staleS * 1000) / 3);
  beat.unref?.();
  try {
    return await fn();
  } finally {
    clearInterval(beat);
    // Only remove our own lock: a waiter may have judged it stale and replaced it.
    removeIfStill(path, mine);
  }
}

/** Stale: its holder on this host is gone, or it was not refreshed for `staleS` seconds. */
export function isStale(path: string, held: string, staleS: number): boolean {
  const [pid, host] = held.split(" ");
  if (ownerGone(Number(pid), host ?? "")) return true;
  let mtimeMs: number;
  try {
    mtimeMs = statSync(path).mtimeMs;
  } catch {
    return false;
  }
  return Date.now() - mtimeMs > staleS * 1000;
}

/** Removes a stale lock unless someone replaced it since it was judged (a narrow window remains). */
function breakLock(path: string, judged: string): void {
  removeIfStill(path, judged);
}
