// Owns the in-memory byte pipe: what is written to `sink` comes out of `input`, in order, until
// close(). It stands in for a pair of stdio pipes when both ends live in one process and one end wants
// bytes (`tendril prompt`'s in-process agent, routing tests; a component run inside the conductor gets a
// message pipe instead, message-pipe.ts). Like a pipe it pushes back: a write resolves once the reader has
// taken its chunk, so the writer's own bound (a hop's MAX_HOP_QUEUE_BYTES) sees a reader that stopped.
// It holds at most what the writer queued without waiting, and bounds nothing itself.
import type { ByteSink } from "./writer.ts";

export interface BytePipe {
  input: AsyncIterable<Uint8Array>;
  sink: ByteSink;
  /** Ends `input` once what was written before is read; later writes are dropped. */
  close(): void;
}

export function bytePipe(): BytePipe {
  const queue: { chunk: Uint8Array; taken: () => void }[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  return {
    input: {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          while (queue.length > 0) {
            const next = queue.shift()!;
            next.taken();
            yield next.chunk;
          }
          if (closed) return;
          await new Promise<void>((r) => (wake = r));
          wake = undefined;
        }
      },
    },
    sink: {
      write(chunk) {
        if (closed) return Promise.resolve();
        return new Promise<void>((taken) => {
          queue.push({ chunk, taken });
          wake?.();
        });
      },
    },
    close() {
      closed = true;
      // the reader still gets what was written; the writers stop waiting for it
      for (const w of queue) w.taken();
      wake?.();
    },
  };
}
