// The OpenAI adapter's cost-facing choices against the loopback fake LLM: which API an endpoint gets,
// when `prompt_cache_key` is sent, cached tokens in the usage, the Responses request body (input
// items carried back, reasoning, images, limits), a mid-stream failure, config's keys, record/replay.
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from "bun:test";
import { createServer } from "node:http";
import { type FakeLlm, startFakeLlm } from "../../tests/fake-llm.ts";
import { fakeEncrypted } from "../../tests/fake-llm-responses.ts";
import { ConfigError, loadConfig } from "../config.ts";
import type { SdkProviderOptions } from "./http-edge.ts";
import { type OpenAiOptions, openaiProvider } from "./openai.ts";
import { createProvider } from "./provider.ts";
import { withRecording } from "./record.ts";
import { replayProvider } from "./replay.ts";
import type { LlmEvent, LlmRequest, Message } from "./types.ts";

let fake: FakeLlm;
beforeAll(async () => void (fake = await startFakeLlm()));
afterAll(() => fake.close());
beforeEach(() => void (fake.requests.length = 0));

async function collect(stream: AsyncIterable<LlmEvent>): Promise<LlmEvent[]> {
  const out: LlmEvent[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

function request(over: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: "gpt-test",
    system: "You are terse.",
    messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }],
    tools: [{ name: "dev__shell", description: "run a command", inputSchema: { type: "object", properties: { command: { type: "string" } } } }],
    maxTokens: 1000,
    signal: new AbortController().signal,
    cacheKey: "sess-42",
    ...over,
  };
}

const sdk = (o: Partial<SdkProviderOptions> = {}): SdkProviderOptions => ({ apiKey: "k", baseUrl: fake.openaiBaseUrl, maxResponseBytes: 1 << 20, timeoutS: 10, maxRetries: 2, ...o });
const make = (config: OpenAiOptions = {}, o: Partial<SdkProviderOptions> = {}) => openaiProvider(sdk(o), config);
const last = (evs: LlmEvent[]) => evs.at(-1)!;

// ---- OpenAI's own endpoint: requests to api.openai.com are sent to the fake instead ----

const realFetch = globalThis.fetch;
function routeOfficialToFake(): void {
  globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    return realFetch(url.replace("https://api.openai.com/v1", fake.openaiBaseUrl), init);
  }) as typeof fetch;
}
afterEach(() => void (globalThis.fetch = realFetch));

test("OpenAI's own endpoint: the Responses API by default, with prompt_cache_key = the session id", async () => {
  routeOfficialToFake();
  fake.script([{ text: "hi" }, { text: "hi" }]);
  await collect(make({}, { baseUrl: undefined }).stream(request()));
  await collect(make({}, { baseUrl: "https://api.openai.com/v1" }).stream(request()));
  for (const r of fake.requests) {
    expect(r.path).toBe("/v1/responses");
    expect(r.body.prompt_cache_key).toBe("sess-42");
  }
});

test("OpenAI's own endpoint with TENDRIL_OPENAI_API=chat: Chat Completions, prompt_cache_key still sent", async () => {
  routeOfficialToFake();
  fake.script([{ text: "hi" }]);
  await collect(make({ api: "chat" }, { baseUrl: undefined }).stream(request()));
  expect(fake.requests[0]!.path).toBe("/v1/chat/completions");
  expect(fake.requests[0]!.body.prompt_cache_key).toBe("sess-42");
  expect(fake.requests[0]!.body.max_completion_tokens).toBe(1000);
});

test("OpenAI's own endpoint with prompt_cache_key = false: not sent", async () => {
  routeOfficialToFake();
  fake.script([{ text: "hi" }]);
  await collect(make({ promptCacheKey: false }, { baseUrl: undefined }).stream(request()));
  expect(fake.requests[0]!.path).toBe("/v1/responses");
  expect("prompt_cache_key" in fake.requests[0]!.body).toBe(false);
});

test("another base URL: Chat Completions by default and no prompt_cache_key; prompt_cache_key = true sends it on both APIs", async () => {
  fake.script([{ text: "a" }, { text: "b" }, { text: "c" }, { text: "d" }]);
  await collect(make().stream(request()));
  await collect(make({ api: "responses" }).stream(request()));
  await collect(make({ promptCacheKey: true }).stream(request()));
  await collect(make({ api: "responses", promptCacheKey: true }).stream(request()));
  expect(fake.requests.map((r) => [r.path, r.body.prompt_cache_key ?? null])).toEqual([
    ["/v1/chat/completions", null],
    ["/v1/responses", null],
    ["/v1/chat/completions", "sess-42"],
    ["/v1/responses", "sess-42"],
  ]);
});

