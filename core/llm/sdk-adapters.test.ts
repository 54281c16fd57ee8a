// The Anthropic and OpenAI (Chat and Responses) adapters against the loopback fake LLM: the same
// user-visible behaviour (streaming, tool calls, history shape, usage, stop reasons, retries, errors, bounds) for each.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import { type FakeLlm, startFakeLlm } from "../../tests/fake-llm.ts";
import { anthropicProvider } from "./anthropic.ts";
import type { SdkProviderOptions } from "./http-edge.ts";
import { openaiProvider } from "./openai.ts";
import type { LlmEvent, LlmProvider, LlmRequest, Message, ToolCall } from "./types.ts";

let fake: FakeLlm;
beforeAll(async () => void (fake = await startFakeLlm()));
afterAll(() => fake.close());
beforeEach(() => void (fake.requests.length = 0));

export async function collect(stream: AsyncIterable<LlmEvent>): Promise<LlmEvent[]> {
  const out: LlmEvent[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

function request(over: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: "test-model",
    system: "You are terse.",
    messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }],
    tools: [{ name: "dev__shell", description: "run a command", inputSchema: { type: "object", properties: { command: { type: "string" } } } }],
    maxTokens: 1000,
    signal: new AbortController().signal,
    ...over,
  };
}

const text = (evs: LlmEvent[]) => evs.flatMap((e) => (e.type === "text" ? [e.text] : []));
const calls = (evs: LlmEvent[]) => evs.flatMap((e) => (e.type === "tool_call" ? [e.call] : []));
const last = (evs: LlmEvent[]) => evs.at(-1)!;
const errorOf = (evs: LlmEvent[]) => {
  const e = last(evs);
  if (e.type !== "error") throw new Error(`expected an error event, got ${JSON.stringify(e)}`);
  return e.error;
};

async function refusedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

interface Case {
  name: "anthropic" | "openai" | "openai-responses";
  make: (o?: Partial<SdkProviderOptions>) => LlmProvider;
  keyVar: string;
  /** Base URL as the user would set it, for a given server root. */
  base: (root: string) => string;
  /** A response bound that a short answer's stream fits in and a 2,000-character one's does not
   *  (the Responses stream repeats the text in its done events, so its streams are larger). */
  bound: number;
}

const cases: Case[] = [
  {
    name: "anthropic",
    make: (o = {}) => anthropicProvider({ apiKey: "k", baseUrl: fake.anthropicBaseUrl, maxResponseBytes: 1 << 20, timeoutS: 10, maxRetries: 3, ...o }),
    keyVar: "ANTHROPIC_API_KEY",
    base: (root) => root,
    bound: 3000,
  },
  {
    name: "openai",
    make: (o = {}) => openaiProvider({ apiKey: "k", baseUrl: fake.openaiBaseUrl, maxResponseBytes: 1 << 20, timeoutS: 10, maxRetries: 3, ...o }),
    keyVar: "OPENAI_API_KEY",
    base: (root) => `${root}/v1`,
    bound: 3000,
  },
  {
    name: "openai-responses",
    make: (o = {}) => openaiProvider({ apiKey: "k", baseUrl: fake.openaiBaseUrl, maxResponseBytes: 1 << 20, timeoutS: 10, maxRetries: 3, ...o }, { api: "responses" }),
    keyVar: "OPENAI_API_KEY",
    base: (root) => `${root}/v1`,
    bound: 10_000,
  },
];

