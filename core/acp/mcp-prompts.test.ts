// MCP prompts as slash commands, in memory (the real pool, the fake MCP server as a child): announced
// as `SERVER:PROMPT` after the built-in commands, re-announced when a server's prompt list changes,
// `/SERVER:PROMPT args` runs prompts/get and the model gets its messages as the user's turn; bad input
// is answered in the conversation and the session goes on. Also the argument mapping on its own.
import { afterAll, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { loadLimits } from "../limits.ts";
import { createMcpPool } from "../mcp/pool.ts";
import type { McpPromptInfo } from "../mcp/types.ts";
import { memoryAgent, type MemoryAgent } from "../../tests/memory-agent.ts";
import { FAKE_MCP_PATH, waitFor } from "../../tests/fake-mcp-helpers.ts";
import { CommandInputError, promptArguments } from "./commands.ts";

const pool = createMcpPool({ limits: loadLimits({}), env: process.env });
afterAll(() => pool.closeAll());

let nextId = 1;
const req = (a: MemoryAgent, method: string, params: Record<string, unknown>) => {
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method, params });
  return a.response(id, 15_000);
};
const say = (a: MemoryAgent, sessionId: string, text: string) => req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text }] });
const updates = (a: MemoryAgent, kind: string) => a.out.filter((m) => m.params?.update?.sessionUpdate === kind).map((m) => m.params.update);
const saidLast = (a: MemoryAgent) => updates(a, "agent_message_chunk").at(-1)?.content.text as string;
const names = (u: { availableCommands: { name: string }[] }) => u.availableCommands.map((c) => c.name);
const fk = { name: "fk", command: process.execPath, args: [FAKE_MCP_PATH], env: [{ name: "FAKE_MCP_PROMPTS", value: "1" }] };

async function open(a: MemoryAgent, servers: unknown[] = [fk]): Promise<string> {
  const r = await req(a, "session/new", { cwd: tmpdir(), mcpServers: servers });
  expect(r.error).toBeUndefined();
  expect(await waitFor(() => updates(a, "available_commands_update").length > 0, 5000)).toBe(true);
  return r.result.sessionId;
}

test("every MCP prompt is announced as SERVER:PROMPT, with its description and its arguments as the hint", async () => {
  const a = memoryAgent({ pool });
  await open(a);
  const [announced] = updates(a, "available_commands_update");
  expect(names(announced)).toEqual(["compact", "mode", "model", "init", "fk:review", "fk:summarize", "fk:hello", "fk:broken"]);
  const byName = Object.fromEntries(announced.availableCommands.map((c: { name: string }) => [c.name, c]));
  expect(byName["fk:review"]).toEqual({ name: "fk:review", description: "Review one file", input: { hint: "<file> [focus]" } });
  expect(byName["fk:summarize"]).toEqual({ name: "fk:summarize", description: "Summarize", input: { hint: "<text>" } });
  expect(byName["fk:hello"]).toEqual({ name: "fk:hello", description: "Say hello" });
  await a.close();
});

test("/SERVER:PROMPT args runs prompts/get and the model receives its messages as the user's turn", async () => {
  const a = memoryAgent({ pool });
  const sessionId = await open(a);
  a.provider.push({ text: "reviewed" }, { text: "summarized" }, { text: "hi" });
  expect((await say(a, sessionId, "/fk:review src/main.ts error handling")).result.stopReason).toBe("end_turn");
  expect(JSON.stringify(a.provider.requests[0]!.at(-1))).toContain("Review src/main.ts focusing on error handling.");
  await say(a, sessionId, '/fk:review focus="the tests" file=a.ts');
  expect(JSON.stringify(a.provider.requests[1]!.at(-1))).toContain("Review a.ts focusing on the tests.");
  // one argument takes the whole rest as typed
  a.provider.push({ text: "ok" });
  await say(a, sessionId, "/fk:summarize the long   text, with commas");
  expect(JSON.stringify(a.provider.requests[2]!.at(-1))).toContain("Summarize: the long   text, with commas");
  // an assistant message in the result is kept, marked
  await say(a, sessionId, "/fk:hello");
  const hello = JSON.stringify(a.provider.requests[3]!.at(-1));
  expect(hello).toContain("Say hello.");
  expect(hello).toContain("(assistant) Hello!");
  expect(saidLast(a)).toBe("ok");
  await a.close();
});

