// Owns replay (TENDRIL_PROVIDER=replay): answers LLM calls from a cassette, in order, and fails loudly
// (an `error` event of kind `replay` naming the step) when the run diverges. Does not write cassettes
// (record.ts does) and does not look at message text: only the tools offered and the last message's kind.
//
// Cassette format: JSONL, one line per LLM call, in call order. Blank lines and lines starting with `#`
// are skipped. Each line is one of two forms (both carry "v":1):
//
//   Recorded form (what TENDRIL_RECORD writes):
//     {"v":1,"request":{"model":"m","system":"…","messages":[…],"tools":[{"name":"dev__shell","inputSchema":{…}}]},
//      "events":[{"type":"text","text":"…"},{"type":"tool_call","call":{"id":"c1","name":"dev__shell","input":{…}}},
//                {"type":"done","stopReason":"tool_use","usage":{"inputTokens":10,"outputTokens":5}}]}
//
//   Compact form (easy to write by hand):
//     {"v":1,"tools":["dev__shell","dev__str_replace"],"last":"user",
//      "reply":{"thinking":"…","text":"…","toolCalls":[{"id":"c1","name":"dev__shell","input":{"command":"ls"}}],
//               "stopReason":"tool_use","usage":{"input":10,"output":5}}}
//     `tools` and `last` are optional checks (omitted = not checked). `last` is the kind of the request's
//     final message: "user", "tool" (tool results) or "assistant". In `reply` every field is optional;
//     stopReason defaults to tool_use when there are toolCalls, else end_turn; call ids default to
//     `call_<step>_<n>`. `"reply":{"error":{"kind":"server","message":"…"}}` scripts a failure instead.
//
// Checks per call (step numbers are 1-based): the set of tool names offered must equal the recorded one,
// the final message's kind must match, and the run may not make more calls than the cassette holds.
import type { LlmError, LlmEvent, LlmProvider, LlmRequest, Message, StopReason } from "./types.ts";

export type MessageKind = "user" | "tool" | "assistant";

export interface ReplayStep {
  /** Tool names offered, sorted; undefined = not checked. */
  tools?: string[];
  last?: MessageKind;
  events: LlmEvent[];
}

export class CassetteError extends Error {
  override name = "CassetteError";
}

const KIND_WORDS: Record<MessageKind, string> = { user: "user message", tool: "tool result", assistant: "assistant message" };
const STOP_REASONS: readonly StopReason[] = ["end_turn", "tool_use", "max_tokens", "refusal", "other"];
const EVENT_TYPES = new Set(["text", "thinking", "tool_call", "done", "error"]);

export function messageKind(m: Message): MessageKind {
  return m.role;
}

function toolNames(raw: unknown, where: string): string[] | undefined {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw)) throw new CassetteError(`${where}: tools must be an array of names`);
  return raw.map((t) => (typeof t === "string" ? t : String((t as { name?: unknown })?.name))).sort();
}

function compactEvents(reply: Record<string, any>, step: number, where: string): LlmEvent[] {
  if (reply.error !== undefined) {
    const e = reply.error as Partial<LlmError>;
    return [{ type: "error", error: { kind: e.kind ?? "server", message: String(e.message ?? "scripted failure") } }];
  }
  const events: LlmEvent[] = [];
  if (reply.thinking) events.push({ type: "thinking", text: String(reply.thinking) });
  if (reply.text) events.push({ type: "text", text: String(reply.text) });
  const calls = (reply.toolCalls ?? []) as { id?: string; name?: string; input?: Record<string, unknown> }[];
  if (!Array.isArray(calls)) throw new CassetteError(`${where}: reply.toolCalls must be an array`);
  calls.forEach((c, i) => {
    if (typeof c?.name !== "string") throw new CassetteError(`${where}: reply.toolCalls[${i}].name is required`);
    events.push({ type: "tool_call", call: { id: c.id ?? `call_${step}_${i + 1}`, name: c.name, input: c.input ?? {} } });
  });
  const stop = (reply.stopReason ?? (calls.length > 0 ? "tool_use" : "end_turn")) as StopReason;
  if (!STOP_REASONS.includes(stop)) throw new CassetteError(`${where}: stopReason must be one of ${STOP_REASONS.join(", ")}`);
  const u = reply.usage ?? {};
  events.push({ type: "done", stopReason: stop, usage: { inputTokens: Number(u.input ?? 0), outputTokens: Number(u.output ?? 0) } });
  return events;
}

