// What the client advertised in initialize decides how the agent shows a context handoff
// (`compaction_update` or a thought chunk, live and on load) and whether it sends `notice`s; each with
// and without the capability, through the real ACP surface in memory.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionStore } from "../agent/session-store.ts";
import { loadLimits } from "../limits.ts";
import { standInPool, StandInServerEvents } from "../../tests/in-memory.ts";
import { memoryAgent, type MemoryAgent } from "../../tests/memory-agent.ts";

const state = mkdtempSync(join(tmpdir(), "tendril-notices-"));
afterAll(() => rmSync(state, { recursive: true, force: true }));

let nextId = 1;
async function req(a: MemoryAgent, method: string, params: Record<string, unknown>) {
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method, params });
  return a.response(id);
}
const say = (a: MemoryAgent, sessionId: string, text: string) => req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text }] });
const updates = (a: MemoryAgent, kind: string) => a.out.filter((m) => m.params?.update?.sessionUpdate === kind).map((m) => m.params.update);
/** The updates of `kind` once there are `n` (notices are written as they come, outside any answer). */
async function awaitUpdates(a: MemoryAgent, kind: string, n: number) {
  await a.until(() => updates(a, kind).length >= n, `${n} ${kind} updates`);
  return a.out.filter((m) => m.params?.update?.sessionUpdate === kind);
}
const handoffThoughts = (a: MemoryAgent) => updates(a, "agent_thought_chunk").filter((u) => u.content.text.includes("[context handoff]"));

/** An agent whose client advertised `session` capabilities (`{}` for each named), or none. */
async function agent(session: { notices?: boolean; compaction?: boolean }, over: Record<string, unknown> = {}, env: Record<string, string> = {}) {
  const a = memoryAgent({ contextWindow: 10_000, limits: loadLimits(env), ...over }, env);
  const caps = { ...(session.notices ? { notices: {} } : {}), ...(session.compaction ? { compaction: {} } : {}) };
  const init = await req(a, "initialize", { protocolVersion: 1, clientCapabilities: { session: caps } });
  expect(init.error).toBeUndefined();
  return a;
}

/** A turn whose reported usage passes the handoff ratio, then the summary, then the answer. */
function pushHandoffTurn(a: MemoryAgent) {
  a.provider.push(
    { text: "read a lot", calls: [{ id: "r1", name: "t__echo", input: { text: "big" } }], usage: { input: 9_500, output: 100 } },
    { text: "THE SUMMARY: we read files" },
    { text: "continuing after handoff" },
  );
}

test("a client with session.compaction sees an automatic handoff as compaction_update in_progress, then completed with the summary; load replays it", async () => {
  const store = new SessionStore(state);
  const a = await agent({ compaction: true }, { store });
  pushHandoffTurn(a);
  const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
  expect((await say(a, sessionId, "the original task")).result.stopReason).toBe("end_turn");
  const shown = updates(a, "compaction_update");
  expect(shown.map((u) => u.status)).toEqual(["in_progress", "completed"]);
  expect(shown[1].compactionId).toBe(shown[0].compactionId);
  const summary = shown[1].summary.map((b: { text: string }) => b.text).join("\n");
  expect(summary).toContain("[context handoff]");
  expect(summary).toContain("THE SUMMARY: we read files");
  expect(handoffThoughts(a)).toEqual([]);
  await a.close();

  // reloaded by a client that shows compactions: the same updates come back
  const b = await agent({ compaction: true }, { store });
  await req(b, "session/load", { sessionId, cwd: tmpdir(), mcpServers: [] });
  expect(updates(b, "compaction_update").map((u) => u.status)).toEqual(["in_progress", "completed"]);
  expect(updates(b, "compaction_update")[1].summary).toEqual(shown[1].summary);
  await b.close();

  // reloaded by one that does not: the thought chunk it would have seen live, no compaction_update
  const c = await agent({}, { store });
  await req(c, "session/load", { sessionId, cwd: tmpdir(), mcpServers: [] });
  expect(updates(c, "compaction_update")).toEqual([]);
  const thoughts = handoffThoughts(c);
  expect(thoughts.length).toBe(1);
  expect(thoughts[0].content.text).toContain("summarized the conversation");
  await c.close();
});

test("a client without session.compaction sees the handoff as one thought chunk, live and on load", async () => {
  const store = new SessionStore(state);
  const a = await agent({ notices: true }, { store });
  pushHandoffTurn(a);
  const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
  await say(a, sessionId, "the original task");
  expect(updates(a, "compaction_update")).toEqual([]);
  expect(handoffThoughts(a).length).toBe(1);
  await a.close();
  const b = await agent({ compaction: true }, { store });
  await req(b, "session/load", { sessionId, cwd: tmpdir(), mcpServers: [] });
  expect(updates(b, "compaction_update")).toEqual([]);
  expect(handoffThoughts(b).length).toBe(1);
  await b.close();
});

