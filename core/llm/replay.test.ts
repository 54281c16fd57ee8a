// Record then replay: a recorded run replays to the same events; hand-written compact cassettes work;
// divergence and exhaustion fail loudly with the step number.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeLlm, startFakeLlm } from "../../tests/fake-llm.ts";
import { anthropicProvider } from "./anthropic.ts";
import { withRecording } from "./record.ts";
import { CassetteError, replayProvider } from "./replay.ts";
import type { LlmEvent, LlmRequest, Message, ToolSpec } from "./types.ts";

let fake: FakeLlm;
let dir: string;
beforeAll(async () => {
  fake = await startFakeLlm();
  dir = await mkdtemp(join(tmpdir(), "tendril-replay-"));
});
afterAll(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

async function collect(stream: AsyncIterable<LlmEvent>): Promise<LlmEvent[]> {
  const out: LlmEvent[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

const tool = (name: string): ToolSpec => ({ name, description: name, inputSchema: { type: "object" } });
const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
const req = (messages: Message[], tools = [tool("dev__shell"), tool("dev__str_replace")]): LlmRequest => ({
  model: "m",
  system: "sys",
  messages,
  tools,
  maxTokens: 100,
  signal: new AbortController().signal,
});
const errorMessage = (evs: LlmEvent[]) => {
  const e = evs.at(-1)!;
  return e.type === "error" ? `${e.error.kind}: ${e.error.message}` : `no error: ${JSON.stringify(e)}`;
};

test("a recorded run replays to the same events, call by call", async () => {
  const file = join(dir, "run.jsonl");
  const live = withRecording(anthropicProvider({ apiKey: "k", baseUrl: fake.url, maxResponseBytes: 1 << 20, timeoutS: 5, maxRetries: 0 }), file);
  const call = { id: "c1", name: "dev__shell", input: { command: "ls" } };
  fake.script([{ thinking: "hmm", text: "Looking.", toolCalls: [call] }, { text: "Done: a.txt", usage: { input: 30, output: 4 } }]);
  const h1 = [user("list files")];
  const h2: Message[] = [...h1, { role: "assistant", text: "Looking.", toolCalls: [call] }, { role: "tool", results: [{ callId: "c1", content: "a.txt", isError: false }] }];
  const live1 = await collect(live.stream(req(h1)));
  const live2 = await collect(live.stream(req(h2)));
  expect(live2.at(-1)).toMatchObject({ type: "done", stopReason: "end_turn" });

  const text = await readFile(file, "utf8");
  expect(text.trim().split("\n").length).toBe(2);
  const replay = replayProvider(text);
  expect(await collect(replay.stream(req(h1)))).toEqual(live1);
  expect(await collect(replay.stream(req(h2)))).toEqual(live2);
  expect(errorMessage(await collect(replay.stream(req(h2))))).toBe(
    "replay: replay exhausted: run made more LLM calls (3) than recorded (2)",
  );
});

test("errors are recorded and replayed too", async () => {
  const file = join(dir, "err.jsonl");
  const live = withRecording(anthropicProvider({ apiKey: "k", baseUrl: fake.url, maxResponseBytes: 1 << 20, timeoutS: 5, maxRetries: 0 }), file);
  fake.script([{ fault: { status: 401 } }]);
  const liveEvs = await collect(live.stream(req([user("x")])));
  expect(await collect(replayProvider(await readFile(file, "utf8")).stream(req([user("x")])))).toEqual(liveEvs);
});

test("a consumer that stops early is recorded as an aborted exchange", async () => {
  const file = join(dir, "early.jsonl");
  const live = withRecording(anthropicProvider({ apiKey: "k", baseUrl: fake.url, maxResponseBytes: 1 << 20, timeoutS: 5, maxRetries: 0 }), file);
  fake.script([{ text: "many words in several chunks" }]);
  for await (const ev of live.stream(req([user("x")]))) if (ev.type === "text") break;
  const line = JSON.parse((await readFile(file, "utf8")).trim());
  expect(line.events.at(-1)).toMatchObject({ type: "error", error: { kind: "aborted" } });
});

const compact = [
  "# demo cassette: list files, then answer",
  '{"v":1,"tools":["dev__str_replace","dev__shell"],"last":"user","reply":{"text":"Let me look.","toolCalls":[{"name":"dev__shell","input":{"command":"ls"}}]}}',
  "",
  '{"v":1,"tools":["dev__shell","dev__str_replace"],"last":"tool","reply":{"text":"There is one file.","usage":{"input":9,"output":3}}}',
].join("\n");

test("compact hand-written form: comments, default ids and stop reasons", async () => {
  const p = replayProvider(compact);
  const one = await collect(p.stream(req([user("what is here?")])));
  expect(one).toEqual([
    { type: "text", text: "Let me look." },
    { type: "tool_call", call: { id: "call_1_1", name: "dev__shell", input: { command: "ls" } } },
    { type: "done", stopReason: "tool_use", usage: { inputTokens: 0, outputTokens: 0 } },
  ]);
  const two = await collect(p.stream(req([user("q"), { role: "tool", results: [{ callId: "call_1_1", content: "a", isError: false }] }])));
  expect(two.at(-1)).toEqual({ type: "done", stopReason: "end_turn", usage: { inputTokens: 9, outputTokens: 3 } });
});

test("different tools offered → diverged at that step, naming both sets", async () => {
  const p = replayProvider(compact);
  const evs = await collect(p.stream(req([user("x")], [tool("dev__shell")])));
  expect(errorMessage(evs)).toBe(
    "replay: replay diverged at step 1: tools offered differ (recorded: dev__shell,dev__str_replace; now: dev__shell)",
  );
});

test("a user message where a tool result was recorded → diverged, naming both kinds", async () => {
  const p = replayProvider(compact);
  await collect(p.stream(req([user("x")])));
  const evs = await collect(p.stream(req([user("x"), user("actually, stop")])));
  expect(errorMessage(evs)).toBe("replay: replay diverged at step 2: last message differs (recorded: tool result; now: user message)");
});

test("a malformed cassette is refused up front, naming the line", () => {
  expect(() => replayProvider('{"v":1,"reply":{}}\n{"v":1,"reply":{"toolCalls":[{}]}}')).toThrow(
    new CassetteError("replay file line 2: reply.toolCalls[0].name: Invalid input: expected string, received undefined"),
  );
  // A misspelt field in the hand-written form is named, not silently ignored.
  expect(() => replayProvider('{"v":1,"reply":{"txet":"hi"}}')).toThrow(/replay file line 1: reply.txet: unknown key/);
  expect(() => replayProvider("{oops")).toThrow(/replay file line 1: not JSON/);
  expect(() => replayProvider('{"v":1,"events":[{"type":"text","text":"x"}]}')).toThrow(/must end with a done or error event/);
});

test("an aborted signal ends replay with aborted", async () => {
  const ctl = new AbortController();
  ctl.abort();
  const evs = await collect(replayProvider(compact).stream({ ...req([user("x")]), signal: ctl.signal }));
  expect(evs).toEqual([{ type: "error", error: { kind: "aborted", message: "LLM request aborted" } }]);
});
