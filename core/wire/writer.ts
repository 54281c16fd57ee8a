// Owns the single serialized writer of a protocol stream: one message, one line, in call order,
// respecting the sink's backpressure. Every stdout byte of a protocol mode goes through one of these.

export interface ByteSink {
  /** Writes bytes; resolves when the sink can take more. */
  write(chunk: Uint8Array): Promise<void>;
}

export class LineWriter {
  #tail: Promise<void> = Promise.resolve();
  #closed = false;
  readonly #encoder = new TextEncoder();

  constructor(private readonly sink: ByteSink) {}

  /** Queues one message; resolves once its line is handed to the sink. Rejects only if the sink fails. */
  send(message: unknown): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("writer closed"));
    const bytes = this.#encoder.encode(JSON.stringify(message) + "\n");
    const next = this.#tail.then(() => this.sink.write(bytes));
    this.#tail = next.catch(() => {
      this.#closed = true;
    });
    return next;
  }

  /** Queues whole lines (each message serialized, `\n`-terminated; text, or its UTF-8 bytes when the
   *  caller already encoded it), in order with send(): a relay batches a burst of forwarded messages
   *  into one write this way. */
  sendLines(lines: string | Uint8Array): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("writer closed"));
    const bytes = typeof lines === "string" ? this.#encoder.encode(lines) : lines;
    const next = this.#tail.then(() => this.sink.write(bytes));
    this.#tail = next.catch(() => {
      this.#closed = true;
    });
    return next;
  }

  /** Resolves when everything queued so far is written. */
  flush(): Promise<void> {
    return this.#tail;
  }
}

/** A ByteSink over a Node writable (process.stdout, a child's stdin) that waits for `drain`. */
export function nodeSink(stream: NodeJS.WritableStream): ByteSink {
  return {
    write(chunk) {
      return new Promise((resolve, reject) => {
        const ok = stream.write(chunk, (err) => {
          if (err) reject(err);
        });
        if (ok) resolve();
        else stream.once("drain", () => resolve());
      });
    },
  };
}
