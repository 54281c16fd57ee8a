// Owns one hop of a chain as a JSON-RPC message pipe: bytes in through the bounded line reader and the
// classifier, one callback per message (or per batch, for a user that takes batches) in arrival order
// (synchronously, so the router keeps order), messages out through the one serialized writer — one at a
// time, or corked into one batch line — and the trace hook on both directions.
// Does not route or interpret methods (router.ts) and does not own processes (components.ts).
import { logFailure } from "../log.ts";
import { readLineBatches } from "./ndjson.ts";
import { type Classified, classifyBatchLine, classifyLine, type JsonRpcError } from "./jsonrpc.ts";
import { type ByteSink, LineWriter } from "./writer.ts";

const ENCODER = new TextEncoder();

export type WellFormed = Exclude<Classified, { kind: "malformed" }>;

export type LinkEnd =
  | { reason: "eof" }
  | { reason: "oversize"; bytes: number }
  | { reason: "garbage"; line: string; error: JsonRpcError }
  | { reason: "error"; error: unknown }
  /** The peer stopped reading: more than `maxQueuedBytes` wait to be written to it. */
  | { reason: "stalled"; bytes: number };

/** What ended a link, as a phrase about the peer: `closed its output`, `stopped reading its input (…)`. */
export function describeEnd(end: LinkEnd): string {
  switch (end.reason) {
    case "eof":
      return "closed its output";
    case "oversize":
      return `wrote a line over MAX_LINE_BYTES (${end.bytes} bytes or more)`;
    case "garbage":
      return `wrote a malformed line (${end.error.message}): ${JSON.stringify(end.line.slice(0, 120))}`;
    case "error":
      return `could not be read: ${end.error instanceof Error ? end.error.message : String(end.error)}`;
    case "stalled":
      return `stopped reading its input (${end.bytes} bytes waiting, over MAX_HOP_QUEUE_BYTES)`;
  }
}

export interface LinkOptions {
  input: AsyncIterable<Uint8Array>;
  sink: ByteSink;
  maxLineBytes: number;
  /** Called once per well-formed message (and its line), in order, before the next line is read. */
  onMessage: (message: WellFormed, line: string) => void;
  /** A batch (a non-empty JSON array), its entries classified one by one. Without it a batch is a
   *  malformed line (-32600), as for a peer that takes no batches; an empty array always is. */
  onBatch?: (entries: Classified[], line: string) => void;
  /** A malformed line: answer it and go on (true), or end the link with `garbage` (false, the default). */
  onMalformed?: (bad: Extract<Classified, { kind: "malformed" }>, line: string) => boolean;
  /** Sees every message read ("in") and written ("out"). */
  trace?: (dir: "in" | "out", message: unknown) => void;
  /** Bytes that may wait for the peer to read them before the link ends as `stalled`. */
  maxQueuedBytes?: number;
}

export class Link {
  readonly ended: Promise<LinkEnd>;
  readonly #writer: LineWriter;
  readonly #trace?: LinkOptions["trace"];
  #writeFailed = false;
  #queued = 0;
  readonly #maxQueued: number;
  #stalled!: (end: LinkEnd) => void;

