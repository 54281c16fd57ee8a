// Owns the Anthropic Messages adapter: the only product module importing `@anthropic-ai/sdk`.
// Maps history/tools to the API (the body sent as text, built incrementally: body-text.ts), streams
// raw events into LlmEvents, and leaves retries/backoff (retry-after honoured) to the SDK. Does not
// decide policy: errors are data for the loop.
// It builds the SDK's base client with the one resource each call needs (Messages, Models), not the
// default export, which builds every resource of the API: a third of the code, loaded and built.
import type Anthropic from "@anthropic-ai/sdk";
import { BaseAnthropic } from "@anthropic-ai/sdk/client";
import { APIConnectionError, APIError } from "@anthropic-ai/sdk/core/error";
import { Messages } from "@anthropic-ai/sdk/resources/messages/messages";
import { Models } from "@anthropic-ai/sdk/resources/models";
import { FrameCache, ItemCache, joinBody, splitFrame } from "./body-text.ts";
import {
  classifyFailure,
  type Endpoint,
  errorText,
  parseToolInput,
  type SdkProviderOptions,
  RunRouter,
  sdkClientOptions,
  streamThroughSdk,
} from "./http-edge.ts";
import type { LlmEvent, LlmProvider, LlmRequest, Message, StopReason, ThoughtLevel, Usage } from "./types.ts";

type Block = Anthropic.ContentBlockParam;
type Param = { role: "user" | "assistant"; content: Block[] };

const DEFAULT_BASE_URL = "https://api.anthropic.com";
// Anthropic rejects empty text blocks; an assistant turn that said nothing still needs a body.
const EMPTY_ASSISTANT = "(no text)";

const STOP: Record<string, StopReason> = {
  end_turn: "end_turn",
  stop_sequence: "end_turn",
  tool_use: "tool_use",
  max_tokens: "max_tokens",
  model_context_window_exceeded: "max_tokens",
  refusal: "refusal",
};

/** `thought_level` as a thinking budget in tokens. The API takes at least 1024 and less than max_tokens. */
const THINKING_BUDGET: Record<Exclude<ThoughtLevel, "off">, number> = { low: 2_048, medium: 8_192, high: 24_576 };
const MIN_THINKING_BUDGET = 1_024;

/** The `thinking` parameter for a level, within max_tokens (which it shares); undefined = off. */
export function thinkingFor(level: ThoughtLevel | undefined, maxTokens: number): Anthropic.ThinkingConfigEnabled | undefined {
  if (level === undefined || level === "off") return undefined;
  // The budget is part of max_tokens: keep at least MIN_THINKING_BUDGET for the answer.
  const budget = Math.max(MIN_THINKING_BUDGET, Math.min(THINKING_BUDGET[level], maxTokens - MIN_THINKING_BUDGET));
  return { type: "enabled", budget_tokens: budget };
}

function reasoningBlocks(m: Extract<Message, { role: "assistant" }>): Block[] {
  // OpenAI's encrypted reasoning means nothing to this API: only Anthropic's own blocks go back.
  return (m.reasoning ?? []).flatMap((r): Block[] =>
    "encrypted" in r ? [] : "redacted" in r ? [{ type: "redacted_thinking", data: r.redacted }] : [{ type: "thinking", thinking: r.text, signature: r.signature }],
  );
}

function toBlocks(m: Message, thinking: boolean): Param {
  if (m.role === "user") {
    return {
      role: "user",
      content: m.content.map((p): Block =>
        p.type === "text"
          ? { type: "text", text: p.text }
          : { type: "image", source: { type: "base64", media_type: p.mimeType as "image/png", data: p.data } },
      ),
    };
  }
  if (m.role === "assistant") {
    // With thinking on, the API wants an assistant turn's signed thinking back before its tool calls.
    const content: Block[] = thinking ? reasoningBlocks(m) : [];
    if (m.text !== "" || m.toolCalls.length === 0) content.push({ type: "text", text: m.text || EMPTY_ASSISTANT });
    for (const c of m.toolCalls) content.push({ type: "tool_use", id: c.id, name: c.name, input: c.input });
    return { role: "assistant", content };
  }
  return {
    role: "user",
    content: m.results.map((r): Block => ({
      type: "tool_result",
      tool_use_id: r.callId,
      content: r.images?.length
        ? [{ type: "text", text: r.content || "(image)" }, ...r.images.map((i) => ({ type: "image" as const, source: { type: "base64" as const, media_type: i.mimeType as "image/png", data: i.data } }))]
        : r.content,
      is_error: r.isError,
    })),
  };
}

