// Owns how long an exit path waits for queued output (answers, the last notifications) to reach its
// reader: long enough for a live reader to drain a pipe, short enough that a stalled or gone reader
// never holds up the exit. Every mode's way out uses this one bound.

export const EXIT_FLUSH_MS = 500;

/** Resolves when `flushing` settles (a failure counts as done: the caller logs it) or after `ms`. */
export async function flushWithin(flushing: Promise<unknown>, ms = EXIT_FLUSH_MS): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([flushing.catch(() => {}), new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}