test("config: prompt_cache_key = true and openai_api reach the provider through createProvider", async () => {
  const file = 'prompt_cache_key = true\nopenai_api = "responses"\n';
  const env = { HOME: "/nonexistent", TENDRIL_CONFIG: "/cfg.toml", TENDRIL_PROVIDER: "openai", OPENAI_API_KEY: "k", OPENAI_BASE_URL: fake.openaiBaseUrl };
  const cfg = await loadConfig({}, env, (p) => (p === "/cfg.toml" ? file : undefined));
  fake.script([{ text: "ok" }]);
  await collect((await createProvider(cfg, () => undefined)).stream(request()));
  expect(fake.requests[0]!.path).toBe("/v1/responses");
  expect(fake.requests[0]!.body.prompt_cache_key).toBe("sess-42");
});

test("config: a bad TENDRIL_OPENAI_API, openai_api or prompt_cache_key is refused, naming it", async () => {
  const load = (env: Record<string, string>, file?: string) =>
    loadConfig({}, { HOME: "/nonexistent", ...(file ? { TENDRIL_CONFIG: "/cfg.toml" } : {}), ...env }, (p) => (p === "/cfg.toml" ? file : undefined));
  const refused = async (p: Promise<unknown>) => {
    const err = await p.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  };
  expect(await refused(load({ TENDRIL_OPENAI_API: "soap" }))).toBe('TENDRIL_OPENAI_API must be one of responses, chat, got "soap"');
  expect(await refused(load({}, 'openai_api = "Chat"\n'))).toContain('openai_api must be one of responses, chat, got "Chat"');
  // an empty value in the file is refused, not taken as unset (an empty variable is unset, as usual)
  expect(await refused(load({}, 'openai_api = ""\n'))).toContain('openai_api must be one of responses, chat, got ""');
  expect((await load({ TENDRIL_OPENAI_API: "" }, 'openai_api = "chat"\n')).openaiApi).toBe("chat");
  expect(await refused(load({}, 'prompt_cache_key = "yes"\n'))).toContain("prompt_cache_key");
  expect((await load({ TENDRIL_OPENAI_API: "chat" }, 'openai_api = "responses"\n')).openaiApi).toBe("chat");
});

// ---- usage: cached tokens come out of inputTokens ----

test("usage with cached tokens: inputTokens is the uncached part, cacheReadTokens the cached one (Chat and Responses)", async () => {
  fake.script([{ text: "x", usage: { input: 5000, output: 40, cached: 4608 } }, { text: "x", usage: { input: 5000, output: 40, cached: 4608 } }]);
  const want: LlmEvent = { type: "done", stopReason: "end_turn", usage: { inputTokens: 392, outputTokens: 40, cacheReadTokens: 4608 } };
  expect(last(await collect(make({ api: "chat" }).stream(request())))).toEqual(want);
  expect(last(await collect(make({ api: "responses" }).stream(request())))).toEqual(want);
});

// ---- the Responses request body ----

