// OpenAI-compatible servers that differ from OpenAI (Ollama, vLLM, gateways): no usage chunk, tool
// arguments in one chunk, every call on index 0, "stop" with tool calls, `reasoning` deltas, bad JSON.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createServer, type Server } from "node:http";
import { openaiProvider } from "./openai.ts";
import { parseToolInput } from "./http-edge.ts";
import type { LlmEvent } from "./types.ts";

let server: Server;
let base = "";
let chunks: object[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const choice = (delta: object, finish: string | null = null) => ({ id: "x", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] });

async function run(): Promise<LlmEvent[]> {
  const p = openaiProvider({ baseUrl: base, maxResponseBytes: 1 << 20, timeoutS: 5, maxRetries: 0 });
  const out: LlmEvent[] = [];
  const req = { model: "m", system: "", messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "x" }] }], tools: [], maxTokens: 10, signal: new AbortController().signal };
  for await (const ev of p.stream(req)) out.push(ev);
  return out;
}

test("Ollama-style: whole calls in one chunk, all on index 0, finish 'stop', no usage", async () => {
  chunks = [
    choice({ role: "assistant", reasoning: "thinking aloud" }),
    choice({ tool_calls: [{ index: 0, id: "a", type: "function", function: { name: "dev__shell", arguments: '{"command":"ls"}' } }] }),
    choice({ tool_calls: [{ index: 0, id: "b", type: "function", function: { name: "dev__todo", arguments: "{}" } }] }),
    choice({}, "stop"),
  ];
  expect(await run()).toEqual([
    { type: "thinking", text: "thinking aloud" },
    { type: "tool_call", call: { id: "a", name: "dev__shell", input: { command: "ls" } } },
    { type: "tool_call", call: { id: "b", name: "dev__todo", input: {} } },
    { type: "done", stopReason: "tool_use", usage: { inputTokens: 0, outputTokens: 0 } },
  ]);
});

test("a call without an id gets one; unparseable arguments are kept as _raw", async () => {
  chunks = [choice({ tool_calls: [{ index: 0, function: { name: "dev__shell", arguments: '{"command": "ls' } }] }), choice({}, "length")];
  const evs = await run();
  expect(evs[0]).toEqual({ type: "tool_call", call: { id: "call_1", name: "dev__shell", input: { _raw: '{"command": "ls' } } });
});

test("a stream that ends without finish_reason is an error, not a done", async () => {
  chunks = [choice({ content: "partial" })];
  const evs = await run();
  expect(evs.at(-1)).toMatchObject({ type: "error", error: { kind: "transport" } });
});

test("tool input parsing: empty is {}, non-objects keep their raw text", () => {
  expect(parseToolInput("")).toEqual({});
  expect(parseToolInput('{"a":1}')).toEqual({ a: 1 });
  expect(parseToolInput("[1,2]")).toEqual({ _raw: "[1,2]" });
  expect(parseToolInput("null")).toEqual({ _raw: "null" });
});
