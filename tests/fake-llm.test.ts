// Checks the fake LLM against the official Anthropic and OpenAI clients: if they accept it, product
// code tested against it meets the same wire. Covers streaming, JSON, tool calls, faults and the process mode.
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeLlm, startFakeLlm } from "./fake-llm.ts";

let fake: FakeLlm;
let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(async () => {
  fake = await startFakeLlm();
  anthropic = new Anthropic({ apiKey: "test", baseURL: fake.anthropicBaseUrl, maxRetries: 2, timeout: 5000 });
  openai = new OpenAI({ apiKey: "test", baseURL: fake.openaiBaseUrl, maxRetries: 2, timeout: 5000 });
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.respond(undefined);
  fake.requests.length = 0;
});

const shellCall = { id: "c1", name: "dev__shell", input: { command: "ls -la", workdir: "." } };

test("anthropic streaming: text in several deltas, tool input assembled, stop reason and usage", async () => {
  fake.script([{ text: "Hello from the fake model", toolCalls: [shellCall], usage: { input: 12, output: 34 } }]);
  const stream = await anthropic.messages.create({
    model: "m",
    max_tokens: 100,
    messages: [{ role: "user", content: "hi" }],
    stream: true,
  });
  const types: string[] = [];
  let text = "";
  let json = "";
  let stop: string | null = null;
  let output = 0;
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.type === "content_block_delta" && ev.delta.type === "text_delta") text += ev.delta.text;
    if (ev.type === "content_block_delta" && ev.delta.type === "input_json_delta") json += ev.delta.partial_json;
    if (ev.type === "message_delta") (stop = ev.delta.stop_reason), (output = ev.usage.output_tokens);
  }
  expect(text).toBe("Hello from the fake model");
  expect(types.filter((t) => t === "content_block_delta").length).toBeGreaterThan(4);
  expect(JSON.parse(json)).toEqual(shellCall.input);
  expect(stop).toBe("tool_use");
  expect(output).toBe(34);
  expect(types[0]).toBe("message_start");
  expect(types.at(-1)).toBe("message_stop");
  const h = fake.requests[0]!.headers;
  expect(h["x-api-key"] ?? h.authorization).toContain("test"); // this SDK release sends the key as a bearer token
});

