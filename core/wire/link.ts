// Owns one hop of a chain as a JSON-RPC message pipe: bytes in through the bounded line reader and the
// classifier (or objects from an in-memory message pipe, classified the same way), one callback per
// message (or per batch, for a user that takes batches) in arrival order (synchronously, so the router
// keeps order), messages out through the one serialized writer — one at a time, or corked into one
// batch line — and the trace hook on both directions.
// Does not route or interpret methods (router.ts) and does not own processes (components.ts).
import { logFailure } from "../log.ts";
import { readLineBatches } from "./ndjson.ts";
import { type Classified, classifyBatchLine, classifyBatchValue, classifyLine, classifyMessage, classifyRelayedNotification, type JsonRpcError } from "./jsonrpc.ts";
import type { MessageEnd, Posted } from "./message-pipe.ts";
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

/** A hop's bytes: lines read from `input`, lines written to `sink` (stdio, a socket, a byte pipe). */
export interface ByteIo {
  input: AsyncIterable<Uint8Array>;
  sink: ByteSink;
}

/** A hop inside this process: messages handed over as objects (message-pipe.ts). */
export interface PortIo {
  port: MessageEnd;
}

export type LinkIo = ByteIo | PortIo;

export type LinkOptions = LinkIo & {
  maxLineBytes: number;
  /** Called once per well-formed message, in order, before the next is read; with its line as read
   *  (undefined for a message that came as an object). */
  onMessage: (message: WellFormed, line: string | undefined) => void;
  /** A batch (a non-empty JSON array), its entries classified one by one. Without it a batch is a
   *  malformed line (-32600), as for a peer that takes no batches; an empty array always is. */
  onBatch?: (entries: Classified[], line: string | undefined) => void;
  /** A malformed line: answer it and go on (true), or end the link with `garbage` (false, the default). */
  onMalformed?: (bad: Extract<Classified, { kind: "malformed" }>, line: string) => boolean;
  /** A relay's link: a notification spelled as JSON.stringify spells one is checked as JSON, not parsed,
   *  and its params are parsed when first read (jsonrpc.ts classifyRelayedNotification). */
  relay?: boolean;
  /** Sees every message read ("in") and written ("out"). */
  trace?: (dir: "in" | "out", message: unknown) => void;
  /** Bytes that may wait for the peer to read them before the link ends as `stalled` (on a message
   *  pipe: messages posted before the other end listens, at their serialized size). */
  maxQueuedBytes?: number;
};

export class Link {
  readonly ended: Promise<LinkEnd>;
  /** The byte writer; undefined on a message pipe (#port). */
  readonly #writer?: LineWriter;
  readonly #trace?: LinkOptions["trace"];
  #writeFailed = false;
  #queued = 0;
  readonly #maxQueued: number;
  #stalled!: (end: LinkEnd) => void;

  /** The other end of an in-memory message pipe, instead of a byte writer. */
  readonly #port?: MessageEnd;

  constructor(opts: LinkOptions) {
    this.#trace = opts.trace;
    this.#maxQueued = opts.maxQueuedBytes ?? Infinity;
    const stalled = new Promise<LinkEnd>((resolve) => (this.#stalled = resolve));
    if ("port" in opts) {
      this.#port = opts.port;
      this.ended = Promise.race([listen(opts, opts.port), stalled]);
    } else {
      this.#writer = new LineWriter(opts.sink);
      this.ended = Promise.race([pump(opts, opts.input), stalled]);
    }
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
      if (!this.#port) this.#corkedLines.push(line ?? JSON.stringify(message));
      return;
    }
    this.#trace?.("out", message);
    if (this.#port) this.#post(message);
    else this.#queue(line ?? JSON.stringify(message));
  }

  /** Queues `messages` as one JSON-RPC batch line (whatever is corked stays corked). */
  sendBatch(messages: Record<string, unknown>[], lines?: string[]): void {
    if (messages.length === 0) return;
    this.#trace?.("out", messages);
    if (this.#port) this.#post(messages);
    else this.#queue(`[${(lines ?? messages.map((m) => JSON.stringify(m))).join(",")}]`);
  }

  /** Hands `item` to the other end; what waits for an end that never listens counts against the bound. */
  #post(item: Posted): void {
    if (this.#port!.post(item)) {
      this.#queued = 0;
      return;
    }
    this.#queued += Buffer.byteLength(JSON.stringify(item)) + 1;
    if (this.#queued > this.#maxQueued) this.#stalled({ reason: "stalled", bytes: this.#queued });
  }

  /** Until the matching uncork(), messages sent are held and then leave as one batch line. */
  cork(): void {
    this.#corks++;
  }

  /** `loneUnbatched`: one held message leaves as itself, not as a batch of one (a relay's choice: the
   *  peer may take no batches, and one message needs none). */
  uncork(loneUnbatched = false): void {
    if (--this.#corks > 0 || this.#corked.length === 0) return;
    const [messages, lines] = [this.#corked, this.#corkedLines];
    this.#corked = [];
    this.#corkedLines = [];
    if (loneUnbatched && messages.length === 1) this.send(messages[0]!, lines[0]);
    else this.sendBatch(messages, lines);
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
    if (!this.#writer) return;
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
    this.#writer!.sendLines(bytes).then(
      () => void (this.#queued -= bytes.length),
      () => void (this.#writeFailed = true),
    );
  };
}

async function pump(opts: LinkOptions, input: AsyncIterable<Uint8Array>): Promise<LinkEnd> {
  try {
    for await (const batch of readLineBatches(input, opts.maxLineBytes)) {
      for (const event of batch) {
        if (event.type === "oversize") return { reason: "oversize", bytes: event.bytes };
        const text = event.text;
        const c = (opts.relay && classifyRelayedNotification(text)) || (opts.onBatch !== undefined ? classifyBatchLine(text) : classifyLine(text));
        const end = take(opts, c, text);
        if (end) return end;
      }
    }
    return { reason: "eof" };
  } catch (error) {
    return { reason: "error", error };
  }
}

/** The messages of a message pipe end, taken as pump() takes lines (without a line's text). */
function listen(opts: LinkOptions, port: MessageEnd): Promise<LinkEnd> {
  return new Promise((resolve) => {
    let over = false;
    const finish = (end: LinkEnd) => void (over || ((over = true), resolve(end)));
    port.listen(
      (item) => {
        if (over) return;
        try {
          const end = take(opts, opts.onBatch !== undefined ? classifyBatchValue(item) : classifyMessage(item), undefined, item);
          if (end) finish(end);
        } catch (error) {
          finish({ reason: "error", error });
        }
      },
      () => finish({ reason: "eof" }),
    );
  });
}

/** One classified line or posted item to its callback; the link's end when it ends the link. */
function take(opts: LinkOptions, c: Classified | Classified[], line: string | undefined, item?: Posted): LinkEnd | undefined {
  if (Array.isArray(c)) {
    opts.trace?.("in", c.map((e) => (e.kind === "malformed" ? { malformed: e.error.message } : e.message)));
    opts.onBatch!(c, line);
    return undefined;
  }
  if (c.kind === "malformed") {
    const text = line ?? JSON.stringify(item) ?? String(item);
    opts.trace?.("in", { malformed: text.slice(0, 200) });
    if (opts.onMalformed?.(c, text)) return undefined;
    return { reason: "garbage", line: text, error: c.error };
  }
  opts.trace?.("in", c.message);
  opts.onMessage(c, line);
  return undefined;
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
