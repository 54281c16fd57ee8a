// End to end through the built binary against the fake LLM's Responses endpoint: `tendril prompt`
// runs a tool call over the Responses API, and `tendril agent` carries reasoning items, function calls
// and their outputs back on every later request of the session, across a reload; bad input exits 2.
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAgent, type TestAgent } from "./acp-client.ts";
import { agentEnv } from "./agent-env.ts";
import { runBin, runBinAsync } from "./binary.ts";
import { type FakeLlm, startFakeLlm } from "./fake-llm.ts";
import { fakeEncrypted } from "./fake-llm-responses.ts";

let fake: FakeLlm;
let work: string;
let n = 0;
const agents: TestAgent[] = [];
beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-responses-e2e-"));
});
beforeEach(() => void (fake.requests.length = 0));
afterAll(async () => {
  for (const a of agents) await a.close(2000).catch(() => {});
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

function dir(): string {
  const d = join(work, `ws-${++n}`);
  mkdirSync(d, { recursive: true });
  return d;
}

/** The fake as an OpenAI-compatible endpoint spoken to over the Responses API. */
const env = () => ({ ...agentEnv(fake, work, "openai"), TENDRIL_OPENAI_API: "responses", PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work });

const shell = (id: string, command: string) => ({ id, name: "dev__shell", input: { command } });
const reasoningItem = (thinking: string) => ({ type: "reasoning", summary: [{ type: "summary_text", text: thinking }], encrypted_content: fakeEncrypted(thinking) });
const inputOf = (i: number): any[] => fake.requests[i]!.body.input;

test("tendril prompt over the Responses API: a tool call runs and its output goes back with the call and the reasoning", async () => {
  const ws = dir();
  fake.script([{ thinking: "run it first", toolCalls: [shell("call_p1", "echo from-tool")] }, { text: "Done." }]);
  const r = await runBinAsync(["prompt", "--cwd", ws, "--approve", "all", "run the tool"], { env: env(), cwd: ws });
  expect(r.stderr).toMatch(/^tool .* completed\n$/);
  expect(r.code).toBe(0);
  expect(r.stdout).toBe("Done.\n");
  expect(fake.requests.map((q) => q.path)).toEqual(["/v1/responses", "/v1/responses"]);
  for (const q of fake.requests) {
    expect(q.body.store).toBe(false);
    expect(q.body.include).toEqual(["reasoning.encrypted_content"]);
    // Another base URL, and no `prompt_cache_key = true` in config: not sent.
    expect("prompt_cache_key" in q.body).toBe(false);
  }
  const second = inputOf(1);
  expect(second[0]).toEqual({ role: "user", content: expect.arrayContaining([{ type: "input_text", text: "run the tool" }]) });
  expect(second.slice(1, 3)).toEqual([reasoningItem("run it first"), { type: "function_call", call_id: "call_p1", name: "dev__shell", arguments: '{"command":"echo from-tool"}' }]);
  expect(second[3]).toMatchObject({ type: "function_call_output", call_id: "call_p1" });
  expect(second[3].output).toContain("from-tool");
  expect(second).toHaveLength(4);
});

test("tendril agent: reasoning items stay in the session's input across prompts and a reload", async () => {
  const ws = dir();
  const a = startAgent({ env: env() });
  agents.push(a);
  await a.initialize();
  const { sessionId } = await a.newSession(ws);
  fake.script([{ thinking: "look at the tree", toolCalls: [shell("call_a1", "echo one")] }, { thinking: "it printed one", text: "Saw one." }, { text: "Second answer." }]);
  await a.prompt(sessionId, "first");
  await a.prompt(sessionId, "second");
  expect(await a.close(5000)).toBe(0);
  // The third request (second prompt) resends the first turn whole: both reasoning items, the call, its output.
  const carried = (input: any[]) => input.filter((i) => i.type === "reasoning" || i.type === "function_call" || i.type === "function_call_output").map((i) => i.type === "function_call_output" ? { type: i.type, call_id: i.call_id } : i);
  const firstTurn = [
    reasoningItem("look at the tree"),
    { type: "function_call", call_id: "call_a1", name: "dev__shell", arguments: '{"command":"echo one"}' },
    { type: "function_call_output", call_id: "call_a1" },
    reasoningItem("it printed one"),
  ];
  expect(carried(inputOf(2))).toEqual(firstTurn);

  // A new agent process loads the saved session: the next request still carries them.
  const b = startAgent({ env: env() });
  agents.push(b);
  await b.initialize();
  await b.agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  fake.script([{ text: "Third answer." }]);
  await b.prompt(sessionId, "third");
  expect(carried(inputOf(3))).toEqual(firstTurn);
  expect(inputOf(3).filter((i) => i.role === "assistant").map((i) => i.content)).toEqual(["Saw one.", "Second answer."]);
  // OpenAI's prefix cache needs each request to start with the previous one's input, byte for byte.
  for (let i = 1; i < fake.requests.length; i++) {
    const before = inputOf(i - 1).map((item) => JSON.stringify(item));
    expect(inputOf(i).slice(0, before.length).map((item) => JSON.stringify(item))).toEqual(before);
  }
});

test("bad input: an unknown TENDRIL_OPENAI_API or openai_api exits 2 naming it", () => {
  const bad = runBin(["agent"], { env: { ...env(), TENDRIL_OPENAI_API: "soap" }, input: "" });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('TENDRIL_OPENAI_API must be one of responses, chat, got "soap"');
  const cfg = join(work, "bad.toml");
  writeFileSync(cfg, 'openai_api = "chats"\n');
  const file = runBin(["agent"], { env: { ...env(), TENDRIL_OPENAI_API: "", TENDRIL_CONFIG: cfg }, input: "" });
  expect(file.code).toBe(2);
  expect(file.stderr).toContain(`${cfg}: openai_api must be one of responses, chat, got "chats"`);
});
