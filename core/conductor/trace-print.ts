// Owns the readable form of a trace: a sequence diagram with one lane per hop (client, #0, #1, …),
// one arrow per routed message (who → who), its method (the inner one when wrapped), a short summary,
// the time and, for answers, how long the request took. Filters by session and method glob. Streams:
// memory stays bounded by the requests in flight, not the trace's length.
// Does not read files (trace.ts) or decide whether to colour (cli/).
import picomatch from "picomatch";
import { type Params, unwrapSuccessor } from "./dialect.ts";
import { isObject } from "../wire/jsonrpc.ts";
import type { Hop } from "./router.ts";
import type { TraceRecord } from "./trace.ts";
import { stripTerminalControls } from "../terminal-controls.ts";

export interface PrintOptions {
  session?: string;
  method?: string;
  color?: boolean;
  /** The components' short names, by hop (the trace's first line): lanes read `#1 proxy.ts`. */
  components?: string[];
}

const LANE = 12;
const SUMMARY_CHARS = 72;

interface Step {
  t: number;
  from: Hop | "conductor";
  to: Hop | "conductor";
  message: unknown;
  /** How the conductor rewrote it on the way (wrapped, unwrapped, renamed). */
  as?: string;
  /** The routed copy (its id is the one the target hop answers). */
  routed?: unknown;
}

/** How the conductor changed a message's outer method on its way: `as proxy/successor`, `from _proxy/successor`. */
function rewrittenAs(inMethod: unknown, outMethod: unknown): string | undefined {
  if (typeof inMethod !== "string" || typeof outMethod !== "string" || inMethod === outMethod) return undefined;
  if (unwrapSuccessor(inMethod, { method: "" }) !== undefined) return `from ${inMethod}`;
  return `as ${outMethod}`;
}

/** The method a person cares about: the inner one of a successor wrapper. */
function methodOf(m: unknown): string | undefined {
  if (Array.isArray(m)) return `batch of ${m.length}`;
  if (!isObject(m) || typeof m.method !== "string") return undefined;
  return unwrapSuccessor(m.method, m.params as Params)?.inner.method ?? m.method;
}

function paramsOf(m: unknown): unknown {
  if (!isObject(m) || typeof m.method !== "string") return undefined;
  return unwrapSuccessor(m.method, m.params as Params)?.inner.params ?? m.params;
}

