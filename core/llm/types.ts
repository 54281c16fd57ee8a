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

export type Message =
  | { role: "user"; content: UserPart[] }
  | { role: "assistant"; text: string; toolCalls: ToolCall[] }
  | { role: "tool"; results: ToolResult[] };

export interface LlmRequest {
  model: string;
  system: string;
  messages: Message[];
  tools: ToolSpec[];
  maxTokens: number;
  signal: AbortSignal;
  /** Called when the provider tries the request again after an attempt answered HTTP 429 or 5xx
   *  (`attempt` is the new attempt's number, 2 for the first retry); not called by providers that do
   *  not retry. */
  onRetry?(r: { status: number; attempt: number }): void;
}

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
  | { type: "thinking"; text: string }
  | { type: "tool_call"; call: ToolCall }
  | { type: "done"; stopReason: StopReason; usage: Usage }
  | { type: "error"; error: LlmError };

export interface LlmProvider {
  readonly name: string;
  /** Streams one response. Ends after exactly one `done` or `error` event. Never throws. */
  stream(req: LlmRequest): AsyncIterable<LlmEvent>;
  /** The model ids the endpoint offers; rejects when it cannot say (absent: it never can). */
  listModels?(signal: AbortSignal): Promise<string[]>;
}
