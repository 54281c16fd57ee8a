// Request bodies serialized incrementally (body-text.ts) are, request after request of a session, byte
// for byte JSON.stringify of each adapter's reference body: for Anthropic as the cache breakpoints move
// from message to message, as messages merge, with thinking, the 1 h TTL and caching off; for all three
// when the system prompt, the tools or the options change mid-session; and as they reach the server.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type FakeLlm, startFakeLlm } from "../../tests/fake-llm.ts";
import { AnthropicBodyWriter, anthropicProvider, toAnthropicBody } from "./anthropic.ts";
import { OpenAiBodyWriter, openaiProvider, toOpenAiBody } from "./openai.ts";
import { ResponsesBodyWriter, toResponsesBody } from "./openai-responses.ts";
import type { LlmRequest, Message, ToolSpec } from "./types.ts";

const tools: ToolSpec[] = [
  { name: "dev__shell", description: "run a command", inputSchema: { type: "object", properties: { command: { type: "string" } } } },
  { name: "dev__str_replace", description: "edit \"a\" file\n", inputSchema: { type: "object" } },
];

/** A session's history as it grows, the same message objects from request to request. */
function session(): Message[][] {
  const steps: Message[][] = [];
  const h: Message[] = [{ role: "user", content: [{ type: "text", text: "look at é and \u2028 and \"quotes\"" }] }];
  steps.push([...h]);
  h.push({ role: "assistant", text: "Checking.", toolCalls: [{ id: "c1", name: "dev__shell", input: { command: "ls" } }], reasoning: [{ text: "ls first", signature: "sig1" }] });
  h.push({ role: "tool", results: [{ callId: "c1", content: "a.txt", isError: false, images: [{ mimeType: "image/png", data: "iVBORw0KGgo=" }] }] });
  steps.push([...h]);
  // Tool results and a steering message merge into one user message.
  h.push({ role: "assistant", text: "", toolCalls: [{ id: "c2", name: "dev__str_replace", input: {} }], reasoning: [{ redacted: "xx" }] });
  h.push({ role: "tool", results: [{ callId: "c2", content: "", isError: true }] });
  h.push({ role: "user", content: [{ type: "text", text: "also check b" }] });
  steps.push([...h]);
  h.push({ role: "assistant", text: "", toolCalls: [], reasoning: [{ encrypted: "enc", summary: ["thought"] }] });
  h.push({ role: "user", content: [{ type: "text", text: "go on" }] });
  steps.push([...h]);
  for (let i = 3; i < 9; i++) {
    h.push({ role: "assistant", text: `step ${i}`, toolCalls: [{ id: `c${i}`, name: "dev__shell", input: { command: `echo ${i}` } }] });
    h.push({ role: "tool", results: [{ callId: `c${i}`, content: `out ${i}`, isError: false }] });
    steps.push([...h]);
  }
  return steps;
}

function request(messages: Message[], over: Partial<LlmRequest> = {}): LlmRequest {
  return { model: "claude-test", system: "You are terse.", messages, tools: tools.map((t) => ({ ...t })), maxTokens: 32_000, signal: new AbortController().signal, ...over };
}

const variants: Partial<LlmRequest>[] = [{}, { promptCache: "1h" }, { promptCache: "off" }, { thoughtLevel: "low" }, { thoughtLevel: "high", promptCache: "1h" }];

test("anthropic body bytes: each request of a session equals JSON.stringify of its params, as breakpoints move", () => {
  for (const over of variants) {
    const writer = new AnthropicBodyWriter();
    for (const messages of session()) {
      const req = request(messages, over);
      expect(writer.text(req)).toBe(JSON.stringify(toAnthropicBody(req)));
    }
  }
});