  constructor(opts: LinkOptions) {
    this.#writer = new LineWriter(opts.sink);
    this.#trace = opts.trace;
    this.#maxQueued = opts.maxQueuedBytes ?? Infinity;
    this.ended = Promise.race([pump(opts), new Promise<LinkEnd>((resolve) => (this.#stalled = resolve))]);
  }

  /**
   * Queues one message; `line` is its exact serialized form when the caller already has it (a
   * message relayed unchanged is not serialized again). Messages queued in one turn of the event
   * loop leave in one write (a burst of forwarded updates costs one syscall, not one each). Write
   * failures surface as the peer's end (its reader sees EOF), not here.
   */
  send(message: Record<string, unknown>, line?: string): void {
    if (this.#corks > 0) {
      this.#corked.push(message);
      this.#corkedLines.push(line ?? JSON.stringify(message));
      return;
    }
    this.#trace?.("out", message);
    this.#queue(line ?? JSON.stringify(message));
  }

  /** Queues `messages` as one JSON-RPC batch line (whatever is corked stays corked). */
  sendBatch(messages: Record<string, unknown>[], lines?: string[]): void {
    if (messages.length === 0) return;
    this.#trace?.("out", messages);
    this.#queue(`[${(lines ?? messages.map((m) => JSON.stringify(m))).join(",")}]`);
  }

  /** Until the matching uncork(), messages sent are held and then leave as one batch line. */
  cork(): void {
    this.#corks++;
  }

  uncork(): void {
    if (--this.#corks > 0 || this.#corked.length === 0) return;
    const [messages, lines] = [this.#corked, this.#corkedLines];
    this.#corked = [];
    this.#corkedLines = [];
    this.sendBatch(messages, lines);
  }

  #corks = 0;
  #corked: Record<string, unknown>[] = [];
  #corkedLines: string[] = [];

  #queue(line: string): void {
    if (this.#writeFailed) return;
    if (this.#batch === "") process.nextTick(this.#flushBatch);
    this.#batch += line + "\n";
  }

  /** Resolves when everything queued so far is written (or the sink failed). */
  async flush(): Promise<void> {
    this.#flushBatch();
    await this.#writer.flush().catch(logFailure("flushing a connection"));
  }

  #batch = "";
  readonly #flushBatch = (): void => {
    if (this.#batch === "") return;
    // The bound is in bytes: count the UTF-8 the writer sends (encoded here once), not UTF-16 units.
    const bytes = ENCODER.encode(this.#batch);
    this.#batch = "";
    this.#queued += bytes.length;
    if (this.#queued > this.#maxQueued) this.#stalled({ reason: "stalled", bytes: this.#queued });
    this.#writer.sendLines(bytes).then(
      () => void (this.#queued -= bytes.length),
      () => void (this.#writeFailed = true),
    );
  };
}

async function pump(opts: LinkOptions): Promise<LinkEnd> {
  try {
    for await (const batch of readLineBatches(opts.input, opts.maxLineBytes)) {
      for (const event of batch) {
        if (event.type === "oversize") return { reason: "oversize", bytes: event.bytes };
        const c = opts.onBatch !== undefined ? classifyBatchLine(event.text) : classifyLine(event.text);
        if (Array.isArray(c)) {
          opts.trace?.("in", c.map((e) => (e.kind === "malformed" ? { malformed: e.error.message } : e.message)));
          opts.onBatch!(c, event.text);
          continue;
        }
        if (c.kind === "malformed") {
          opts.trace?.("in", { malformed: event.text.slice(0, 200) });
          if (opts.onMalformed?.(c, event.text)) continue;
          return { reason: "garbage", line: event.text, error: c.error };
        }
        opts.trace?.("in", c.message);
        opts.onMessage(c, event.text);
      }
    }
    return { reason: "eof" };
  } catch (error) {
    return { reason: "error", error };
  }
}

/**
 * A Node readable as an async iterable of chunks, driven by `data` events: cheaper per chunk than the
 * stream's own async iterator (which matters for a relay's latency); pauses the stream while
 * `highWater` chunks wait unread.
 */
export function chunksOf(stream: NodeJS.ReadableStream, highWater = 64): AsyncIterable<Uint8Array> {
  const queue: Uint8Array[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  let failure: unknown;
  stream.on("data", (chunk: Uint8Array) => {
    queue.push(chunk);
    if (queue.length >= highWater) stream.pause();
    wake?.();
  });
  stream.on("end", () => ((done = true), wake?.()));
  stream.on("error", (err) => ((failure = err), (done = true), wake?.()));
  return {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (queue.length > 0) {
          const chunk = queue.shift()!;
          if (queue.length === highWater - 1) stream.resume();
          yield chunk;
        }
        if (failure !== undefined) throw failure;
        if (done) return;
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
      }
    },
  };
}