test("anthropic MessageStream helper and non-streaming JSON agree", async () => {
  const turn = { thinking: "let me think", text: "done", toolCalls: [shellCall] };
  fake.script([turn, turn]);
  const viaStream = await anthropic.messages
    .stream({ model: "m", max_tokens: 100, messages: [{ role: "user", content: "hi" }] })
    .finalMessage();
  const viaJson = await anthropic.messages.create({ model: "m", max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
  for (const msg of [viaStream, viaJson]) {
    expect(msg.content.map((b) => b.type)).toEqual(["thinking", "text", "tool_use"]);
    expect(msg.content[2]).toMatchObject({ type: "tool_use", id: "c1", name: "dev__shell", input: shellCall.input });
    expect(msg.stop_reason).toBe("tool_use");
  }
});

test("openai streaming: content deltas, tool calls split over chunks, finish_reason, usage chunk, [DONE]", async () => {
  fake.script([{ text: "Streaming answer here", toolCalls: [shellCall, { name: "dev__todo", input: {} }], usage: { input: 7, output: 9 } }]);
  const stream = await openai.chat.completions.create({
    model: "m",
    messages: [{ role: "user", content: "hi" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let contentChunks = 0;
  const calls: { id?: string; name?: string; args: string }[] = [];
  let finish: string | null = null;
  let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (choice.delta.content) (text += choice.delta.content), contentChunks++;
    for (const tc of choice.delta.tool_calls ?? []) {
      const slot = (calls[tc.index] ??= { args: "" });
      if (tc.id) slot.id = tc.id;
      if (tc.function?.name) slot.name = tc.function.name;
      slot.args += tc.function?.arguments ?? "";
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  expect(text).toBe("Streaming answer here");
  expect(contentChunks).toBeGreaterThan(2);
  expect(calls[0]).toEqual({ id: "c1", name: "dev__shell", args: JSON.stringify(shellCall.input) });
  expect(calls[1]!.name).toBe("dev__todo");
  expect(calls[1]!.id).toMatch(/^call_fake_/);
  expect(finish).toBe("tool_calls");
  expect(usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 9 });
});

test("openai non-streaming JSON and stop reason mapping", async () => {
  fake.script([{ text: "cut", stopReason: "max_tokens" }, { text: "no", stopReason: "refusal" }]);
  const a = await openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
  expect(a.choices[0]!.message.content).toBe("cut");
  expect(a.choices[0]!.finish_reason).toBe("length");
  const b = await openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
  expect(b.choices[0]!.finish_reason).toBe("content_filter");
});

test("429 with retry-after, then success, through both SDKs' own retries", async () => {
  fake.script([{ fault: { status: 429, retryAfterS: 0.05 } }, { text: "after retry" }]);
  const started = Date.now();
  const msg = await anthropic.messages.create({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "x" }] });
  expect(msg.content[0]).toMatchObject({ type: "text", text: "after retry" });
  expect(fake.requests.length).toBe(2);
  expect(Date.now() - started).toBeLessThan(400); // retry-after honoured, not the default 0.5 s backoff

  fake.script([{ fault: { status: 503, retryAfterS: 0.05 } }, { text: "openai retry" }]);
  const c = await openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
  expect(c.choices[0]!.message.content).toBe("openai retry");
});

test("an empty script answers 400 'no scripted turn left' without retries", async () => {
  const err = await anthropic.messages
    .create({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "x" }] })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(Anthropic.BadRequestError);
  expect(String(err)).toContain("no scripted turn left");
  expect(fake.requests.length).toBe(1);
});

test("respond() answers dynamically once the script is empty", async () => {
  fake.respond((req) => ({ text: `you said ${req.body.messages.length} message(s)` }));
  const c = await openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
  expect(c.choices[0]!.message.content).toBe("you said 1 message(s)");
});

test("a truncated stream is an error in both SDKs", async () => {
  fake.script([{ text: "this answer will be cut off somewhere in the middle", fault: { truncate: true } }]);
  const anthropicRun = async () => {
    const s = await anthropic.messages.stream({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "x" }] });
    await s.finalMessage();
  };
  await expect(anthropicRun()).rejects.toThrow();

  fake.script([{ text: "this answer will be cut off somewhere in the middle", fault: { truncate: true } }]);
  const openaiRun = async () => {
    const s = await openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }], stream: true });
    let got = "";
    for await (const c of s) got += c.choices[0]?.delta.content ?? "";
    return got;
  };
  // The OpenAI SDK may end quietly on a dead socket; then the text is incomplete and no [DONE] came.
  const outcome = await openaiRun().then((t) => t, (e: unknown) => e);
  if (typeof outcome === "string") expect(outcome.length).toBeLessThan(51);
  else expect(outcome).toBeInstanceOf(Error);
});

test("hang + abort: the client gives up promptly and the fake stays usable", async () => {
  const ctl = new AbortController();
  // Aborted once the fake has the request (and hangs on it).
  fake.respond(() => {
    ctl.abort();
    return { fault: { hang: true } };
  });
  const started = Date.now();
  const err = await anthropic.messages
    .create({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "x" }] }, { signal: ctl.signal })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(Anthropic.APIUserAbortError);
  expect(fake.requests.length).toBeGreaterThan(0);
  expect(Date.now() - started).toBeLessThan(1000);
  fake.respond(undefined);
  fake.script([{ text: "still here" }]);
  const c = await openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
  expect(c.choices[0]!.message.content).toBe("still here");
});

test("process mode prints its URL first and serves the script file", async () => {
  const dir = await mkdtemp(join(tmpdir(), "fake-llm-"));
  try {
    const file = join(dir, "script.json");
    await writeFile(file, JSON.stringify({ turns: [{ text: "from file" }], repeat: { text: "again" } }));
    const child = spawn(process.execPath, [join(import.meta.dir, "fake-llm.ts"), "--script", file], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let buf = "";
        child.stdout!.on("data", (d: Buffer) => {
          buf += d.toString();
          if (buf.includes("\n")) resolve(buf.split("\n")[0]!);
        });
        child.on("exit", () => reject(new Error("fake exited early")));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const client = new OpenAI({ apiKey: "k", baseURL: `${url}/v1`, maxRetries: 0 });
      const texts: (string | null)[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
        texts.push(r.choices[0]!.message.content);
      }
      expect(texts).toEqual(["from file", "again", "again"]);
    } finally {
      child.kill("SIGTERM");
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
