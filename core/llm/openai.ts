// Owns the OpenAI adapter: the only module loading `openai`, one client for both APIs — Responses
// (mapped in openai-responses.ts) and Chat Completions (mapped here, for any compatible endpoint:
// Ollama, vLLM, gateways; it tolerates missing usage, one-chunk tool arguments, reused tool-call
// indexes) — and which API and whether prompt_cache_key go to an endpoint. Retries are the SDK's.
import OpenAI from "openai";
import {
  classifyFailure,
  type Endpoint,
  errorText,
  parseToolInput,
  type RequestRun,
  type SdkProviderOptions,
  RunRouter,
  sdkClientOptions,
  streamThroughSdk,
} from "./http-edge.ts";
import { FrameCache, ItemCache, joinBody, splitFrame } from "./body-text.ts";
import { dataUrl, openAiUsage, ResponsesBodyWriter, ResponsesFold, toolResultText } from "./openai-responses.ts";
import type { OpenAiApi } from "./provider-names.ts";
import type { LlmEvent, LlmProvider, LlmRequest, Message, StopReason, Usage } from "./types.ts";

type Param = OpenAI.Chat.ChatCompletionMessageParam;
type Chunk = OpenAI.Chat.ChatCompletionChunk;

const DEFAULT_BASE_URL = "https://api.openai.com/v1";
const OFFICIAL_HOST = "api.openai.com";

/** Whether a base URL (undefined = the SDK's default) is OpenAI's own endpoint. */
export function isOfficialOpenAi(baseUrl: string | undefined): boolean {
  if (baseUrl === undefined) return true;
  try {
    return new URL(baseUrl).hostname === OFFICIAL_HOST;
  } catch {
    return false;
  }
}

/** What config says beyond the endpoint: the API (absent: Responses on OpenAI's endpoint, Chat
 *  elsewhere) and whether `prompt_cache_key` is sent (absent: to OpenAI's endpoint only). */
export interface OpenAiOptions {
  api?: OpenAiApi;
  promptCacheKey?: boolean;
}

const FINISH: Record<string, StopReason> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  function_call: "tool_use",
  length: "max_tokens",
  content_filter: "refusal",
};

function toParams(m: Message): Param[] {
  if (m.role === "user") {
    const only = m.content.length === 1 && m.content[0]!.type === "text" ? m.content[0]!.text : undefined;
    if (only !== undefined) return [{ role: "user", content: only }];
    return [
      {
        role: "user",
        content: m.content.map((p): OpenAI.Chat.ChatCompletionContentPart =>
          p.type === "text"
            ? { type: "text", text: p.text }
            : { type: "image_url", image_url: { url: dataUrl(p) } },
        ),
      },
    ];
  }
  if (m.role === "assistant") {
    if (m.toolCalls.length === 0) return [{ role: "assistant", content: m.text }];
    return [
      {
        role: "assistant",
        content: m.text === "" ? null : m.text,
        tool_calls: m.toolCalls.map((c) => ({
          id: c.id,
          type: "function" as const,
          function: { name: c.name, arguments: JSON.stringify(c.input) },
        })),
      },
    ];
  }
  const out: Param[] = m.results.map((r) => ({
    role: "tool" as const,
    tool_call_id: r.callId,
    content: toolResultText(r),
  }));
  // Tool messages carry text only in this API: images a tool returned follow in one user message.
  const images = m.results.flatMap((r) => (r.images ?? []).map((i) => ({ ...i, callId: r.callId })));
  if (images.length > 0) {
    out.push({
      role: "user",
      content: images.flatMap((i): OpenAI.Chat.ChatCompletionContentPart[] => [
        { type: "text", text: `Image returned by tool call ${i.callId}:` },
        { type: "image_url", image_url: { url: dataUrl(i) } },
      ]),
    });
  }
  return out;
}

