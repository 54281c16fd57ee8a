// Owns what a trace's records mean as a diagram's steps: an incoming record paired with the routed copy
// that follows it (one arrow, hop → hop), the method a person cares about (a successor wrapper's inner
// one), the session, and for an answer its request's method, session and how long it took. Batches
// (arrays) are one step. Pure over records; reading files is trace-follow.ts's, drawing trace-view.ts's.
import { unwrapSuccessor } from "./dialect.ts";
import { summarize } from "./trace-print.ts";
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
  /** For an answer: ms since its request. */
  took?: number;
  summary: string;
  /** The message as read (or as written, for a step the conductor started). */
  message: unknown;
  /** The copy the conductor wrote to the next hop, when this step was routed. */
  routed?: unknown;
}

const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object" && !Array.isArray(v);

function innerOf(m: Record<string, any>): { method: string; params: any } | undefined {
  if (typeof m.method !== "string") return undefined;
  const inner = unwrapSuccessor(m.method, m.params);
  return inner ? { method: inner.inner.method, params: inner.inner.params } : { method: m.method, params: m.params };
}

function sessionIn(m: Record<string, any>): string | undefined {
  const p = innerOf(m)?.params;
  if (isObj(p) && typeof p.sessionId === "string") return p.sessionId;
  return isObj(m.result) && typeof m.result.sessionId === "string" ? m.result.sessionId : undefined;
}

function rewrittenAs(inMethod: unknown, outMethod: unknown): string | undefined {
  if (typeof inMethod !== "string" || typeof outMethod !== "string" || inMethod === outMethod) return undefined;
  return unwrapSuccessor(inMethod, { method: "" }) !== undefined ? `from ${inMethod}` : `as ${outMethod}`;
}

const isAnswer = (m: unknown): boolean => isObj(m) && m.method === undefined && m.id !== undefined;

/**
 * Turns records, pushed in file order, into steps. An incoming record waits for the next one (its routed
 * copy); `flush()` lets it go to the conductor when nothing followed (a live trace that paused).
 */
export class TraceSteps {
  #n = 0;
  #held?: TraceRecord;
  /** Requests in flight by `hop:id` on the hop that answers them. */
  readonly #started = new Map<string, { t: number; method?: string; session?: string }>();

  push(r: TraceRecord): TraceStep[] {
    const held = this.#held;
    this.#held = undefined;
    if (held && r.dir === "out" && r.hop !== held.hop) {
      return [this.#step(held.t, held.hop, r.hop, held.message, r.message, rewrittenAs(held.message?.method, r.message?.method))];
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

  #step(t: number, from: Lane, to: Lane, message: any, routed?: any, as?: string): TraceStep {
    const s: TraceStep = { n: this.#n++, t, from, to, kind: "note", summary: "", message };
    if (routed !== undefined) s.routed = routed;
    if (as) s.as = as;
    if (Array.isArray(message)) return this.#batch(s, message);
    if (!isObj(message)) return s;
    s.summary = summarize(message);
    if (message.id !== undefined && (typeof message.id === "string" || typeof message.id === "number")) s.id = message.id;
    if (isAnswer(message)) {
      s.kind = message.error !== undefined ? "err" : "res";
      // an answer travels back the way its request came: it leaves the hop that was asked
      const key = `${String(from)}:${message.id}`;
      const req = this.#started.get(key);
      if (req) {
        this.#started.delete(key);
        if (req.method) s.method = req.method;
        s.took = Math.round((t - req.t) * 1000) / 1000;
      }
      const session = req?.session ?? sessionIn(message);
      if (session) s.session = session;
      return s;
    }
    const inner = innerOf(message);
    if (inner) s.method = inner.method;
    const session = sessionIn(message);
    if (session) s.session = session;
    if (message.id !== undefined) {
      s.kind = "req";
      // the routed copy is answered on the target hop, under the id it got there
      if (to !== "conductor") this.#started.set(`${String(to)}:${isObj(routed) && routed.id !== undefined ? routed.id : message.id}`, { t, method: s.method, session: s.session });
    }
    return s;
  }

  #batch(s: TraceStep, entries: unknown[]): TraceStep {
    const methods = [...new Set(entries.flatMap((e) => (isObj(e) ? (innerOf(e)?.method ?? []) : [])))];
    s.method = "batch";
    s.summary = `${entries.length} messages${methods.length > 0 ? `: ${methods.join(", ")}` : ""}`;
    const answers = entries.filter(isAnswer) as Record<string, any>[];
    s.kind = entries.length > 0 && answers.length === entries.length ? (answers.some((a) => a.error !== undefined) ? "err" : "res") : entries.some((e) => isObj(e) && e.id !== undefined) ? "req" : "note";
    const session = entries.map((e) => (isObj(e) ? sessionIn(e) : undefined)).find((x) => x !== undefined);
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
