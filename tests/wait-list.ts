// Owns waiting, in tests, for a condition an event makes true: checked at once and again each time
// the event's owner calls `changed()` (a message written, a request made), bounded by a deadline.
// Test-only. Does not poll: a condition that no event announces is not for this.
export class WaitList {
  readonly #waits = new Set<() => void>();

  /** Re-checks every pending wait; the event's owner calls it after each event. */
  changed(): void {
    for (const check of [...this.#waits]) check();
  }

  /** Resolves once `ok()` holds; rejects with `timeout()`'s message after `ms`. */
  until(ok: () => boolean, timeout: () => string, ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (ok()) return resolve();
      const timer = setTimeout(() => {
        this.#waits.delete(check);
        reject(new Error(timeout()));
      }, ms);
      const check = () => {
        if (!ok()) return;
        clearTimeout(timer);
        this.#waits.delete(check);
        resolve();
      };
      this.#waits.add(check);
    });
  }
}
