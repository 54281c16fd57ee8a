// Owns the fake LLM's wire shapes: one scripted turn rendered as Anthropic Messages or OpenAI Chat
// Completions bodies (SSE event lists and plain JSON); Responses shapes are in fake-llm-responses.ts.
// Does not touch sockets, faults or the script.

export interface FakeToolCall {
  id?: string;
  name: string;
  input: object;
}

export interface FakeFault {
  /** Answer with this HTTP status (and `body`, or an API-shaped error) instead of a reply. */
  status?: number;
  /** Sends `retry-after` (seconds, fractions allowed) with a status fault. */
  retryAfterS?: number;
  body?: string;
  /** Waits this long before answering (or before the fault). */
  delayMs?: number;
  /** Never answers until the client aborts or the fake closes. */
  hang?: boolean;
  /** Sends part of the stream, then destroys the socket. */
  truncate?: boolean;
}

export interface FakeTurn {
  text?: string;
  thinking?: string;
  toolCalls?: FakeToolCall[];
  stopReason?: "end_turn" | "tool_use" | "max_tokens" | "refusal";
  /** `cached`: the part of `input` the OpenAI APIs report as cached_tokens (included in `input`, as they count it). */
  usage?: { input: number; output: number; cached?: number };
  fault?: FakeFault;
}

/** A reply ready to encode: ids, stop reason and usage filled in. */
export interface ResolvedTurn {
  text: string;
  thinking: string;
  toolCalls: { id: string; name: string; input: object }[];
  stopReason: NonNullable<FakeTurn["stopReason"]>;
  usage: { input: number; output: number; cached?: number };
  model: string;
}

export interface SseEvent {
  event?: string;
  data: string;
}

const FINISH: Record<ResolvedTurn["stopReason"], string> = {
  end_turn: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  refusal: "content_filter",
};

/** Splits text into small pieces so clients see several deltas (≥3 for short texts, ≤16 chars each). */
export function chunkText(text: string): string[] {
  if (text === "") return [];
  const size = Math.max(1, Math.min(16, Math.ceil(text.length / 3)));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export function resolveTurn(turn: FakeTurn, requestBytes: number, model: string, nextId: () => number, idPrefix: string): ResolvedTurn {
  const toolCalls = (turn.toolCalls ?? []).map((c) => ({ id: c.id ?? `${idPrefix}${nextId()}`, name: c.name, input: c.input }));
  const produced = (turn.text ?? "").length + (turn.thinking ?? "").length + JSON.stringify(toolCalls).length;
  return {
    text: turn.text ?? "",
    thinking: turn.thinking ?? "",
    toolCalls,
    stopReason: turn.stopReason ?? (toolCalls.length > 0 ? "tool_use" : "end_turn"),
    usage: turn.usage ?? { input: Math.max(1, Math.ceil(requestBytes / 4)), output: Math.max(1, Math.ceil(produced / 4)) },
    model,
  };
}

// ---- Anthropic Messages ----

function ev(type: string, body: Record<string, unknown>): SseEvent {
  return { event: type, data: JSON.stringify({ type, ...body }) };
}

export function anthropicEvents(t: ResolvedTurn): SseEvent[] {
  const out: SseEvent[] = [
    ev("message_start", {
      message: {
        id: "msg_fake",
        type: "message",
        role: "assistant",
        model: t.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: t.usage.input, output_tokens: 1 },
      },
    }),
    ev("ping", {}),
  ];
  let index = 0;
  if (t.thinking) {
    out.push(ev("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } }));
    for (const piece of chunkText(t.thinking)) {
      out.push(ev("content_block_delta", { index, delta: { type: "thinking_delta", thinking: piece } }));
    }
    out.push(ev("content_block_delta", { index, delta: { type: "signature_delta", signature: "fake-signature" } }));
    out.push(ev("content_block_stop", { index }));
    index++;
  }
  if (t.text) {
    out.push(ev("content_block_start", { index, content_block: { type: "text", text: "" } }));
    for (const piece of chunkText(t.text)) out.push(ev("content_block_delta", { index, delta: { type: "text_delta", text: piece } }));
    out.push(ev("content_block_stop", { index }));
    index++;
  }
  for (const call of t.toolCalls) {
    out.push(ev("content_block_start", { index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } }));
    for (const piece of ["", ...chunkText(JSON.stringify(call.input))]) {
      out.push(ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } }));
    }
    out.push(ev("content_block_stop", { index }));
    index++;
  }
  out.push(
    ev("message_delta", { delta: { stop_reason: t.stopReason, stop_sequence: null }, usage: { output_tokens: t.usage.output } }),
  );
  out.push(ev("message_stop", {}));
  return out;
}

