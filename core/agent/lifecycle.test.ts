// Lifecycle hooks and context handoff in memory: the real session manager and turn, a scripted
// provider whose reported usage we choose, stand-in tools with `_Stop` and `_PostCompact`.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionStore } from "./session-store.ts";
import { loadLimits } from "../limits.ts";
import { standInPool, type StandInHooks } from "../../tests/in-memory.ts";
import { memoryAgent, type MemoryAgent } from "../../tests/memory-agent.ts";

const state = mkdtempSync(join(tmpdir(), "tendril-lifecycle-mem-"));
afterAll(() => rmSync(state, { recursive: true, force: true }));

let nextId = 1;
async function req(a: MemoryAgent, method: string, params: Record<string, unknown>) {
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method, params });
  return a.response(id);
}
const thoughts = (a: MemoryAgent) =>
  a.out.filter((m) => m.params?.update?.sessionUpdate === "agent_thought_chunk").map((m) => m.params.update.content.text as string);

function agentWith(hooks: StandInHooks, env: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  return memoryAgent(
    { pool: standInPool({ hooks }), hookServers: ["t"], limits: loadLimits(env), contextWindow: 10_000, ...extra },
    env,
  );
}

test("_Stop: an objection continues the turn, visible to the client and heard by the model", async () => {
  const answers = ["the todo list still has open items", ""];
  const a = agentWith({ stop: () => answers.shift() ?? "" });
  a.provider.push({ text: "done?" }, { text: "now really done" });
  const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
  expect((await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "work" }] })).result.stopReason).toBe("end_turn");
  expect(thoughts(a).join("")).toContain("[t _Stop hook] the todo list still has open items");
  const heard = a.provider.requests[1]!.at(-1)!;
  expect(JSON.stringify(heard)).toContain("the todo list still has open items");
  await a.close();
});

test("_Stop: two end_turns in a row end the turn anyway, and the session's budget runs out", async () => {
  const a = agentWith({ stop: () => "not yet" }, { TENDRIL_STOP_MAX_REJECTIONS: "2" });
  a.provider.push({ text: "1" }, { text: "2" }, { text: "3" }, { text: "4" }, { text: "5" });
  const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "a" }] });
  expect(a.provider.requests.length).toBe(2); // objected once, then the second end_turn ended it
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "b" }] });
  expect(a.provider.requests.length).toBe(4); // the second and last objection of the budget
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "c" }] });
  expect(a.provider.requests.length).toBe(5); // budget spent: no more objections
  await a.close();
});

test("_Stop: a hanging hook fails open after HOOK_TIMEOUT_MS; servers not allowed are never asked", async () => {
  const a = agentWith({ stop: () => "hang" }, { TENDRIL_HOOK_TIMEOUT_MS: "50" });
  a.provider.push({ text: "bye" });
  const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
  const t0 = Date.now();
  expect((await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "x" }] })).result.stopReason).toBe("end_turn");
  expect(Date.now() - t0).toBeLessThan(2000);
  const calls: string[] = [];
  const b = memoryAgent({ pool: standInPool({ hooks: { stop: () => "objection" }, calls }) }); // no hook servers allowed
  b.provider.push({ text: "bye" });
  const s2 = (await req(b, "session/new", { cwd: tmpdir(), mcpServers: [] })).result.sessionId;
  await req(b, "session/prompt", { sessionId: s2, prompt: [{ type: "text", text: "x" }] });
  expect(calls).not.toContain("t___Stop");
  await a.close();
  await b.close();
});

test("handoff by reported usage: summary + _PostCompact replace the history, the client sees it, a reload continues from it", async () => {
  const store = new SessionStore(state);
  const a = agentWith({ postCompact: "open todo: write the tests" }, {}, { store });
  a.provider.push(
    { text: "read a lot", calls: [{ id: "r1", name: "t__echo", input: { text: "big" } }], usage: { input: 9_500, output: 100 } },
    { text: "THE SUMMARY: we read files" }, // the summary request
    { text: "continuing after handoff" },
  );
  const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "the original task" }] });
  const [, summaryReq, next] = a.provider.requests;
  expect(JSON.stringify(summaryReq!.at(-1))).toContain("handoff summary");
  expect(next!.length).toBe(1);
  const carried = JSON.stringify(next![0]);
  for (const part of ["the original task", "THE SUMMARY: we read files", "open todo: write the tests"]) expect(carried).toContain(part);
  expect(thoughts(a).join("")).toContain("[context handoff]");
  await a.close();

  const b = agentWith({}, {}, { store });
  await req(b, "session/load", { sessionId, cwd: tmpdir(), mcpServers: [] });
  b.provider.push({ text: "hello again" });
  await req(b, "session/prompt", { sessionId, prompt: [{ type: "text", text: "what now?" }] });
  const first = b.provider.requests[0]!;
  expect(JSON.stringify(first[0])).toContain("THE SUMMARY: we read files");
  expect(first.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  await b.close();
});

test("handoff by history growth (usage under-reported); the turn's own request is kept; past MAX_HANDOFFS the oldest turns are dropped", async () => {
  const a = agentWith({}, { TENDRIL_MAX_HANDOFFS: "1" });
  const big = (tag: string) => `${tag} ${"x".repeat(10_000)}`; // ~2,500 tokens against a 10,000-token window
  const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
  a.provider.push({ text: "r1" }, { text: "r2" }, { text: "r3" }, { text: "r4" }, { text: "SUMMARY" }, { text: "r5" }, { text: "r6" }, { text: "r7" }, { text: "r8" });
  const prompts = ["a small task", big("p2"), big("p3"), big("p4"), big("p5"), big("p6"), big("p7"), big("p8")];
  for (const p of prompts) expect((await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: p }] })).result.stopReason).toBe("end_turn");
  const said = thoughts(a).join("\n");
  expect(said).toContain("summarized the conversation (handoff 1 of at most 1)");
  expect(said).toContain("(MAX_HANDOFFS 1 reached)");
  // The request after the summary carries the task, the summary and the prompt being answered.
  const afterSummary = JSON.stringify(a.provider.requests[5]);
  for (const part of ["a small task", "SUMMARY", "p5 xxx"]) expect(afterSummary).toContain(part);
  // Every request stayed under the window, and the last one still ends with the prompt it answers.
  for (const r of a.provider.requests) expect(JSON.stringify(r).length / 4).toBeLessThan(10_000);
  expect(JSON.stringify(a.provider.requests.at(-1)!.at(-1))).toContain("p8 xxx");
  await a.close();
});