/** `o[key]` when `o` is an object, else undefined. */
function field(o: unknown, key: string): unknown {
  return isObject(o) ? o[key] : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function clip(s: string, n = SUMMARY_CHARS): string {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > n ? flat.slice(0, n - 1) + "…" : flat;
}

/** A short, human summary of a message's content. */
export function summarize(m: unknown): string {
  if (!isObject(m)) return "";
  if (m.error !== undefined) return clip(`${String(field(m.error, "code"))} ${String(field(m.error, "message"))}`);
  if (m.result !== undefined) {
    const r = m.result;
    if (str(field(r, "stopReason")) !== undefined) return `stopReason=${field(r, "stopReason")}`;
    if (str(field(r, "sessionId")) !== undefined) return `sessionId=${field(r, "sessionId")}`;
    const outcome = field(r, "outcome");
    if (isObject(outcome)) return clip(`outcome=${String(outcome.optionId ?? outcome.outcome)}`);
    return clip(JSON.stringify(r) ?? "");
  }
  const p = paramsOf(m);
  if (!isObject(p)) return "";
  const u = p.update;
  if (isObject(u)) {
    const ct = str(field(u.content, "text"));
    const text = ct !== undefined ? ` ${JSON.stringify(clip(ct, 48))}` : "";
    const title = typeof u.title === "string" ? ` ${JSON.stringify(clip(u.title, 48))}` : "";
    const status = typeof u.status === "string" ? ` ${u.status}` : "";
    return clip(`${String(u.sessionUpdate)}${text}${title}${status}`);
  }
  if (Array.isArray(p.prompt)) {
    const t: unknown = p.prompt.find((b: unknown) => field(b, "type") === "text");
    return clip(t !== undefined ? JSON.stringify(field(t, "text")) : `${p.prompt.length} blocks`);
  }
  const toolTitle = str(field(p.toolCall, "title"));
  if (toolTitle !== undefined) return clip(`tool ${JSON.stringify(toolTitle)}`);
  if (typeof p.cwd === "string") return clip(`cwd=${p.cwd}`);
  if (p.requestId !== undefined) return `requestId=${String(p.requestId)}`;
  return clip(Object.keys(p).join(","));
}

function sessionOf(m: unknown): string | undefined {
  return str(field(paramsOf(m), "sessionId")) ?? str(field(field(m, "result"), "sessionId"));
}

const PAINT = { req: "\x1b[36m", res: "\x1b[32m", err: "\x1b[31m", note: "\x1b[2m", off: "\x1b[0m" };

/**
 * Prints a trace as it is read: give it the component hops first (the lanes), then push records in
 * file order. An incoming record is held until the next one shows where the conductor routed it.
 */
export class TracePrinter {
  readonly #lanes: (Hop | "conductor")[];
  readonly #width: number;
  readonly #matchMethod?: (method: string) => boolean;
  /** Requests seen, by `hop:id` on the hop that will answer them; removed when answered. */
  readonly #started = new Map<string, { t: number; method?: string; keep: boolean }>();
  #held?: TraceRecord;

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
    const name = (l: Hop | "conductor") => {
      if (typeof l !== "number") return l;
      const given = this.opts.components?.[l];
      return (given ? `#${l} ${given}` : `#${l}`).slice(0, LANE - 1);
    };
    return "     t ms  " + this.#lanes.map((l) => name(l).padEnd(LANE)).join("").trimEnd();
  }

  push(record: TraceRecord): string[] {
    // A trace holds what agents, models and tools sent: no escape sequence of theirs reaches a terminal.
    const r = { ...record, message: withoutControls(record.message) };
    const out: string[] = [];
    const held = this.#held;
    this.#held = undefined;
    if (held && r.dir === "out" && r.hop !== held.hop) {
      const as = rewrittenAs(field(held.message, "method"), field(r.message, "method"));
      this.#step({ t: held.t, from: held.hop, to: r.hop, message: held.message, as, routed: r.message }, out);
      return out;
    }
    if (held) this.#step({ t: held.t, from: held.hop, to: "conductor", message: held.message }, out);
    if (r.dir === "in") this.#held = r;
    else this.#step({ t: r.t, from: "conductor", to: r.hop, message: r.message }, out);
    return out;
  }

  end(): string[] {
    const out: string[] = [];
    if (this.#held) this.#step({ t: this.#held.t, from: this.#held.hop, to: "conductor", message: this.#held.message }, out);
    this.#held = undefined;
    return out;
  }

  #step(s: Step, out: string[]): void {
    const m = s.message;
    const id = field(m, "id");
    const isResponse = isObject(m) && m.method === undefined && id !== undefined;
    let method = methodOf(m);
    let took = "";
    let keep = true;
    if (isResponse) {
      // An answer travels back the way its request came: key it by the hop it now leaves from.
      const key = `${s.from}:${String(id)}`;
      const req = this.#started.get(key);
      if (req) {
        this.#started.delete(key);
        method = req.method;
        keep = req.keep;
        took = `  (${(s.t - req.t).toFixed(2)} ms)`;
      }
    } else {
      const o = this.opts;
      keep = (!o.session || sessionOf(m) === o.session) && (!this.#matchMethod || (method !== undefined && this.#matchMethod(method)));
      // the routed copy is answered on the target hop; remember it under the id it got there
      if (id !== undefined && s.to !== "conductor") this.#started.set(`${s.to}:${String(field(s.routed, "id") ?? id)}`, { t: s.t, method, keep });
    }
    if (!keep) return;
    const failed = field(m, "error") !== undefined;
    const kind = isResponse ? (failed ? "err" : "res") : id !== undefined ? "req" : "note";
    const label = isResponse ? `${failed ? "✗" : "↩"} ${method ?? "?"}` : `${method ?? "?"}${id !== undefined ? ` #${String(id)}` : ""}`;
    const as = s.as ? ` [${s.as}]` : "";
    const col = (h: Hop | "conductor") => this.#lanes.indexOf(h) * LANE;
    const arrow = drawArrow(col(s.from), col(s.to), this.#width, this.#lanes.map(col));
    const text = `${s.t.toFixed(2).padStart(9)}  ${arrow}  ${label}${as}  ${summarize(m)}${took}`.trimEnd();
    out.push(this.opts.color ? `${PAINT[kind]}${text}${PAINT.off}` : text);
  }
}

/** The whole diagram of records in memory (tests, small traces). */
export function printTrace(records: TraceRecord[], opts: PrintOptions = {}): string {
  const hops = [...new Set(records.map((r) => r.hop).filter((h): h is number => typeof h === "number"))];
  const p = new TracePrinter(hops, opts);
  const lines = [p.header(), ...records.flatMap((r) => p.push(r)), ...p.end()];
  return lines.join("\n") + "\n";
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
