// Owns the readable form of a trace: a sequence diagram with one lane per hop (client, #0, #1, …),
// one arrow per routed message (who → who), its method (the inner one when wrapped), a short summary,
// the time and, for answers, how long the request took. Filters by session and method glob.
// Does not read files (trace.ts) or decide whether to colour (cli/).
import picomatch from "picomatch";
import { isObject, unwrapSuccessor } from "./dialect.ts";
import type { Hop } from "./router.ts";
import type { TraceRecord } from "./trace.ts";

export interface PrintOptions {
  session?: string;
  method?: string;
  color?: boolean;
}

const LANE = 12;
const SUMMARY_CHARS = 72;

interface Step {
  t: number;
  from: Hop | "conductor";
  to: Hop | "conductor";
  message: any;
  /** How the conductor rewrote it on the way (wrapped, unwrapped, renamed). */
  as?: string;
  /** The routed copy (its id is the one the target hop answers). */
  routed?: any;
}

/** Pairs each incoming record with the outgoing record the conductor routed it to (they are adjacent). */
function steps(records: TraceRecord[]): Step[] {
  const out: Step[] = [];
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const next = records[i + 1];
    if (r.dir === "in" && next?.dir === "out" && next.hop !== r.hop) {
      const as = rewrittenAs(r.message?.method, next.message?.method);
      out.push({ t: r.t, from: r.hop, to: next.hop, message: r.message, as, routed: next.message });
      i++;
    } else if (r.dir === "in") out.push({ t: r.t, from: r.hop, to: "conductor", message: r.message });
    else out.push({ t: r.t, from: "conductor", to: r.hop, message: r.message });
  }
  return out;
}

/** How the conductor changed a message's outer method on its way: `as proxy/successor`, `from _proxy/successor`. */
function rewrittenAs(inMethod: unknown, outMethod: unknown): string | undefined {
  if (typeof inMethod !== "string" || typeof outMethod !== "string" || inMethod === outMethod) return undefined;
  if (unwrapSuccessor(inMethod, { method: "" }) !== undefined) return `from ${inMethod}`;
  return `as ${outMethod}`;
}

/** The method a person cares about: the inner one of a successor wrapper. */
function methodOf(m: any): string | undefined {
  if (!isObject(m) || typeof m.method !== "string") return undefined;
  return unwrapSuccessor(m.method, m.params as any)?.inner.method ?? m.method;
}

function paramsOf(m: any): any {
  if (!isObject(m) || typeof m.method !== "string") return undefined;
  return unwrapSuccessor(m.method, m.params as any)?.inner.params ?? m.params;
}

function clip(s: string, n = SUMMARY_CHARS): string {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > n ? flat.slice(0, n - 1) + "…" : flat;
}

/** A short, human summary of a message's content. */
export function summarize(m: any): string {
  if (!isObject(m)) return "";
  if (m.error !== undefined) return clip(`${(m.error as any).code} ${(m.error as any).message}`);
  if (m.result !== undefined) {
    const r: any = m.result;
    if (isObject(r) && typeof r.stopReason === "string") return `stopReason=${r.stopReason}`;
    if (isObject(r) && typeof r.sessionId === "string") return `sessionId=${r.sessionId}`;
    if (isObject(r) && isObject(r.outcome)) return clip(`outcome=${(r.outcome as any).optionId ?? (r.outcome as any).outcome}`);
    return clip(JSON.stringify(r) ?? "");
  }
  const p: any = paramsOf(m);
  if (!isObject(p)) return "";
  const u: any = p.update;
  if (isObject(u)) {
    const c: any = u.content;
    const text = isObject(c) && typeof c.text === "string" ? ` ${JSON.stringify(clip(c.text, 48))}` : "";
    const title = typeof u.title === "string" ? ` ${JSON.stringify(clip(u.title, 48))}` : "";
    const status = typeof u.status === "string" ? ` ${u.status}` : "";
    return clip(`${u.sessionUpdate}${text}${title}${status}`);
  }
  if (Array.isArray(p.prompt)) {
    const t = p.prompt.find((b: any) => b?.type === "text");
    return clip(t ? JSON.stringify(t.text) : `${p.prompt.length} blocks`);
  }
  if (isObject(p.toolCall) && typeof (p.toolCall as any).title === "string") return clip(`tool ${JSON.stringify((p.toolCall as any).title)}`);
  if (typeof p.cwd === "string") return clip(`cwd=${p.cwd}`);
  if (p.requestId !== undefined) return `requestId=${p.requestId}`;
  return clip(Object.keys(p).join(","));
}

function sessionOf(m: any): string | undefined {
  const p: any = paramsOf(m);
  if (isObject(p) && typeof p.sessionId === "string") return p.sessionId;
  const r: any = isObject(m) ? m.result : undefined;
  return isObject(r) && typeof r.sessionId === "string" ? r.sessionId : undefined;
}

const PAINT = { req: "\x1b[36m", res: "\x1b[32m", err: "\x1b[31m", note: "\x1b[2m", off: "\x1b[0m" };

export function printTrace(records: TraceRecord[], opts: PrintOptions = {}): string {
  const hops = [...new Set(records.map((r) => r.hop).filter((h): h is number => typeof h === "number"))].sort((a, b) => a - b);
  const lanes: (Hop | "conductor")[] = ["client", "conductor", ...hops];
  const col = (h: Hop | "conductor") => lanes.indexOf(h) * LANE;
  const width = (lanes.length - 1) * LANE + 1;
  const matchMethod = opts.method ? picomatch(opts.method) : undefined;
  const started = new Map<string, { t: number; method?: string; keep: boolean }>();
  const lines = ["     t ms  " + lanes.map((l) => (typeof l === "number" ? `#${l}` : l).padEnd(LANE)).join("").trimEnd()];
  for (const s of steps(records)) {
    const m = s.message;
    const isResponse = isObject(m) && m.method === undefined && m.id !== undefined;
    let method = methodOf(m);
    let took = "";
    let keep = true;
    if (isResponse) {
      // An answer travels back the way its request came: key it by the hop it now leaves from.
      const req = started.get(`${s.from}:${m.id}`);
      if (req) {
        method = req.method;
        keep = req.keep;
        took = `  (${(s.t - req.t).toFixed(2)} ms)`;
      }
    } else {
      keep = (!opts.session || sessionOf(m) === opts.session) && (!matchMethod || (method !== undefined && matchMethod(method)));
      if (m?.id !== undefined && s.to !== "conductor") {
        // the routed copy is answered on the target hop; remember it under the id it got there
        started.set(`${s.to}:${s.routed?.id ?? m.id}`, { t: s.t, method, keep });
      }
    }
    if (!keep) continue;
    const kind = isResponse ? (m.error !== undefined ? "err" : "res") : m?.id !== undefined ? "req" : "note";
    const label = isResponse ? `${m.error !== undefined ? "✗" : "↩"} ${method ?? "?"}` : `${method ?? "?"}${m.id !== undefined ? ` #${m.id}` : ""}`;
    const as = s.as ? ` [${s.as}]` : "";
    const arrow = drawArrow(col(s.from), col(s.to), width, lanes.map(col));
    const text = `${s.t.toFixed(2).padStart(9)}  ${arrow}  ${label}${as}  ${summarize(m)}${took}`;
    lines.push(opts.color ? `${PAINT[kind]}${text}${PAINT.off}` : text);
  }
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