export function anthropicJson(t: ResolvedTurn): object {
  const content: object[] = [];
  if (t.thinking) content.push({ type: "thinking", thinking: t.thinking, signature: "fake-signature" });
  if (t.text) content.push({ type: "text", text: t.text });
  for (const c of t.toolCalls) content.push({ type: "tool_use", id: c.id, name: c.name, input: c.input });
  return {
    id: "msg_fake",
    type: "message",
    role: "assistant",
    model: t.model,
    content,
    stop_reason: t.stopReason,
    stop_sequence: null,
    usage: { input_tokens: t.usage.input, output_tokens: t.usage.output },
  };
}

export function anthropicError(status: number, message: string): string {
  const type =
    status === 401 ? "authentication_error"
    : status === 403 ? "permission_error"
    : status === 429 ? "rate_limit_error"
    : status === 529 ? "overloaded_error"
    : status >= 500 ? "api_error"
    : "invalid_request_error";
  return JSON.stringify({ type: "error", error: { type, message } });
}

// ---- OpenAI Chat Completions ----

export function openaiChunks(t: ResolvedTurn, includeUsage: boolean): SseEvent[] {
  const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 0, model: t.model };
  const chunk = (delta: object, finish: string | null = null): SseEvent => ({
    data: JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] }),
  });
  const out: SseEvent[] = [chunk({ role: "assistant", content: "" })];
  for (const piece of chunkText(t.thinking)) out.push(chunk({ reasoning_content: piece }));
  for (const piece of chunkText(t.text)) out.push(chunk({ content: piece }));
  t.toolCalls.forEach((call, index) => {
    out.push(chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
    for (const piece of chunkText(JSON.stringify(call.input))) {
      out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  out.push(chunk({}, FINISH[t.stopReason]));
  if (includeUsage) {
    const usage: Record<string, unknown> = { prompt_tokens: t.usage.input, completion_tokens: t.usage.output, total_tokens: t.usage.input + t.usage.output };
    if (t.usage.cached !== undefined) usage.prompt_tokens_details = { cached_tokens: t.usage.cached };
    out.push({ data: JSON.stringify({ ...base, choices: [], usage }) });
  }
  out.push({ data: "[DONE]" });
  return out;
}

export function openaiJson(t: ResolvedTurn): object {
  const message: Record<string, unknown> = { role: "assistant", content: t.text || null, refusal: null };
  if (t.thinking) message.reasoning_content = t.thinking;
  if (t.toolCalls.length > 0) {
    message.tool_calls = t.toolCalls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: JSON.stringify(c.input) },
    }));
  }
  return {
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: 0,
    model: t.model,
    choices: [{ index: 0, message, finish_reason: FINISH[t.stopReason], logprobs: null }],
    usage: { prompt_tokens: t.usage.input, completion_tokens: t.usage.output, total_tokens: t.usage.input + t.usage.output },
  };
}

export function openaiError(status: number, message: string): string {
  const type = status === 429 ? "rate_limit_exceeded" : status === 401 ? "invalid_api_key" : "invalid_request_error";
  return JSON.stringify({ error: { message, type, param: null, code: type } });
}

export function encodeSse(e: SseEvent): string {
  return (e.event ? `event: ${e.event}\n` : "") + `data: ${e.data}\n\n`;
}