function recordedEvents(raw: unknown, where: string): LlmEvent[] {
  if (!Array.isArray(raw) || raw.length === 0) throw new CassetteError(`${where}: events must be a non-empty array`);
  for (const [i, e] of raw.entries()) {
    if (!EVENT_TYPES.has((e as { type?: string })?.type ?? "")) throw new CassetteError(`${where}: events[${i}] has an unknown type`);
  }
  const lastType = (raw.at(-1) as LlmEvent).type;
  if (lastType !== "done" && lastType !== "error") throw new CassetteError(`${where}: events must end with a done or error event`);
  return raw as LlmEvent[];
}

function parseStep(line: string, step: number, lineNo: number): ReplayStep {
  const where = `replay file line ${lineNo}`;
  let obj: Record<string, any>;
  try {
    obj = JSON.parse(line);
  } catch (err) {
    throw new CassetteError(`${where}: not JSON (${(err as Error).message})`);
  }
  if (typeof obj !== "object" || obj === null || obj.v !== 1) throw new CassetteError(`${where}: expected an object with "v":1`);
  if (obj.events !== undefined) {
    const req = (obj.request ?? {}) as { tools?: unknown; messages?: Message[] };
    const lastMsg = Array.isArray(req.messages) ? req.messages.at(-1) : undefined;
    const s: ReplayStep = { events: recordedEvents(obj.events, where) };
    const tools = toolNames(req.tools, where);
    if (tools) s.tools = tools;
    if (lastMsg) s.last = messageKind(lastMsg);
    return s;
  }
  if (typeof obj.reply !== "object" || obj.reply === null) throw new CassetteError(`${where}: needs "events" (recorded form) or "reply" (compact form)`);
  const s: ReplayStep = { events: compactEvents(obj.reply, step, where) };
  const tools = toolNames(obj.tools, where);
  if (tools) s.tools = tools;
  if (obj.last !== undefined) {
    if (!(obj.last in KIND_WORDS)) throw new CassetteError(`${where}: last must be user, tool or assistant`);
    s.last = obj.last as MessageKind;
  }
  return s;
}

/** Parses a cassette; throws CassetteError naming the line on a malformed one. */
export function parseCassette(text: string): ReplayStep[] {
  const steps: ReplayStep[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    steps.push(parseStep(line, steps.length + 1, i + 1));
  });
  return steps;
}

function divergence(step: ReplayStep, req: LlmRequest, n: number): string | undefined {
  if (step.tools) {
    const now = req.tools.map((t) => t.name).sort();
    if (now.join(",") !== step.tools.join(",")) {
      return `replay diverged at step ${n}: tools offered differ (recorded: ${step.tools.join(",") || "none"}; now: ${now.join(",") || "none"})`;
    }
  }
  const lastMsg = req.messages.at(-1);
  if (step.last && lastMsg && messageKind(lastMsg) !== step.last) {
    return `replay diverged at step ${n}: last message differs (recorded: ${KIND_WORDS[step.last]}; now: ${KIND_WORDS[messageKind(lastMsg)]})`;
  }
  return undefined;
}

/** A provider answering from a cassette (see the header for the format). Throws CassetteError on a bad file. */
export function replayProvider(fileText: string): LlmProvider {
  const steps = parseCassette(fileText);
  let calls = 0;
  return {
    name: "replay",
    async *stream(req: LlmRequest): AsyncGenerator<LlmEvent> {
      const n = ++calls;
      if (req.signal.aborted) {
        yield { type: "error", error: { kind: "aborted", message: "LLM request aborted" } };
        return;
      }
      const step = steps[n - 1];
      if (!step) {
        const message = `replay exhausted: run made more LLM calls (${n}) than recorded (${steps.length})`;
        yield { type: "error", error: { kind: "replay", message } };
        return;
      }
      const diverged = divergence(step, req, n);
      if (diverged) {
        yield { type: "error", error: { kind: "replay", message: diverged } };
        return;
      }
      for (const ev of step.events) {
        if (req.signal.aborted) {
          yield { type: "error", error: { kind: "aborted", message: "LLM request aborted" } };
          return;
        }
        yield structuredClone(ev);
      }
    },
  };
}