/** History → API messages; consecutive same-role messages merge (tool results + a user note → one user turn). */
export function toAnthropicMessages(messages: Message[], thinking = false): Param[] {
  const out: Param[] = [];
  for (const m of messages) {
    const p = toBlocks(m, thinking);
    const last = out.at(-1);
    if (last && last.role === p.role) last.content.push(...p.content);
    else out.push(p);
  }
  return out;
}

/** Blocks that take no cache breakpoint of their own (the API refuses one on thinking). */
const UNMARKABLE = new Set(["thinking", "redacted_thinking"]);

/** The index of the last block (by type) that may carry a breakpoint; -1 when none may. */
function lastMarkable(types: readonly string[]): number {
  for (let i = types.length - 1; i >= 0; i--) if (!UNMARKABLE.has(types[i]!)) return i;
  return -1;
}

/**
 * The message breakpoints (SPEC §3.9) as [message, block] pairs: the newest message's last block (what
 * this request writes) and that of the newest message before it of the same role (what the previous
 * request wrote: a hit there holds however many blocks the model's answer added, past the API's
 * 20-block lookback). The one rule for the body as objects and as text.
 */
function messageMarks(messages: readonly { role: string; types: readonly string[] }[]): [number, number][] {
  const n = messages.length - 1;
  const newest = messages[n];
  const b = newest ? lastMarkable(newest.types) : -1;
  if (b < 0) return [];
  for (let i = n - 1; i >= 0; i--) {
    if (messages[i]!.role !== newest!.role) continue;
    const c = lastMarkable(messages[i]!.types);
    return c < 0 ? [[n, b]] : [[n, b], [i, c]];
  }
  return [[n, b]];
}

/** Prompt-cache breakpoints (SPEC §3.9), at most 4: the end of the tool list, the end of the system prompt and the two of `messageMarks`. */
function markBreakpoints(body: Anthropic.MessageCreateParamsStreaming, cache: "on" | "1h"): void {
  const mark: Anthropic.CacheControlEphemeral = cache === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
  const last = body.tools?.at(-1);
  if (last) (last as { cache_control?: Anthropic.CacheControlEphemeral }).cache_control = { ...mark };
  if (typeof body.system === "string") body.system = [{ type: "text", text: body.system, cache_control: { ...mark } }];
  const messages = body.messages as Param[];
  for (const [m, b] of messageMarks(messages.map((p) => ({ role: p.role, types: p.content.map((x) => x.type) })))) {
    (messages[m]!.content[b] as { cache_control?: Anthropic.CacheControlEphemeral }).cache_control = { ...mark };
  }
}

export function toAnthropicBody(req: LlmRequest): Anthropic.MessageCreateParamsStreaming {
  const thinking = thinkingFor(req.thoughtLevel, req.maxTokens);
  const body: Anthropic.MessageCreateParamsStreaming = {
    model: req.model,
    max_tokens: req.maxTokens,
    messages: toAnthropicMessages(req.messages, thinking !== undefined) as Anthropic.MessageCreateParamsStreaming["messages"],
    stream: true,
  };
  if (thinking) body.thinking = thinking;
  if (req.system !== "") body.system = req.system;
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: t.inputSchema as Anthropic.Tool["input_schema"],
    }));
  }
  const cache = req.promptCache ?? "on";
  if (cache !== "off") markBreakpoints(body, cache);
  return body;
}

/** One history message's API blocks, serialized once: each block's JSON, its type, and the whole
 *  message's JSON (`{"role":…,"content":[…]}`) for when it goes out alone and unmarked. */