/** The Chat request body; `cacheKey` (default: `official`) says whether `prompt_cache_key` goes out. */
export function toOpenAiBody(req: LlmRequest, official: boolean, cacheKey = official): OpenAI.Chat.ChatCompletionCreateParamsStreaming {
  const messages: Param[] = req.system === "" ? [] : [{ role: "system", content: req.system }];
  for (const m of req.messages) messages.push(...toParams(m));
  const body: OpenAI.Chat.ChatCompletionCreateParamsStreaming = {
    model: req.model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
  };
  // OpenAI's current models take max_completion_tokens; compatible servers still read max_tokens.
  if (official) body.max_completion_tokens = req.maxTokens;
  else body.max_tokens = req.maxTokens;
  // `off` sends nothing: models without reasoning refuse the field, and the others keep their default.
  if (req.thoughtLevel !== undefined && req.thoughtLevel !== "off") body.reasoning_effort = req.thoughtLevel;
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      type: "function" as const,
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    }));
  }
  if (cacheKey && req.cacheKey) body.prompt_cache_key = req.cacheKey;
  return body;
}

/** The Chat body as text, byte for byte `JSON.stringify(toOpenAiBody(req, official, cacheKey))`,
 *  serializing only what is new (body-text.ts). */
export class OpenAiBodyWriter {
  readonly #items = new ItemCache<string[]>();
  readonly #frames = new FrameCache();

  constructor(
    private readonly official: boolean,
    private readonly cacheKey = official,
  ) {}

  text(req: LlmRequest): string {
    const frame = this.#frames.of(req, () => {
      const system = req.system === "" ? "" : JSON.stringify({ role: "system", content: req.system });
      return splitFrame(JSON.stringify(toOpenAiBody({ ...req, messages: [] }, this.official, this.cacheKey)), `{"model":${JSON.stringify(req.model)},"messages":[${system}`);
    });
    const items: string[] = [];
    for (const m of req.messages) for (const p of this.#items.of(m, undefined, (x) => toParams(x).map((q) => JSON.stringify(q)))) items.push(p);
    return joinBody(frame, items);
  }
}

function chatUsage(u: OpenAI.CompletionUsage): Usage {
  const details = u.prompt_tokens_details;
  return openAiUsage(u.prompt_tokens ?? 0, u.completion_tokens ?? 0, details?.cached_tokens ?? 0, details?.cache_write_tokens ?? 0);
}

type Slot = { id: string; name: string; args: string };

/** Folds chunks into text/thinking events; tool calls are assembled by index and emitted at the end. */
class ChunkFold {
  usage: Usage = { inputTokens: 0, outputTokens: 0 };
  finishReason: string | undefined;
  private slots: Slot[] = [];
  private byIndex = new Map<number, Slot>();

