// Owns the readable form of a trace: a sequence diagram with one lane per hop (client, #0, #1, …),
// one arrow per step (who → who; pairing and summaries are trace-steps.ts's), its method, a short
// summary, the time and, for answers, how long the request took; filters by session and method glob,
// an answer shown when its request is. Streams: memory stays bounded by the requests in flight.
// Does not read files (trace.ts) or decide whether to colour (cli/).
import picomatch from "picomatch";
import { isObject } from "../wire/jsonrpc.ts";
import type { Hop } from "./router.ts";
import type { TraceRecord } from "./trace.ts";
import { type Lane, type TraceStep, TraceSteps } from "./trace-steps.ts";
import { stripTerminalControls } from "../terminal-controls.ts";

export interface PrintOptions {
  session?: string;
  method?: string;
  color?: boolean;
  /** The components' short names, by hop (the trace's first line): lanes read `#1 proxy.ts`. */
  components?: string[];
}

const LANE = 12;

const PAINT = { req: "\x1b[36m", res: "\x1b[32m", err: "\x1b[31m", note: "\x1b[2m", off: "\x1b[0m" };

/**
 * Prints a trace as it is read: give it the component hops first (the lanes), then push records in
 * file order; `end()` prints an incoming record nothing routed.
 */
export class TracePrinter {
  readonly #lanes: Lane[];
  readonly #width: number;
  readonly #matchMethod?: (method: string) => boolean;
  readonly #steps = new TraceSteps();
  /** Requests routed to a hop, by step `n`: when, and whether shown (their answer follows them); removed when answered. */
  readonly #asked = new Map<number, { t: number; keep: boolean }>();

  constructor(
    hops: number[],
    private opts: PrintOptions = {},
  ) {
    this.#lanes = ["client", "conductor", ...[...hops].sort((a, b) => a - b)];
    if (opts.components) this.opts = { ...opts, components: opts.components.map((c) => withoutControls(c)) };
    this.#width = (this.#lanes.length - 1) * LANE + 1;
    this.#matchMethod = opts.method ? picomatch(opts.method) : undefined;
  }

  header(): string {
    const name = (l: Lane) => {
      if (typeof l !== "number") return l;
      const given = this.opts.components?.[l];
      return (given ? `#${l} ${given}` : `#${l}`).slice(0, LANE - 1);
    };
    return "     t ms  " + this.#lanes.map((l) => name(l).padEnd(LANE)).join("").trimEnd();
  }

  push(record: TraceRecord): string[] {
    // A trace holds what agents, models and tools sent: no escape sequence of theirs reaches a terminal.
    return this.#lines(this.#steps.push({ ...record, message: withoutControls(record.message) }));
  }

  end(): string[] {
    return this.#lines(this.#steps.flush());
  }

  #lines(steps: TraceStep[]): string[] {
    const out: string[] = [];
    for (const s of steps) {
      const line = this.#line(s);
      if (line !== undefined) out.push(line);
    }
    return out;
  }

  /** The step's line, or undefined when the filters hide it. */
  #line(s: TraceStep): string | undefined {
    const m = s.message;
    const batch = Array.isArray(m);
    // a batch is labelled by its size and matched by that label; it names no session
    const method = batch ? `batch of ${m.length}` : s.method;
    const isAnswer = s.kind === "res" || s.kind === "err";
    let took = "";
    let keep = true;
    if (isAnswer && !batch) {
      const asked = s.request === undefined ? undefined : this.#asked.get(s.request);
      if (asked) {
        this.#asked.delete(s.request!);
        keep = asked.keep;
        took = `  (${(s.t - asked.t).toFixed(2)} ms)`;
      }
    } else {
      const o = this.opts;
      const session = batch ? undefined : s.session;
      keep = (!o.session || session === o.session) && (!this.#matchMethod || (method !== undefined && this.#matchMethod(method)));
      if (s.kind === "req" && !batch && s.to !== "conductor") this.#asked.set(s.n, { t: s.t, keep });
    }
    if (!keep) return undefined;
    const id = batch ? undefined : field(m, "id");
    const kind = batch ? "note" : s.kind;
    const label = isAnswer && !batch ? `${kind === "err" ? "✗" : "↩"} ${method ?? "?"}` : `${method ?? "?"}${id !== undefined ? ` #${String(id)}` : ""}`;
    const as = s.as ? ` [${s.as}]` : "";
    const col = (h: Lane) => this.#lanes.indexOf(h) * LANE;
    const arrow = drawArrow(col(s.from), col(s.to), this.#width, this.#lanes.map(col));
    const text = `${s.t.toFixed(2).padStart(9)}  ${arrow}  ${label}${as}  ${batch ? "" : s.summary}${took}`.trimEnd();
    return this.opts.color ? `${PAINT[kind]}${text}${PAINT.off}` : text;
  }
}

/** The whole diagram of records in memory (tests, small traces). */
export function printTrace(records: TraceRecord[], opts: PrintOptions = {}): string {
  const hops = [...new Set(records.map((r) => r.hop).filter((h): h is number => typeof h === "number"))];
  const p = new TracePrinter(hops, opts);
  const lines = [p.header(), ...records.flatMap((r) => p.push(r)), ...p.end()];
  return lines.join("\n") + "\n";
}

function field(o: unknown, key: string): unknown {
  return isObject(o) ? o[key] : undefined;
}

function drawArrow(from: number, to: number, width: number, laneCols: number[]): string {
  const row: string[] = Array.from({ length: width }, (_, i) => (laneCols.includes(i) ? "│" : " "));
  const [lo, hi] = from < to ? [from, to] : [to, from];
  for (let i = lo; i <= hi; i++) row[i] = "─";
  row[from] = "●";
  row[to] = from < to ? "▶" : "◀";
  return row.join("");
}

/** Every string in `value` (keys included) without terminal controls; numbers and the rest as they are. */
function withoutControls<T>(value: T): T {
  if (typeof value === "string") return stripTerminalControls(value) as T;
  if (Array.isArray(value)) return value.map((v) => withoutControls(v)) as T;
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [stripTerminalControls(k), withoutControls(v)])) as T;
  return value;
}