test("bad input: unknown prompt, missing required argument, leftover words, a failing prompt: answered, never sent to the model, the session goes on", async () => {
  const a = memoryAgent({ pool });
  const sessionId = await open(a);
  const answers: string[] = [];
  for (const text of ["/fk:nope", "/other:thing x", "/fk:review", "/fk:hello extra words", "/fk:broken"]) {
    expect((await say(a, sessionId, text)).result.stopReason).toBe("end_turn");
    answers.push(saidLast(a));
  }
  expect(answers[0]).toContain("Unknown command /fk:nope");
  expect(answers[0]).toContain("/fk:review, /fk:summarize, /fk:hello, /fk:broken");
  expect(answers[1]).toContain("Unknown command /other:thing");
  expect(answers[2]).toBe("/fk:review needs the argument file (usage: /fk:review <file> [focus]).");
  expect(answers[3]).toContain("/fk:hello takes no arguments");
  expect(answers[4]).toContain("/fk:broken failed");
  expect(answers[4]).toContain("this prompt is broken");
  expect(a.provider.requests.length).toBe(0);
  // still usable: a plain prompt and a good command both reach the model
  a.provider.push({ text: "fine" }, { text: "done" });
  expect((await say(a, sessionId, "hello")).result.stopReason).toBe("end_turn");
  expect((await say(a, sessionId, "/fk:review b.ts")).result.stopReason).toBe("end_turn");
  expect(a.provider.requests.length).toBe(2);
  await a.close();
});

test("a server's prompt list change (notifications/prompts/list_changed) re-sends the whole command list", async () => {
  const a = memoryAgent({ pool, mode: "yolo" });
  const sessionId = await open(a, [{ ...fk, env: [...fk.env, { name: "FAKE_MCP_NAME", value: "changing" }] }]);
  a.provider.push({ text: "adding", calls: [{ id: "p1", name: "fk__add_prompt", input: { name: "later" } }] }, { text: "added" });
  await say(a, sessionId, "add a prompt");
  expect(await waitFor(() => updates(a, "available_commands_update").length === 2, 5000)).toBe(true);
  const again = updates(a, "available_commands_update")[1];
  expect(names(again)).toEqual(["compact", "mode", "model", "init", "fk:review", "fk:summarize", "fk:hello", "fk:broken", "fk:later"]);
  a.provider.push({ text: "ran later" });
  await say(a, sessionId, "/fk:later");
  expect(JSON.stringify(a.provider.requests.at(-1)!.at(-1))).toContain("the later prompt");
  await a.close();
});

test("a server without prompts adds no commands", async () => {
  const a = memoryAgent({ pool });
  await open(a, [{ ...fk, env: [] }]);
  expect(names(updates(a, "available_commands_update")[0])).toEqual(["compact", "mode", "model", "init"]);
  await a.close();
});

test("a server whose prompts/list never answers still serves its tools; it just adds no commands", async () => {
  const slow = createMcpPool({ limits: loadLimits({ TENDRIL_MCP_INIT_TIMEOUT_S: "1.5" }), env: process.env }); // initialize and tools/list must fit too, on a busy machine
  const a = memoryAgent({ pool: slow, mode: "yolo" });
  const t0 = Date.now();
  const sessionId = await open(a, [{ ...fk, env: [...fk.env, { name: "FAKE_MCP_HANG", value: "prompts/list" }] }]);
  expect(Date.now() - t0).toBeLessThan(5000);
  expect(names(updates(a, "available_commands_update")[0])).toEqual(["compact", "mode", "model", "init"]);
  a.provider.push({ calls: [{ id: "e1", name: "fk__echo", input: { text: "still here" } }] }, { text: "ok" });
  await say(a, sessionId, "echo");
  expect(JSON.stringify(a.provider.requests.at(-1))).toContain("still here");
  await a.close();
  await slow.closeAll();
});

test("arguments: positional in declared order, the last takes the rest, NAME=value and quotes, required checked", () => {
  const p: McpPromptInfo = { server: "s", name: "p", arguments: [{ name: "a", required: true }, { name: "b", required: false }, { name: "c", required: false }] };
  expect(promptArguments(p, "one two three four")).toEqual({ a: "one", b: "two", c: "three four" });
  expect(promptArguments(p, 'c="x y" one')).toEqual({ a: "one", c: "x y" });
  expect(promptArguments(p, "'quoted words' b=2")).toEqual({ a: "quoted words", b: "2" });
  expect(promptArguments(p, "k=v")).toEqual({ a: "k=v" }); // not a declared name: a plain word
  expect(promptArguments(p, "x.ts don't break it")).toEqual({ a: "x.ts", b: "don't", c: "break it" }); // a quote inside a word is a character
  expect(promptArguments(p, 'one c="unclosed to the end')).toEqual({ a: "one", c: "unclosed to the end" });
  expect(() => promptArguments(p, "")).toThrow(CommandInputError);
  expect(() => promptArguments(p, "b=1 c=2")).toThrow("needs the argument a");
  const two: McpPromptInfo = { server: "s", name: "q", arguments: [{ name: "x", required: true }, { name: "y", required: true }] };
  expect(() => promptArguments(two, "")).toThrow("needs the arguments x, y (usage: /s:q <x> <y>)");
  expect(() => promptArguments(two, "x=1 y=2 three")).toThrow("is left over");
  const one: McpPromptInfo = { server: "s", name: "r", arguments: [{ name: "t", required: false }] };
  expect(promptArguments(one, "")).toEqual({});
  expect(promptArguments(one, "t=5")).toEqual({ t: "5" });
});
