// Owns how long an exit path waits for queued output (answers, the last notifications) to reach its
// reader: long enough for a live reader to drain a pipe, short enough that a stalled or gone reader
// never holds up the exit. Every mode's way out uses this one bound.

import { logFailure } from "./log.ts";

export const EXIT_FLUSH_MS = 500;

/** Resolves when `flushing` settles (a failure counts as done, logged at debug: the reader is gone)
 *  or after `ms`. */
export async function flushWithin(flushing: Promise<unknown>, ms = EXIT_FLUSH_MS): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([flushing.catch(logFailure("flushing queued output on the way out")), new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}
