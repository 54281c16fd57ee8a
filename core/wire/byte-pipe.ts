// Owns the in-memory byte pipe: what is written to `sink` comes out of `input`, in order, until
// close(). It stands in for a pair of stdio pipes when both ends live in one process (an agent run
// in-process by `tendril prompt`, routing tests). It keeps no bound of its own: each end's writer and
// line reader bound what flows through it.
import type { ByteSink } from "./writer.ts";

export interface BytePipe {
  input: AsyncIterable<Uint8Array>;
  sink: ByteSink;
  /** Ends `input` once what was written before is read; later writes are dropped. */
  close(): void;
}

export function bytePipe(): BytePipe {
  const queue: Uint8Array[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  return {
    input: {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          while (queue.length > 0) yield queue.shift()!;
          if (closed) return;
          await new Promise<void>((r) => (wake = r));
          wake = undefined;
        }
      },
    },
    sink: {
      write(chunk) {
        if (!closed) queue.push(chunk);
        wake?.();
        return Promise.resolve();
      },
    },
    close() {
      closed = true;
      wake?.();
    },
  };
}