for (const c of cases) {
  describe(c.name, () => {
    test("text streams in several chunks, then done with usage and end_turn", async () => {
      fake.script([{ text: "The quick brown fox jumps over the lazy dog", usage: { input: 21, output: 8 } }]);
      const evs = await collect(c.make().stream(request()));
      expect(text(evs).length).toBeGreaterThan(2);
      expect(text(evs).join("")).toBe("The quick brown fox jumps over the lazy dog");
      expect(last(evs)).toEqual({ type: "done", stopReason: "end_turn", usage: { inputTokens: 21, outputTokens: 8 } });
    });

    test("thinking, a single tool call and parallel tool calls arrive assembled, in order", async () => {
      const a = { id: "c1", name: "dev__shell", input: { command: "ls -la /tmp", nested: { n: [1, 2] } } };
      const b = { id: "c2", name: "dev__str_replace", input: { path: "a.txt", old_str: "x", new_str: "y" } };
      fake.script([{ thinking: "checking the files first", text: "Let me look.", toolCalls: [a] }, { toolCalls: [a, b] }]);
      const one = await collect(c.make().stream(request()));
      expect(one.filter((e) => e.type === "thinking").map((e) => (e as { text: string }).text).join("")).toBe("checking the files first");
      expect(calls(one)).toEqual([a]);
      expect(last(one)).toMatchObject({ type: "done", stopReason: "tool_use" });
      const two = await collect(c.make().stream(request()));
      expect(calls(two)).toEqual([a, b]);
    });

    test("stop reasons map: max_tokens and refusal", async () => {
      fake.script([{ text: "cut", stopReason: "max_tokens" }, { text: "no", stopReason: "refusal" }]);
      expect(last(await collect(c.make().stream(request())))).toMatchObject({ stopReason: "max_tokens" });
      expect(last(await collect(c.make().stream(request())))).toMatchObject({ stopReason: "refusal" });
    });

    test("429 with retry-after, then success: one response, retried when the server said", async () => {
      // 0.8 s is above the SDKs' first default backoff (≤ 0.5 s), so the spacing proves retry-after was read.
      fake.script([{ fault: { status: 429, retryAfterS: 0.8 } }, { text: "ok now" }]);
      const evs = await collect(c.make().stream(request()));
      expect(text(evs).join("")).toBe("ok now");
      expect(last(evs).type).toBe("done");
      expect(fake.requests.length).toBe(2);
      expect(fake.requests[1]!.at - fake.requests[0]!.at).toBeGreaterThanOrEqual(750);
    });

    test("persistent 503 → server error after the SDK's retries", async () => {
      fake.script([1, 2].map(() => ({ fault: { status: 503, retryAfterS: 0.01 } })));
      const err = errorOf(await collect(c.make({ maxRetries: 1 }).stream(request())));
      expect(err.kind).toBe("server");
      expect(err.status).toBe(503);
    });

    test("401 → auth error naming the key variable", async () => {
      fake.script([{ fault: { status: 401 } }]);
      const err = errorOf(await collect(c.make().stream(request())));
      expect(err.kind).toBe("auth");
      expect(err.message).toContain(c.keyVar);
      expect(fake.requests.length).toBe(1);
    });

    test("other 4xx → bad_request with the server's message", async () => {
      fake.script([{ fault: { status: 400, body: JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "max_tokens too big" } }) } }]);
      const err = errorOf(await collect(c.make().stream(request())));
      expect(err.kind).toBe("bad_request");
      expect(err.message).toContain("max_tokens too big");
    });

    test("connection refused → transport error naming the URL", async () => {
      const url = c.base(`http://127.0.0.1:${await refusedPort()}`);
      const err = errorOf(await collect(c.make({ baseUrl: url, maxRetries: 0 }).stream(request())));
      expect(err.kind).toBe("transport");
      expect(err.message).toContain(url);
    });

    test("hang, then the caller aborts → aborted within a moment", async () => {
      const ctl = new AbortController();
      // Aborted once the fake has the request (and hangs on it).
      fake.respond(() => {
        ctl.abort();
        return { fault: { hang: true } };
      });
      const started = Date.now();
      try {
        const err = errorOf(await collect(c.make().stream(request({ signal: ctl.signal }))));
        expect(err.kind).toBe("aborted");
        expect(Date.now() - started).toBeLessThan(1000);
      } finally {
        fake.respond(undefined);
      }
    });

    test("abort mid-stream → aborted, not a truncated done", async () => {
      fake.script([{ text: "a long answer that keeps coming in many small pieces, on and on and on" }]);
      const ctl = new AbortController();
      const evs: LlmEvent[] = [];
      for await (const ev of c.make().stream(request({ signal: ctl.signal }))) {
        evs.push(ev);
        if (ev.type === "text") ctl.abort();
      }
      expect(errorOf(evs).kind).toBe("aborted");
    });

    test("LLM_TIMEOUT_S bounds a hanging request", async () => {
      fake.script([{ fault: { hang: true } }]);
      const err = errorOf(await collect(c.make({ timeoutS: 0.3, maxRetries: 0 }).stream(request())));
      expect(err.kind).toBe("transport");
      expect(err.message).toContain("LLM_TIMEOUT_S");
    });

    test("a stream cut mid-way → error, no done", async () => {
      fake.script([{ text: "this will be cut off before the end of the message", fault: { truncate: true } }]);
      const evs = await collect(c.make({ maxRetries: 0 }).stream(request()));
      expect(errorOf(evs).kind).toBe("transport");
      expect(evs.some((e) => e.type === "done")).toBe(false);
    });

    test("a response over MAX_LLM_RESPONSE_BYTES → too_large", async () => {
      fake.script([{ text: "word ".repeat(400) }]);
      const err = errorOf(await collect(c.make({ maxResponseBytes: 2000 }).stream(request())));
      expect(err.kind).toBe("too_large");
      expect(err.message).toContain("MAX_LLM_RESPONSE_BYTES");
    });

    test("one provider serves request after request: each keeps its own byte bound, and no internal header is sent", async () => {
      const p = c.make({ maxResponseBytes: c.bound });
      fake.script([{ text: "word ".repeat(400) }, { text: "short" }, { text: "again" }]);
      expect(errorOf(await collect(p.stream(request()))).kind).toBe("too_large");
      expect(text(await collect(p.stream(request()))).join("")).toBe("short");
      expect(text(await collect(p.stream(request()))).join("")).toBe("again");
      expect(fake.requests.length).toBe(3);
      for (const r of fake.requests) expect(Object.keys(r.headers).some((h) => h.toLowerCase().startsWith("x-tendril"))).toBe(false);
    });

    test("no key and no base URL → auth error naming the variable, no request made", async () => {
      const p = c.name === "anthropic"
        ? anthropicProvider({ maxResponseBytes: 1000, timeoutS: 5, maxRetries: 0 })
        : openaiProvider({ maxResponseBytes: 1000, timeoutS: 5, maxRetries: 0 });
      const err = errorOf(await collect(p.stream(request())));
      expect(err.kind).toBe("auth");
      expect(err.message).toContain(c.keyVar);
    });

    test("no key with a custom base URL still works (local servers)", async () => {
      fake.script([{ text: "local" }]);
      const evs = await collect(c.make({ apiKey: undefined }).stream(request()));
      expect(text(evs).join("")).toBe("local");
    });
  });
}