test("anthropic body bytes: a change of system prompt, tools, thinking or caching mid-session is serialized anew", () => {
  const writer = new AnthropicBodyWriter();
  const steps = session();
  const schema = { type: "object", properties: {} };
  const changes: Partial<LlmRequest>[] = [
    {},
    // One tool's one part changed from one request to the next, all else the same.
    { tools: [tools[0]!, { ...tools[1]!, description: "edit" }] },
    { tools: [tools[0]!, { ...tools[1]!, description: "edit", inputSchema: schema }] },
    { tools: [tools[0]!, { name: "dev__edit", description: "edit", inputSchema: schema }] },
    { system: "You are verbose." },
    { tools: tools.slice(0, 1) },
    { tools: [tools[0]!, { ...tools[1]!, description: "edit" }] },
    { thoughtLevel: "medium" },
    {},
    { promptCache: "off" },
    { model: "other", maxTokens: 4096, thoughtLevel: "high" },
    { system: "" , tools: [] },
    {},
  ];
  steps.forEach((messages, i) => {
    const req = request(messages, changes[i % changes.length]);
    expect(writer.text(req)).toBe(JSON.stringify(toAnthropicBody(req)));
  });
});

const openAiChanges: Partial<LlmRequest>[] = [
  {},
  { cacheKey: "s1" },
  { cacheKey: "s1", thoughtLevel: "low" },
  { cacheKey: "s2", system: "" },
  { tools: [] },
  { tools: [tools[0]!, { ...tools[1]!, inputSchema: { type: "object", properties: {} } }] },
  { maxTokens: 10, model: "gpt-x" },
  { thoughtLevel: "off" },
  {},
];

test("openai chat body bytes: each request of a session equals JSON.stringify of its params, also as the options change", () => {
  for (const [official, cacheKey] of [[true, true], [false, false], [false, true]] as const) {
    for (const steady of [true, false]) {
      const writer = new OpenAiBodyWriter(official, cacheKey);
      session().forEach((messages, i) => {
        const req = request(messages, steady ? { cacheKey: "s1" } : openAiChanges[i % openAiChanges.length]);
        expect(writer.text(req)).toBe(JSON.stringify(toOpenAiBody(req, official, cacheKey)));
      });
    }
  }
});

test("openai responses body bytes: each request of a session equals JSON.stringify of its params, also as the options change", () => {
  for (const cacheKey of [true, false]) {
    for (const steady of [true, false]) {
      const writer = new ResponsesBodyWriter(cacheKey);
      session().forEach((messages, i) => {
        const req = request(messages, steady ? { cacheKey: "s1", thoughtLevel: "high" } : openAiChanges[i % openAiChanges.length]);
        expect(writer.text(req)).toBe(JSON.stringify(toResponsesBody(req, cacheKey)));
      });
    }
  }
});

let fake: FakeLlm;
beforeAll(async () => void (fake = await startFakeLlm()));
afterAll(() => fake.close());

const providers = [
  { name: "anthropic", make: () => anthropicProvider({ apiKey: "k", baseUrl: fake.anthropicBaseUrl, maxResponseBytes: 1 << 20, timeoutS: 10, maxRetries: 0 }), reference: toAnthropicBody },
  { name: "openai chat", make: () => openaiProvider({ apiKey: "k", baseUrl: fake.openaiBaseUrl, maxResponseBytes: 1 << 20, timeoutS: 10, maxRetries: 0 }), reference: (r: LlmRequest) => toOpenAiBody(r, false) },
  {
    name: "openai responses",
    make: () => openaiProvider({ apiKey: "k", baseUrl: fake.openaiBaseUrl, maxResponseBytes: 1 << 20, timeoutS: 10, maxRetries: 0 }, { api: "responses" }),
    reference: (r: LlmRequest) => toResponsesBody(r, false),
  },
];

test.each(providers)("$name body bytes: what reaches the server is the reference body, sent as JSON", async ({ make, reference }) => {
  fake.requests.length = 0;
  const provider = make();
  const steps = session();
  fake.script(steps.map(() => ({ text: "ok" })));
  const sent: LlmRequest[] = [];
  for (const [i, messages] of steps.entries()) {
    const req = request(messages, i % 2 ? { thoughtLevel: "low" } : {});
    sent.push(req);
    const events: string[] = [];
    for await (const ev of provider.stream(req)) {
      if (ev.type === "error") throw new Error(ev.error.message);
      if (ev.type === "text") events.push(ev.text);
    }
    // Still streamed and parsed by the SDK: the answer arrives.
    expect(events.join("")).toBe("ok");
  }
  expect(fake.requests.map((r) => r.text)).toEqual(sent.map((r) => JSON.stringify(reference(r))));
  expect(fake.requests.map((r) => r.headers["content-type"])).toEqual(sent.map(() => "application/json"));
});