interface SerializedMessage {
  role: Param["role"];
  blocks: string[];
  types: string[];
  text: string;
}

function serialize(m: Message, thinking: boolean): SerializedMessage {
  const p = toBlocks(m, thinking);
  const blocks = p.content.map((b) => JSON.stringify(b));
  return { role: p.role, blocks, types: p.content.map((b) => b.type), text: `{"role":"${p.role}","content":[${blocks.join(",")}]}` };
}

/**
 * The request body as text, byte for byte `JSON.stringify(toAnthropicBody(req))`, serializing only
 * what is new (body-text.ts). A cache breakpoint is spliced into its block's text: it is the block's
 * last key, so the marked block is its unmarked text with `,"cache_control":…` before the closing brace.
 */
export class AnthropicBodyWriter {
  readonly #messages = new ItemCache<SerializedMessage>();
  readonly #frames = new FrameCache();

  text(req: LlmRequest): string {
    const frame = this.#frames.of(req, () =>
      splitFrame(JSON.stringify(toAnthropicBody({ ...req, messages: [] })), `{"model":${JSON.stringify(req.model)},"max_tokens":${JSON.stringify(req.maxTokens)},"messages":[`),
    );
    const cache = req.promptCache ?? "on";
    const thinking = thinkingFor(req.thoughtLevel, req.maxTokens) !== undefined;
    // Consecutive same-role messages merge into one API message, as toAnthropicMessages does.
    const groups: { role: Param["role"]; parts: SerializedMessage[]; types: readonly string[] }[] = [];
    for (const m of req.messages) {
      // Only an assistant message's blocks depend on thinking (its signed thinking goes back).
      const s = this.#messages.of(m, m.role === "assistant" && thinking, (x) => serialize(x, thinking));
      const last = groups.at(-1);
      if (last && last.role === s.role) (last.parts.push(s), (last.types = [...last.types, ...s.types]));
      else groups.push({ role: s.role, parts: [s], types: s.types });
    }
    const marks = cache === "off" ? [] : messageMarks(groups);
    const mark = `,"cache_control":${JSON.stringify(cache === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" })}}`;
    const out: string[] = [];
    for (let g = 0; g < groups.length; g++) {
      const { role, parts } = groups[g]!;
      const marked = marks.find(([m]) => m === g)?.[1];
      if (parts.length === 1 && marked === undefined) {
        out.push(parts[0]!.text);
        continue;
      }
      const blocks = parts.length === 1 ? [...parts[0]!.blocks] : parts.flatMap((p) => p.blocks);
      if (marked !== undefined) blocks[marked] = blocks[marked]!.slice(0, -1) + mark;
      out.push(`{"role":"${role}","content":[${blocks.join(",")}]}`);
    }
    return joinBody(frame, out);
  }
}

/** Folds raw stream events into LlmEvents; remembers usage, stop reason and whether the message completed. */
class StreamFold {
  usage: Usage = { inputTokens: 0, outputTokens: 0 };
  stop: StopReason = "other";
  complete = false;
  private tools = new Map<number, { id: string; name: string; json: string }>();

  *finish(): Generator<LlmEvent> {
    yield { type: "done", stopReason: this.stop, usage: this.usage };
  }