  *push(chunk: Chunk): Generator<LlmEvent> {
    if (chunk.usage) this.usage = chatUsage(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta = (choice.delta ?? {}) as Chunk["choices"][number]["delta"] & { reasoning_content?: string; reasoning?: string };
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") yield { type: "thinking", text: reasoning };
    if (typeof delta.content === "string" && delta.content !== "") yield { type: "text", text: delta.content };
    for (const tc of delta.tool_calls ?? []) this.addToolDelta(tc);
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  private addToolDelta(tc: NonNullable<Chunk["choices"][number]["delta"]["tool_calls"]>[number]): void {
    const index = tc.index ?? this.slots.length;
    let slot = this.byIndex.get(index);
    // Some servers reuse index 0 for every call; a new id means a new call.
    if (!slot || (tc.id && slot.id && tc.id !== slot.id)) {
      slot = { id: tc.id ?? "", name: "", args: "" };
      this.byIndex.set(index, slot);
      this.slots.push(slot);
    }
    if (tc.id) slot.id = tc.id;
    if (tc.function?.name) slot.name += tc.function.name;
    if (tc.function?.arguments) slot.args += tc.function.arguments;
  }

  get complete(): boolean {
    return this.finishReason !== undefined;
  }

  /** Tool calls (assembled by index, emitted once complete), then `done`. */
  *finish(): Generator<LlmEvent> {
    yield* this.calls();
    yield { type: "done", stopReason: this.stopReason(), usage: this.usage };
  }

  *calls(): Generator<LlmEvent> {
    let n = 0;
    for (const s of this.slots) {
      n++;
      // A call without a name still reaches the turn, which fails it visibly for the model and the
      // client; only a slot with nothing at all in it is noise.
      if (!s.name && !s.id && !s.args) continue;
      yield { type: "tool_call", call: { id: s.id || `call_${n}`, name: s.name, input: parseToolInput(s.args) } };
    }
  }

  stopReason(): StopReason {
    // Some compatible servers say "stop" while returning tool calls.
    if (this.slots.some((s) => s.name)) return "tool_use";
    return FINISH[this.finishReason ?? ""] ?? "other";
  }
}

function failureOf(err: unknown, ep: Endpoint) {
  const status = err instanceof OpenAI.APIError ? err.status : undefined;
  const connection = err instanceof OpenAI.APIConnectionError;
  return classifyFailure({ status, message: errorText(err), connection }, ep);
}

export function openaiProvider(opts: SdkProviderOptions, config: OpenAiOptions = {}): LlmProvider {
  const ep: Endpoint = { keyVar: "OPENAI_API_KEY", baseVar: "OPENAI_BASE_URL", baseUrl: opts.baseUrl ?? DEFAULT_BASE_URL };
  const official = isOfficialOpenAi(opts.baseUrl);
  const api = config.api ?? (official ? "responses" : "chat");
  const cacheKey = config.promptCacheKey ?? official;
  // Local servers (Ollama, vLLM) need no key, but the SDK insists on one.
  const apiKey = opts.apiKey || (opts.baseUrl ? "unused" : undefined);
  const router = new RunRouter();
  let client: OpenAI | undefined; // one for the provider's life, built on first use
  const sdk = () => (client ??= new OpenAI(sdkClientOptions(apiKey ?? "", ep, opts, router)));
  const chatBodies = new OpenAiBodyWriter(official, cacheKey);
  const responsesBodies = new ResponsesBodyWriter(cacheKey);
  // The body goes as text (the SDK sends a string body with a content-type as it is); the params
  // left for the SDK are what it reads beyond the body: the model and stream.
  const asText = (run: RequestRun, body: string) => {
    const routed = router.requestOptions(run);
    return { ...routed, body, headers: { ...routed.headers, "content-type": "application/json" } };
  };
  const missingKey = apiKey
    ? undefined
    : "OPENAI_API_KEY is not set: export OPENAI_API_KEY=<your key>, or set OPENAI_BASE_URL to a local server (e.g. http://127.0.0.1:11434/v1 for Ollama), or use ANTHROPIC_API_KEY with TENDRIL_PROVIDER=anthropic";
  return {
    name: "openai",
    thoughtLevels: true,
    stream(req: LlmRequest): AsyncGenerator<LlmEvent> {
      const failure = (err: unknown) => failureOf(err, ep);
      if (api === "responses") {
        return streamThroughSdk(req, opts, {
          ep,
          missingKey,
          fold: new ResponsesFold(),
          open: (run) => sdk().responses.create({ model: req.model, input: [], stream: true }, asText(run, responsesBodies.text(req))),
          failureOf: failure,
        });
      }
      return streamThroughSdk(req, opts, {
        ep,
        missingKey,
        fold: new ChunkFold(),
        open: (run) => sdk().chat.completions.create({ model: req.model, messages: [], stream: true }, asText(run, chatBodies.text(req))),
        failureOf: failure,
      });
    },
    async listModels(signal) {
      if (!apiKey) throw new Error("no OPENAI_API_KEY");
      const client = new OpenAI({ apiKey, baseURL: ep.baseUrl, maxRetries: 0 });
      const page = await client.models.list({ signal });
      return page.data.map((m) => m.id);
    },
  };
}
