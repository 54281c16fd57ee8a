// The Anthropic request body serialized incrementally (AnthropicBodyWriter) is, request after request
// of a session, byte for byte JSON.stringify of the reference body (toAnthropicBody): as the cache
// breakpoints move from message to message, as messages merge, with thinking, the 1 h TTL, caching off,
// and when the system prompt, the tools or the thinking level change mid-session.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type FakeLlm, startFakeLlm } from "../../tests/fake-llm.ts";
import { AnthropicBodyWriter, anthropicProvider, toAnthropicBody } from "./anthropic.ts";
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
  h.push({ role: "assistant", text: "", toolCalls: [] });
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
  const changes: Partial<LlmRequest>[] = [
    {},
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

let fake: FakeLlm;
beforeAll(async () => void (fake = await startFakeLlm()));
afterAll(() => fake.close());

test("anthropic body bytes: what reaches the server is the reference body, sent as JSON", async () => {
  const provider = anthropicProvider({ apiKey: "k", baseUrl: fake.anthropicBaseUrl, maxResponseBytes: 1 << 20, timeoutS: 10, maxRetries: 0 });
  const steps = session();
  fake.script(steps.map(() => ({ text: "ok" })));
  const sent: LlmRequest[] = [];
  for (const [i, messages] of steps.entries()) {
    const req = request(messages, i % 2 ? { thoughtLevel: "low" } : {});
    sent.push(req);
    for await (const ev of provider.stream(req)) if (ev.type === "error") throw new Error(ev.error.message);
  }
  expect(fake.requests.map((r) => r.text)).toEqual(sent.map((r) => JSON.stringify(toAnthropicBody(r))));
  expect(fake.requests.map((r) => r.headers["content-type"])).toEqual(sent.map(() => "application/json"));
});
