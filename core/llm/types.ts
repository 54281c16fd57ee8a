// Owns the one LLM interface every provider implements: a request in, an event stream out.
// A provider never throws from stream(): failures arrive as an `error` event (the loop reads them as data).

export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export type UserPart =
  | { type: "text"; text: string }
  | { type: "image"; mimeType: string; data: string /* base64 */ };

export interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface ToolResult {
  callId: string;
  /** Text the LLM sees (already trimmed by the loop). */
  content: string;
  isError: boolean;
  /** Images the tool returned (base64), within MAX_TOOL_IMAGE_BYTES. */
  images?: { mimeType: string; data: string }[];
}

/** A reasoning block as the provider must see it again (Anthropic: a signed `thinking` block, or a
 *  `redacted_thinking` one's data; OpenAI Responses: a reasoning item's `encrypted_content` and its
 *  summary parts), kept so a tool loop with reasoning on stays valid. Each API sends back only its own kind. */
export type ReasoningBlock = { text: string; signature: string } | { redacted: string } | { encrypted: string; summary: string[] };

export type Message =
  | { role: "user"; content: UserPart[] }
  | { role: "assistant"; text: string; toolCalls: ToolCall[]; reasoning?: ReasoningBlock[] }
  | { role: "tool"; results: ToolResult[] };

/** How hard the model reasons before answering (ACP's `thought_level` option): `off` asks for nothing. */
export type ThoughtLevel = "off" | "low" | "medium" | "high";
export const THOUGHT_LEVELS: readonly ThoughtLevel[] = ["off", "low", "medium", "high"];

export interface LlmRequest {
  model: string;
  /** Mapped by providers whose `thoughtLevels` is true; absent = off. */
  thoughtLevel?: ThoughtLevel;
  system: string;
  messages: Message[];
  tools: ToolSpec[];
  maxTokens: number;
  signal: AbortSignal;
  /** Called when the provider tries the request again after an attempt answered HTTP 429 or 5xx
   *  (`attempt` is the new attempt's number, 2 for the first retry); not called by providers that do
   *  not retry. */
  onRetry?(r: { status: number; attempt: number }): void;
  /** Prompt caching (SPEC §3.9): "on" (absent = on) marks cache breakpoints where the API takes
   *  them, "1h" asks for the hour-long cache, "off" sends none. */
  promptCache?: "on" | "off" | "1h";
  /** A stable key for the provider's prefix cache (OpenAI's `prompt_cache_key`): the session id. */
  cacheKey?: string;
}

/** One response's tokens, each billed at its own price: `inputTokens` is the input billed at the base
 *  price only (cache reads and writes are counted apart, as Anthropic reports them; an adapter whose
 *  API folds cached tokens into its input count subtracts them). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "refusal" | "other";

export type LlmErrorKind =
  | "auth" // 401/403: bad or missing key
  | "rate_limit" // 429 after retries
  | "server" // 5xx after retries
  | "transport" // connection refused, reset, DNS, timeout
  | "bad_request" // 4xx other than the above
  | "aborted" // our signal fired
  | "too_large" // response over MAX_LLM_RESPONSE_BYTES
  | "replay"; // replay file exhausted or diverged

export interface LlmError {
  kind: LlmErrorKind;
  message: string;
  status?: number;
}

export type LlmEvent =
  | { type: "text"; text: string }
  /** Reasoning text as it streams; `signature` ends a signed block, `redacted` is a block with no text,
   *  `encrypted` (with the block's `summary` parts) ends an OpenAI reasoning item. */
  | { type: "thinking"; text: string; signature?: string; redacted?: string; encrypted?: string; summary?: string[] }
  | { type: "tool_call"; call: ToolCall }
  | { type: "done"; stopReason: StopReason; usage: Usage }
  | { type: "error"; error: LlmError };

export interface LlmProvider {
  readonly name: string;
  /** It maps LlmRequest.thoughtLevel onto its API (so the session offers `thought_level`). */
  readonly thoughtLevels?: boolean;
  /** Streams one response. Ends after exactly one `done` or `error` event. Never throws. */
  stream(req: LlmRequest): AsyncIterable<LlmEvent>;
  /** The model ids the endpoint offers; rejects when it cannot say (absent: it never can). */
  listModels?(signal: AbortSignal): Promise<string[]>;
}