  *push(ev: Anthropic.RawMessageStreamEvent): Generator<LlmEvent> {
    switch (ev.type) {
      case "message_start": {
        const u = ev.message.usage;
        this.usage = { inputTokens: u.input_tokens ?? 0, outputTokens: u.output_tokens ?? 0 };
        if (u.cache_read_input_tokens) this.usage.cacheReadTokens = u.cache_read_input_tokens;
        if (u.cache_creation_input_tokens) this.usage.cacheWriteTokens = u.cache_creation_input_tokens;
        break;
      }
      case "content_block_start": {
        const b = ev.content_block;
        if (b.type === "tool_use") this.tools.set(ev.index, { id: b.id, name: b.name, json: "" });
        else if (b.type === "text" && b.text) yield { type: "text", text: b.text };
        else if (b.type === "thinking" && b.thinking) yield { type: "thinking", text: b.thinking };
        else if (b.type === "redacted_thinking") yield { type: "thinking", text: "", redacted: b.data };
        break;
      }
      case "content_block_delta": {
        const d = ev.delta;
        if (d.type === "text_delta") yield { type: "text", text: d.text };
        else if (d.type === "thinking_delta") yield { type: "thinking", text: d.thinking };
        else if (d.type === "signature_delta") yield { type: "thinking", text: "", signature: d.signature };
        else if (d.type === "input_json_delta") {
          const t = this.tools.get(ev.index);
          if (t) t.json += d.partial_json;
        }
        break;
      }
      case "content_block_stop": {
        const t = this.tools.get(ev.index);
        if (t) {
          this.tools.delete(ev.index);
          yield { type: "tool_call", call: { id: t.id, name: t.name, input: parseToolInput(t.json) } };
        }
        break;
      }
      case "message_delta": {
        this.stop = STOP[ev.delta.stop_reason ?? ""] ?? "other";
        this.usage.outputTokens = ev.usage.output_tokens;
        if (ev.usage.input_tokens) this.usage.inputTokens = ev.usage.input_tokens;
        break;
      }
      case "message_stop":
        this.complete = true;
        break;
    }
  }
}

function failureOf(err: unknown, ep: Endpoint) {
  const status = err instanceof APIError ? err.status : undefined;
  const connection = err instanceof APIConnectionError;
  const message = err instanceof APIError && err.apiMessage ? err.apiMessage : errorText(err);
  return classifyFailure({ status, message, connection }, ep);
}

export function anthropicProvider(opts: SdkProviderOptions): LlmProvider {
  const ep: Endpoint = { keyVar: "ANTHROPIC_API_KEY", baseVar: "ANTHROPIC_BASE_URL", baseUrl: opts.baseUrl ?? DEFAULT_BASE_URL };
  // Local gateways often need no key; the official endpoint always does.
  const apiKey = opts.apiKey || (opts.baseUrl ? "unused" : undefined);
  const router = new RunRouter();
  let messages: Messages | undefined; // one client for the provider's life, built on first use
  const bodies = new AnthropicBodyWriter();
  return {
    name: "anthropic",
    thoughtLevels: true,
    stream(req: LlmRequest): AsyncGenerator<LlmEvent> {
      return streamThroughSdk(req, opts, {
        ep,
        missingKey: apiKey
          ? undefined
          : "ANTHROPIC_API_KEY is not set: export ANTHROPIC_API_KEY=<your key> (or set ANTHROPIC_BASE_URL to a gateway that needs none)",
        fold: new StreamFold(),
        // No OpenTelemetry: nothing in Tendril installs a tracer, and the SDK's span per request cost
        // a few per cent of a tool round trip's CPU.
        open: (run) => {
          messages ??= new Messages(new BaseAnthropic({ ...sdkClientOptions(apiKey ?? "", ep, opts, router), openTelemetry: false }));
          // The body goes as text (the SDK sends a string body with a content-type as it is); the
          // params left for the SDK are what it reads beyond the body: the model, stream, thinking.
          const routed = router.requestOptions(run);
          const thinking = thinkingFor(req.thoughtLevel, req.maxTokens);
          const params: Anthropic.MessageCreateParamsStreaming = { model: req.model, max_tokens: req.maxTokens, messages: [], stream: true, ...(thinking ? { thinking } : {}) };
          return messages.create(params, { ...routed, body: bodies.text(req), headers: { ...routed.headers, "content-type": "application/json" } });
        },
        failureOf: (err) => failureOf(err, ep),
      });
    },
    async listModels(signal) {
      if (!apiKey) throw new Error("no ANTHROPIC_API_KEY");
      const models = new Models(new BaseAnthropic({ apiKey, baseURL: ep.baseUrl, maxRetries: 0 }));
      const page = await models.list({ limit: 100 }, { signal });
      return page.data.map((m) => m.id);
    },
  };
}