const history: Message[] = [
  { role: "user", content: [{ type: "text", text: "look" }, { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" }] },
  {
    role: "assistant",
    text: "Checking.",
    toolCalls: [{ id: "call_1", name: "dev__shell", input: { command: "ls" } }],
    reasoning: [{ text: "anthropic thought", signature: "sig" }, { encrypted: "enc_A", summary: ["first", "second"] }],
  },
  {
    role: "tool",
    results: [{ callId: "call_1", content: "exit 1", isError: true, images: [{ mimeType: "image/png", data: "AAAA" }] }],
  },
];

test("Responses body: instructions, function tools, input items carried back, images, effort, limits, no server-side storage", async () => {
  fake.script([{ text: "fine" }]);
  await collect(make({ api: "responses" }).stream(request({ messages: history, thoughtLevel: "high" })));
  const body = fake.requests[0]!.body;
  expect(body.instructions).toBe("You are terse.");
  expect(body.store).toBe(false);
  expect(body.include).toEqual(["reasoning.encrypted_content"]);
  expect(body.stream).toBe(true);
  expect(body.max_output_tokens).toBe(1000);
  expect(body.reasoning).toEqual({ effort: "high", summary: "auto" });
  expect(body.tools).toEqual([{ type: "function", name: "dev__shell", description: "run a command", parameters: request().tools[0]!.inputSchema, strict: false }]);
  expect(body.input).toEqual([
    {
      role: "user",
      content: [
        { type: "input_text", text: "look" },
        { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=", detail: "auto" },
      ],
    },
    // Anthropic's signed thinking is not this API's: only the encrypted item goes back, without an id.
    { type: "reasoning", summary: [{ type: "summary_text", text: "first" }, { type: "summary_text", text: "second" }], encrypted_content: "enc_A" },
    { role: "assistant", content: "Checking." },
    { type: "function_call", call_id: "call_1", name: "dev__shell", arguments: '{"command":"ls"}' },
    {
      type: "function_call_output",
      call_id: "call_1",
      output: [
        { type: "input_text", text: "[tool error] exit 1" },
        { type: "input_image", image_url: "data:image/png;base64,AAAA", detail: "auto" },
      ],
    },
  ]);
});

test("Responses body: thought level off sends no reasoning field; no system prompt sends no instructions", async () => {
  fake.script([{ text: "fine" }]);
  await collect(make({ api: "responses" }).stream(request({ system: "", thoughtLevel: "off" })));
  const body = fake.requests[0]!.body;
  expect("reasoning" in body).toBe(false);
  expect("instructions" in body).toBe(false);
  expect(body.input).toEqual([{ role: "user", content: "hello" }]);
});

test("Responses: a reasoning item streams its summary as thinking, then one block with its encrypted content", async () => {
  fake.script([{ thinking: "I should list the files", toolCalls: [{ id: "call_9", name: "dev__shell", input: { command: "ls" } }] }]);
  const evs = await collect(make({ api: "responses" }).stream(request()));
  const thinking = evs.filter((e) => e.type === "thinking");
  expect(thinking.map((e) => e.text).join("")).toBe("I should list the files");
  expect(thinking.at(-1)).toEqual({ type: "thinking", text: "", encrypted: fakeEncrypted("I should list the files"), summary: ["I should list the files"] });
  expect(evs.filter((e) => e.type === "tool_call")).toEqual([{ type: "tool_call", call: { id: "call_9", name: "dev__shell", input: { command: "ls" } } }]);
  expect(last(evs)).toMatchObject({ type: "done", stopReason: "tool_use" });
});

test("Responses: a response.failed event mid-stream ends in an error event carrying the server's code and message, no done", async () => {
  // The fake scripts whole turns only; this server sends the start of a response, then its failure.
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (type: string, body: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: 0, ...body })}\n\n`);
    send("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: "Partial", logprobs: [] });
    send("response.failed", { response: { id: "resp_1", status: "failed", error: { code: "server_error", message: "the model crashed" }, output: [] } });
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  try {
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
    const evs = await collect(make({ api: "responses" }, { baseUrl: base, maxRetries: 0 }).stream(request()));
    expect(evs[0]).toEqual({ type: "text", text: "Partial" });
    expect(evs.some((e) => e.type === "done")).toBe(false);
    const err = last(evs);
    expect(err.type).toBe("error");
    expect(err.type === "error" && err.error.message).toContain("server_error: the model crashed");
  } finally {
    server.close();
  }
});

// ---- record and replay cover the Responses API ----

test("a recorded Responses exchange (encrypted reasoning, a tool call, cached usage) replays to the same events", async () => {
  fake.script([{ thinking: "plan", text: "Running it.", toolCalls: [{ id: "call_r", name: "dev__shell", input: { command: "pwd" } }], usage: { input: 2048, output: 9, cached: 1024 } }]);
  const lines: string[] = [];
  const recorded = await collect(withRecording(make({ api: "responses" }), "unused", (_f, line) => void lines.push(line)).stream(request()));
  expect(recorded.some((e) => e.type === "thinking" && e.encrypted === fakeEncrypted("plan"))).toBe(true);
  expect(last(recorded)).toEqual({ type: "done", stopReason: "tool_use", usage: { inputTokens: 1024, outputTokens: 9, cacheReadTokens: 1024 } });
  const replayed = await collect(replayProvider(lines.join("")).stream(request()));
  expect(replayed).toEqual(recorded);
});
