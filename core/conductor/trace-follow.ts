// Owns reading a trace file strictly, whole or while it grows: lines are split on bytes (a partial last
// line waits for its newline), each line is the components line, a record, or an error naming its
// number; a line over the bound is refused; a file cut back or replaced (a new run) starts over.
// The record format is trace.ts's; what the records mean (arrows, answers) is trace-steps.ts's.
import { closeSync, createReadStream, fstatSync, openSync, readSync, statSync } from "node:fs";
import { formatBytes } from "../text-bounds.ts";
import type { TraceRecord } from "./trace.ts";
import { isObject } from "../wire/jsonrpc.ts";

export type TraceLine = { kind: "meta"; components: string[] } | { kind: "record"; record: TraceRecord };

/** A line that is not part of a trace, with its 1-based number. */
export class TraceLineError extends Error {
  override name = "TraceLineError";
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line} ${message}`);
  }
}

const SHOWN_CHARS = 60;
/** Hops a trace may name: a lane each in the page, so a garbage `hop: 1e9` must not ask for a billion. */
const MAX_HOPS = 1024;

function shown(text: string): string {
  const flat = text.trim();
  return JSON.stringify(flat.length > SHOWN_CHARS ? flat.slice(0, SHOWN_CHARS - 1) + "…" : flat);
}

/** One line of a trace: undefined for a blank line; throws TraceLineError for anything else that is not one. */
export function parseTraceLine(text: string, line: number): TraceLine | undefined {
  if (text.trim() === "") return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new TraceLineError(line, `is not JSON: ${shown(text)}`);
  }
  if (isObject(v)) {
    if ("t" in v || "hop" in v || "dir" in v) {
      const { t, hop, dir } = v;
      const lane = hop === "client" || (typeof hop === "number" && Number.isInteger(hop) && hop >= 0 && hop < MAX_HOPS);
      if (typeof t === "number" && (dir === "in" || dir === "out") && lane && "message" in v) return { kind: "record", record: { t, hop, dir, message: v.message } };
    } else if (Array.isArray(v.components) && v.components.length <= MAX_HOPS && v.components.every((c: unknown) => typeof c === "string")) {
      return { kind: "meta", components: v.components as string[] };
    }
  }
  throw new TraceLineError(line, `is not a trace record ({"t", "hop", "dir", "message"}): ${shown(text)}`);
}

export type SplitLine = { line: number; text: string; error?: undefined } | { line: number; error: TraceLineError };

/** Splits bytes into numbered lines; keeps an unfinished last line until its newline comes. */
export class LineSplitter {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #line = 0;
  /** Skipping the rest of a line that went over the bound. */
  #skipping = false;

  constructor(private readonly maxLineBytes: number) {}

  /** The complete lines in `chunk` (with what came before it), in order; a line over the bound is an error in its place. */
  feed(chunk: Buffer): SplitLine[] {
    const out: SplitLine[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!this.#skipping) {
        if (this.#pendingBytes + (end - start) > this.maxLineBytes) {
          this.#skipping = true;
          this.#pending = [];
          this.#pendingBytes = 0;
          out.push({ line: this.#line + 1, error: new TraceLineError(this.#line + 1, `is longer than ${formatBytes(this.maxLineBytes)} (MAX_TRACE_LINE_BYTES)`) });
        } else if (nl !== -1 && this.#pendingBytes === 0) {
          // the common case, a whole line inside this chunk: decoded straight from it
          this.#line++;
          out.push({ line: this.#line, text: withoutCr(chunk.toString("utf8", start, end)) });
          start = nl + 1;
          continue;
        } else if (end > start) {
          // copied: the caller may reuse `chunk` for its next read
          this.#pending.push(Buffer.from(chunk.subarray(start, end)));
          this.#pendingBytes += end - start;
        }
      }
      if (nl === -1) return out;
      this.#line++;
      if (!this.#skipping) out.push({ line: this.#line, text: this.#take() });
      this.#skipping = false;
      start = nl + 1;
    }
  }

  /** The unfinished last line, if any (the file ended without a newline). */
  rest(): { line: number; text: string } | undefined {
    if (this.#pendingBytes === 0) return undefined;
    return { line: this.#line + 1, text: this.#take() };
  }

  #take(): string {
    const text = Buffer.concat(this.#pending, this.#pendingBytes).toString("utf8");
    this.#pending = [];
    this.#pendingBytes = 0;
    return withoutCr(text);
  }
}

function withoutCr(text: string): string {
  return text.endsWith("\r") ? text.slice(0, -1) : text;
}

export interface WholeTrace {
  components?: string[];
  records: TraceRecord[];
  /** The number of a last line without its newline that is not a record (a run cut off mid-write): skipped. */
  cutShort?: number;
}

/** Reads a whole trace file strictly; throws TraceLineError naming the first line that is not part of a trace. */
export async function readWholeTrace(path: string, maxLineBytes: number): Promise<WholeTrace> {
  statSync(path); // a missing file fails here with its own clear error, before any stream is opened
  const out: WholeTrace = { records: [] };
  const splitter = new LineSplitter(maxLineBytes);
  const take = (l: SplitLine) => {
    if (l.error) throw l.error;
    const parsed = parseTraceLine(l.text, l.line);
    if (parsed?.kind === "record") out.records.push(parsed.record);
    else if (parsed?.kind === "meta") out.components = parsed.components;
  };
  for await (const chunk of createReadStream(path)) for (const l of splitter.feed(chunk as Buffer)) take(l);
  const rest = splitter.rest();
  if (rest) {
    try {
      take(rest);
    } catch {
      out.cutShort = rest.line;
    }
  }
  return out;
}

export interface FollowHandlers {
  /** What the new complete lines say, in file order (called once per poll that found some). */
  lines(parsed: TraceLine[]): void;
  /** A line that is not part of a trace; following goes on. */
  problem(err: TraceLineError): void;
  /** The file was cut back or replaced: everything said so far is void, lines start again from the top. */
  reset(): void;
  /** A poll found nothing new (callers flush what waits for a next line). */
  idle(): void;
}

/**
 * Follows a growing trace file by polling every `pollMs`: reads what was appended since the last poll,
 * hands over the complete lines, keeps an unfinished one. Stops with `stop()`.
 */
export class TraceFollower {
  #offset = 0;
  #ino = -1;
  #splitter: LineSplitter;
  #timer?: ReturnType<typeof setTimeout>;
  #stopped = false;
  readonly #buf: Buffer;

  constructor(
    private readonly path: string,
    private readonly opts: { pollMs: number; maxLineBytes: number },
    private readonly on: FollowHandlers,
  ) {
    this.#splitter = new LineSplitter(opts.maxLineBytes);
    this.#buf = Buffer.allocUnsafe(256 * 1024);
  }

  start(): void {
    this.#poll();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
  }

  #poll(): void {
    if (this.#stopped) return;
    let grew = false;
    try {
      grew = this.#readNew();
    } catch {
      // the file is gone for now (being replaced): look again at the next poll
    }
    if (!grew) this.on.idle();
    this.#timer = setTimeout(() => this.#poll(), this.opts.pollMs);
  }

  /** Reads what was appended; true when there was something. */
  #readNew(): boolean {
    const fd = openSync(this.path, "r");
    try {
      const st = fstatSync(fd);
      if ((this.#ino !== -1 && st.ino !== this.#ino) || st.size < this.#offset) {
        this.#offset = 0;
        this.#splitter = new LineSplitter(this.opts.maxLineBytes);
        this.on.reset();
      }
      this.#ino = st.ino;
      let grew = false;
      while (this.#offset < st.size && !this.#stopped) {
        const n = readSync(fd, this.#buf, 0, this.#buf.length, this.#offset);
        if (n <= 0) break;
        this.#offset += n;
        grew = true;
        // lines and problems are told in file order
        let parsed: TraceLine[] = [];
        const tell = (err: TraceLineError) => {
          if (parsed.length > 0) this.on.lines(parsed);
          parsed = [];
          this.on.problem(err);
        };
        for (const l of this.#splitter.feed(this.#buf.subarray(0, n))) {
          if (l.error) {
            tell(l.error);
            continue;
          }
          try {
            const p = parseTraceLine(l.text, l.line);
            if (p) parsed.push(p);
          } catch (err) {
            tell(err as TraceLineError);
          }
        }
        if (parsed.length > 0) this.on.lines(parsed);
      }
      return grew;
    } finally {
      closeSync(fd);
    }
  }
}
