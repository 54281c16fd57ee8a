// Owns counting semaphores: at most N holders, the rest wait in line (first come, first served); a
// waiter whose signal aborts leaves the line without ever holding. Used for parallel tool calls and
// for session starts. Does not time anything itself: callers pass an AbortSignal.

export interface Semaphore {
  /** Resolves true once held; false if `signal` aborted first (nothing is held then). */
  acquire(signal?: AbortSignal): Promise<boolean>;
  release(): void;
  /** Holders now, and callers waiting in line. */
  readonly held: number;
  readonly waiting: number;
}

export function createSemaphore(size: number): Semaphore {
  const max = Math.max(1, size);
  let held = 0;
  const line: { grant: () => void }[] = [];
  return {
    get held() {
      return held;
    },
    get waiting() {
      return line.length;
    },
    acquire(signal) {
      if (signal?.aborted) return Promise.resolve(false);
      if (held < max && line.length === 0) {
        held++;
        return Promise.resolve(true);
      }
      return new Promise<boolean>((resolve) => {
        const waiter = {
          grant: () => {
            signal?.removeEventListener("abort", onAbort);
            resolve(true);
          },
        };
        const onAbort = () => {
          const i = line.indexOf(waiter);
          if (i >= 0) line.splice(i, 1);
          resolve(false);
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        line.push(waiter);
      });
    },
    release() {
      const next = line.shift();
      if (next) next.grant(); // the slot passes straight to the next in line
      else held = Math.max(0, held - 1);
    },
  };
}