test("/compact with session.compaction: in_progress then completed; the summary is the one the model wrote", async () => {
  const a = await agent({ compaction: true });
  const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
  a.provider.push({ text: "one" }, { text: "SUMMARY: did one" });
  await say(a, sessionId, "first task");
  expect((await say(a, sessionId, "/compact")).result.stopReason).toBe("end_turn");
  const shown = updates(a, "compaction_update");
  expect(shown.map((u) => u.status)).toEqual(["in_progress", "completed"]);
  expect(shown[1].summary.at(-1)).toEqual({ type: "text", text: "SUMMARY: did one" });
  expect(shown[1].summary[0].text).toContain("asked with /compact");
  expect(handoffThoughts(a)).toEqual([]);
  await a.close();
});

test("/compact whose summary fails with nothing older to drop is failed with the error; without the capability, a thought says so", async () => {
  for (const compaction of [true, false]) {
    const a = await agent({ compaction });
    const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
    a.provider.push({ text: "one" }, { error: { kind: "server", message: "overloaded", status: 529 } });
    await say(a, sessionId, "first task");
    expect((await say(a, sessionId, "/compact")).result.stopReason).toBe("end_turn");
    if (compaction) {
      const shown = updates(a, "compaction_update");
      expect(shown.map((u) => u.status)).toEqual(["in_progress", "failed"]);
      expect(shown[1].error).toContain("overloaded");
      expect(shown[1].error).toContain("no older turns to drop");
      expect(handoffThoughts(a)).toEqual([]);
    } else {
      expect(updates(a, "compaction_update")).toEqual([]);
      expect(handoffThoughts(a).map((u) => u.content.text).join("")).toContain("failed: asked with /compact");
    }
    // the history was left as it was: the next request carries both earlier messages
    a.provider.push({ text: "two" });
    await say(a, sessionId, "second");
    expect(a.provider.requests.at(-1)!.length).toBe(3);
    await a.close();
  }
});

test("a handoff cancelled while the summary is being written is shown as cancelled", async () => {
  const a = await agent({ compaction: true });
  const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
  a.provider.push({ text: "one" }, { hang: true });
  await say(a, sessionId, "first task");
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "/compact" }] } });
  await a.until(() => updates(a, "compaction_update").length > 0, "compaction_update");
  a.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
  expect((await a.response(id)).result.stopReason).toBe("cancelled");
  expect(updates(a, "compaction_update").map((u) => u.status)).toEqual(["in_progress", "cancelled"]);
  await a.close();
});

test("initialize: a session capability of the wrong type is -32602 naming it", async () => {
  const a = memoryAgent({ pool: standInPool() });
  const r = await req(a, "initialize", { protocolVersion: 1, clientCapabilities: { session: { notices: true } } });
  expect(r.error.code).toBe(-32602);
  expect(r.error.data.param).toBe("clientCapabilities.session.notices");
  await a.close();
});

test("a client with session.notices hears its session's MCP server die, restart and go, as notices that are not recorded", async () => {
  const store = new SessionStore(state);
  const events = new StandInServerEvents();
  const a = await agent({ notices: true }, { store, pool: standInPool({ events }) });
  const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
  events.fire({ server: "t", kind: "died", detail: "connection closed; it restarts on next use" });
  events.fire({ server: "t", kind: "restarted", detail: "restart attempt 1 of 3 succeeded" });
  events.fire({ server: "t", kind: "gone", detail: "restarted 3 times without success (spawn failed); its tools are withdrawn" });
  const sent = await awaitUpdates(a, "notice", 3);
  expect(sent.map((m) => m.params.sessionId)).toEqual([sessionId, sessionId, sessionId]);
  expect(sent.map((m) => [m.params.update.severity, m.params.update.title])).toEqual([
    ["warning", "MCP server t stopped"],
    ["info", "MCP server t restarted"],
    ["error", "MCP server t is gone"],
  ]);
  expect(sent[2]!.params.update.description).toContain("its tools are withdrawn");
  // a prompt makes the session's file; notices are live events, so a reload shows none
  a.provider.push({ text: "ok" });
  await say(a, sessionId, "hi");
  await req(a, "session/close", { sessionId });
  events.fire({ server: "t", kind: "died", detail: "after close" });
  await req(a, "session/list", {});
  expect(updates(a, "notice").length).toBe(3);
  await a.close();
  const b = await agent({ notices: true }, { store, pool: standInPool({ events }) });
  await req(b, "session/load", { sessionId, cwd: tmpdir(), mcpServers: [] });
  expect(updates(b, "agent_message_chunk").length).toBe(1);
  expect(updates(b, "notice")).toEqual([]);
  await b.close();
});

test("a client without session.notices is sent no notice (the log has it)", async () => {
  const events = new StandInServerEvents();
  const a = await agent({ compaction: true }, { pool: standInPool({ events }) });
  await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] });
  events.fire({ server: "t", kind: "died", detail: "connection closed" });
  // a request answered after the event: anything the event sent would have been written before it
  await req(a, "session/list", {});
  expect(updates(a, "notice")).toEqual([]);
  await a.close();
});