// ---- request shapes: the second request of a tool round trip carries the results correctly ----

const call: ToolCall = { id: "c1", name: "dev__shell", input: { command: "ls" } };
const call2: ToolCall = { id: "c2", name: "dev__shell", input: { command: "false" } };
const history: Message[] = [
  { role: "user", content: [{ type: "text", text: "look" }, { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" }] },
  { role: "assistant", text: "Checking.", toolCalls: [call, call2] },
  { role: "tool", results: [{ callId: "c1", content: "a.txt", isError: false }, { callId: "c2", content: "exit 1", isError: true }] },
];

test("anthropic request body: system, tools, tool_use and tool_result blocks, image", async () => {
  fake.script([{ text: "fine" }]);
  // TENDRIL_PROMPT_CACHE=off: the plain shapes, no cache breakpoint anywhere (prompt-cache.test.ts has them).
  await collect(cases[0]!.make().stream(request({ messages: history, promptCache: "off" })));
  expect(JSON.stringify(fake.requests[0]!.body)).not.toContain("cache_control");
  const body = fake.requests[0]!.body;
  expect(body.system).toBe("You are terse.");
  expect(body.stream).toBe(true);
  expect(body.max_tokens).toBe(1000);
  expect(body.tools).toEqual([{ name: "dev__shell", description: "run a command", input_schema: request().tools[0]!.inputSchema }]);
  expect(body.messages).toEqual([
    {
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "c1", name: "dev__shell", input: { command: "ls" } },
        { type: "tool_use", id: "c2", name: "dev__shell", input: { command: "false" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "c1", content: "a.txt", is_error: false },
        { type: "tool_result", tool_use_id: "c2", content: "exit 1", is_error: true },
      ],
    },
  ]);
});

test("openai request body: system message, function tools, tool_calls, tool messages, data-URL image", async () => {
  fake.script([{ text: "fine" }]);
  await collect(cases[1]!.make().stream(request({ messages: history })));
  const body = fake.requests[0]!.body;
  expect(body.stream_options).toEqual({ include_usage: true });
  expect(body.max_tokens).toBe(1000);
  expect(body.tools).toEqual([
    { type: "function", function: { name: "dev__shell", description: "run a command", parameters: request().tools[0]!.inputSchema } },
  ]);
  expect(body.messages).toEqual([
    { role: "system", content: "You are terse." },
    {
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      ],
    },
    {
      role: "assistant",
      content: "Checking.",
      tool_calls: [
        { id: "c1", type: "function", function: { name: "dev__shell", arguments: '{"command":"ls"}' } },
        { id: "c2", type: "function", function: { name: "dev__shell", arguments: '{"command":"false"}' } },
      ],
    },
    { role: "tool", tool_call_id: "c1", content: "a.txt" },
    { role: "tool", tool_call_id: "c2", content: "[tool error] exit 1" },
  ]);
});
