// Owns reading a trace's records as steps, for the text diagram (trace-print.ts) and the page
// (trace-view.ts) alike: an incoming record paired with the routed copy that follows it (one arrow,
// hop → hop), the method a person cares about (a successor wrapper's inner one), the session, a short
// summary, and for an answer its request (which step, its method, session, how long it took). Batches
// (arrays) are one step. Pure over records; reading files is trace-follow.ts's, drawing the callers'.
import { type Params, unwrapSuccessor } from "./dialect.ts";
import { isObject } from "../wire/jsonrpc.ts";
import type { Hop } from "./router.ts";
import type { TraceRecord } from "./trace.ts";

export type Lane = Hop | "conductor";

export interface TraceStep {
  /** Position in the trace, from 0. */
  n: number;
  t: number;
  from: Lane;
  to: Lane;
  kind: "req" | "res" | "err" | "note";
  method?: string;
  id?: string | number;
  session?: string;
  /** How the conductor rewrote the outer method on the way (`as proxy/successor`, `from _proxy/successor`). */
  as?: string;
  /** For an answer: the step `n` of the request it answers. */
  request?: number;
  /** For an answer: ms since its request (to the µs). */
  took?: number;
  summary: string;
  /** The message as read (or as written, for a step the conductor started). */
  message: unknown;
  /** The copy the conductor wrote to the next hop, when this step was routed. */
  routed?: unknown;
}

const SUMMARY_CHARS = 72;

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

/** The method and params a person cares about: the inner ones of a successor wrapper. */
function innerOf(m: unknown): { method: string; params: unknown } | undefined {
  if (!isObject(m) || typeof m.method !== "string") return undefined;
  const inner = unwrapSuccessor(m.method, m.params as Params);
  return inner ? { method: inner.inner.method, params: inner.inner.params } : { method: m.method, params: m.params };
}

/** The session a message names: its (inner) params' `sessionId`, else its result's. */
function sessionIn(m: unknown, inner = innerOf(m)): string | undefined {
  return str(field(inner?.params, "sessionId")) ?? str(field(field(m, "result"), "sessionId"));
}

/** How the conductor changed a message's outer method on its way. */
function rewrittenAs(inMethod: unknown, outMethod: unknown): string | undefined {
  if (typeof inMethod !== "string" || typeof outMethod !== "string" || inMethod === outMethod) return undefined;
  return unwrapSuccessor(inMethod, { method: "" }) !== undefined ? `from ${inMethod}` : `as ${outMethod}`;
}

const isAnswer = (m: unknown): boolean => isObject(m) && m.method === undefined && m.id !== undefined;

/** A v2 `state_update`'s state: ` running`, ` requires_action`, ` idle (end_turn)`, ` idle (error: CODE MESSAGE)`. */
function stateOf(u: Record<string, unknown>): string {
  if (typeof u.state !== "string") return "";
  const stop = str(u.stopReason);
  if (u.state !== "idle" || stop === undefined) return ` ${u.state}`;
  const error = isObject(u.error) ? `: ${String(u.error.code)} ${String(u.error.message)}` : "";
  return ` idle (${stop}${error})`;
}

/** A short, human summary of a message's content. */
export function summarize(m: unknown, inner = innerOf(m)): string {
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
  const p = inner?.params;
  if (!isObject(p)) return "";
  const u = p.update;
  if (isObject(u)) {
    const ct = str(field(u.content, "text"));
    const text = ct !== undefined ? ` ${JSON.stringify(clip(ct, 48))}` : "";
    const title = typeof u.title === "string" ? ` ${JSON.stringify(clip(u.title, 48))}` : "";
    const status = typeof u.status === "string" ? ` ${u.status}` : "";
    return clip(`${String(u.sessionUpdate)}${text}${title}${status}${stateOf(u)}`);
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

/**
 * Turns records, pushed in file order, into steps. An incoming record waits for the next one (its routed
 * copy); `flush()` lets it go to the conductor when nothing followed (the trace's end, or a live trace
 * that paused). Memory stays bounded by the requests in flight, not the trace's length.
 */
export class TraceSteps {
  #n = 0;
  #held?: TraceRecord;
  /** Requests in flight by `hop:id` on the hop that answers them. */
  readonly #started = new Map<string, { n: number; t: number; method?: string; session?: string }>();

  push(r: TraceRecord): TraceStep[] {
    const held = this.#held;
    this.#held = undefined;
    if (held && r.dir === "out" && r.hop !== held.hop) {
      return [this.#step(held.t, held.hop, r.hop, held.message, r.message, rewrittenAs(field(held.message, "method"), field(r.message, "method")))];
    }
    const out = held ? [this.#step(held.t, held.hop, "conductor", held.message)] : [];
    if (r.dir === "in") this.#held = r;
    else out.push(this.#step(r.t, "conductor", r.hop, r.message));
    return out;
  }

  /** The held incoming record as a step to the conductor (nothing routed it yet). */
  flush(): TraceStep[] {
    const held = this.#held;
    this.#held = undefined;
    return held ? [this.#step(held.t, held.hop, "conductor", held.message)] : [];
  }

  #step(t: number, from: Lane, to: Lane, message: unknown, routed?: unknown, as?: string): TraceStep {
    const s: TraceStep = { n: this.#n++, t, from, to, kind: "note", summary: "", message };
    if (routed !== undefined) s.routed = routed;
    if (as) s.as = as;
    if (Array.isArray(message)) return this.#batch(s, message);
    if (!isObject(message)) return s;
    const inner = innerOf(message);
    s.summary = summarize(message, inner);
    if (typeof message.id === "string" || typeof message.id === "number") s.id = message.id;
    if (isAnswer(message)) {
      s.kind = message.error !== undefined ? "err" : "res";
      // an answer travels back the way its request came: it leaves the hop that was asked
      const key = `${String(from)}:${String(message.id)}`;
      const req = this.#started.get(key);
      if (req) {
        this.#started.delete(key);
        if (req.method) s.method = req.method;
        s.request = req.n;
        s.took = Math.round((t - req.t) * 1000) / 1000;
      }
      const session = req?.session ?? sessionIn(message, inner);
      if (session) s.session = session;
      return s;
    }
    if (inner) s.method = inner.method;
    const session = sessionIn(message, inner);
    if (session) s.session = session;
    if (message.id !== undefined) {
      s.kind = "req";
      // the routed copy is answered on the target hop, under the id it got there
      if (to !== "conductor") this.#started.set(`${String(to)}:${String(field(routed, "id") ?? message.id)}`, { n: s.n, t, method: s.method, session: s.session });
    }
    return s;
  }

  #batch(s: TraceStep, entries: unknown[]): TraceStep {
    const methods = [...new Set(entries.flatMap((e) => innerOf(e)?.method ?? []))];
    s.method = "batch";
    s.summary = `${entries.length} messages${methods.length > 0 ? `: ${methods.join(", ")}` : ""}`;
    const answers = entries.filter(isAnswer);
    s.kind = entries.length > 0 && answers.length === entries.length ? (answers.some((a) => field(a, "error") !== undefined) ? "err" : "res") : entries.some((e) => field(e, "id") !== undefined) ? "req" : "note";
    const session = entries.map((e) => sessionIn(e)).find((x) => x !== undefined);
    if (session) s.session = session;
    return s;
  }
}

/** Every step of records in memory (the HTML page, tests). */
export function stepsOf(records: Iterable<TraceRecord>): TraceStep[] {
  const steps = new TraceSteps();
  const out: TraceStep[] = [];
  for (const r of records) for (const s of steps.push(r)) out.push(s);
  for (const s of steps.flush()) out.push(s);
  return out;
}
