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
import { z } from "zod";
import { isObject } from "../wire/jsonrpc.ts";
import { describeIssue } from "../zod-issue.ts";
import type { LlmEvent, LlmProvider, LlmRequest, Message, StopReason } from "./types.ts";

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
const STOP_REASONS = ["end_turn", "tool_use", "max_tokens", "refusal", "other"] as const;
const ERROR_KINDS = ["auth", "rate_limit", "server", "transport", "bad_request", "aborted", "too_large", "replay"] as const;

export function messageKind(m: Message): MessageKind {
  return m.role;
}

const input = z.record(z.string(), z.unknown());
const toolName = z.union([z.string(), z.object({ name: z.string() }).loose()]);
const llmError = z.object({ kind: z.enum(ERROR_KINDS), message: z.string(), status: z.number().optional() });
const usage = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadTokens: z.number().optional(),
  cacheWriteTokens: z.number().optional(),
});
const event = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({
    type: z.literal("thinking"),
    text: z.string(),
    signature: z.string().optional(),
    redacted: z.string().optional(),
    encrypted: z.string().optional(),
    summary: z.array(z.string()).optional(),
  }),
  z.object({ type: z.literal("tool_call"), call: z.object({ id: z.string(), name: z.string(), input }) }),
  z.object({ type: z.literal("done"), stopReason: z.enum(STOP_REASONS), usage }),
  z.object({ type: z.literal("error"), error: llmError }),
]);

/** What TENDRIL_RECORD writes; extra fields are allowed (recordings may carry more than replay reads). */
const recordedStep = z.looseObject({
  v: z.literal(1),
  request: z.looseObject({ tools: z.array(toolName).optional(), messages: z.array(z.looseObject({ role: z.enum(["user", "tool", "assistant"]) })).optional() }).optional(),
  events: z
    .array(event)
    .min(1)
    .refine((evs) => ["done", "error"].includes(evs.at(-1)!.type), { message: "must end with a done or error event" }),
});

/** The hand-written form: strict, so a misspelt field is an error rather than silently nothing. */
const compactStep = z.strictObject({
  v: z.literal(1),
  tools: z.array(toolName).optional(),
  last: z.enum(["user", "tool", "assistant"]).optional(),
  reply: z.strictObject({
    thinking: z.string().optional(),
    text: z.string().optional(),
    toolCalls: z.array(z.strictObject({ id: z.string().optional(), name: z.string(), input: input.optional() })).optional(),
    stopReason: z.enum(STOP_REASONS).optional(),
    usage: z.strictObject({ input: z.number().optional(), output: z.number().optional() }).optional(),
    error: z.strictObject({ kind: z.enum(ERROR_KINDS).optional(), message: z.string().optional() }).optional(),
  }),
});

function names(tools: z.infer<typeof toolName>[] | undefined): string[] | undefined {
  return tools?.map((t) => (typeof t === "string" ? t : t.name)).sort();
}

function compactEvents(reply: z.infer<typeof compactStep>["reply"], step: number): LlmEvent[] {
  if (reply.error !== undefined) {
    return [{ type: "error", error: { kind: reply.error.kind ?? "server", message: reply.error.message ?? "scripted failure" } }];
  }
  const events: LlmEvent[] = [];
  if (reply.thinking) events.push({ type: "thinking", text: reply.thinking });
  if (reply.text) events.push({ type: "text", text: reply.text });
  const calls = reply.toolCalls ?? [];
  calls.forEach((c, i) => events.push({ type: "tool_call", call: { id: c.id ?? `call_${step}_${i + 1}`, name: c.name, input: c.input ?? {} } }));
  const stop: StopReason = reply.stopReason ?? (calls.length > 0 ? "tool_use" : "end_turn");
  events.push({ type: "done", stopReason: stop, usage: { inputTokens: reply.usage?.input ?? 0, outputTokens: reply.usage?.output ?? 0 } });
  return events;
}

function parseStep(line: string, step: number, lineNo: number): ReplayStep {
  const where = `replay file line ${lineNo}`;
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch (err) {
    throw new CassetteError(`${where}: not JSON (${(err as Error).message})`);
  }
  const recorded = isObject(obj) && "events" in obj;
  const parsed = (recorded ? recordedStep : compactStep).safeParse(obj);
  if (!parsed.success) throw new CassetteError(describeIssue(parsed.error, where));
  const s: ReplayStep = { events: [] };
  if ("events" in parsed.data) {
    const d = parsed.data as z.infer<typeof recordedStep>;
    s.events = d.events as LlmEvent[];
    const tools = names(d.request?.tools);
    const last = d.request?.messages?.at(-1);
    if (tools) s.tools = tools;
    if (last) s.last = last.role;
  } else {
    const d = parsed.data as z.infer<typeof compactStep>;
    s.events = compactEvents(d.reply, step);
    const tools = names(d.tools);
    if (tools) s.tools = tools;
    if (d.last) s.last = d.last;
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
