// Subagents (SPEC §3.10), in memory with a scripted provider: `agent__task` runs a child session with
// its own context and returns its answer as the tool result. To a client with the `subagents`
// capability the child is announced first and speaks under its own id (its permission questions too);
// other clients see its progress inside the parent's tool call. A child cancelled alone lets the
// parent go on; cancelling the parent cancels its children. Persisted and replayed; usage counted to the
// parent; bad input is a tool error. Every message is checked against the SDK's schemas.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionStore } from "../core/agent/session-store.ts";
import type { SessionHost } from "../core/acp/session-host.ts";
import { memoryAgent, type MemoryAgent } from "./memory-agent.ts";
import { standInTools } from "./in-memory.ts";
import { requestAsked, schemaFailures, sendAsked } from "./acp-validate.ts";

const state = mkdtempSync(join(tmpdir(), "tendril-sub-"));
afterAll(() => rmSync(state, { recursive: true, force: true }));

const req = requestAsked;
const send = sendAsked;

const notes = (a: MemoryAgent) => a.out.filter((m) => m.method === "session/update");
const updates = (a: MemoryAgent, sessionId: string) => notes(a).filter((m) => m.params.sessionId === sessionId).map((m) => m.params.update);
const task = (id: string, prompt: string, extra: Record<string, unknown> = {}) => ({ id, name: "agent__task", input: { description: `task ${id}`, prompt, ...extra } });
const lastResult = (messages: any[]) => messages.at(-1).results.at(-1);

async function open(over: Partial<SessionHost>, init: Record<string, unknown>, env: Record<string, string> = {}) {
  const a = memoryAgent(over, env);
  const asked = new Map<unknown, string>();
  await req(a, asked, "initialize", init);
  const sessionId = (await req(a, asked, "session/new", { cwd: tmpdir(), mcpServers: [] })).result.sessionId as string;
  return { a, asked, sessionId };
}
const V1_SUB = { protocolVersion: 1, clientCapabilities: { subagents: {} } };
const V2 = { protocolVersion: 2, info: { name: "t", version: "1" }, capabilities: {} };

/** The child session the parent's tool call `callId` names (v1 `_meta`). */
function childOf(a: MemoryAgent, sessionId: string, callId: string): string {
  const named = updates(a, sessionId).find((u) => u.toolCallId === callId && u._meta?.subagentSessionId);
  return named?._meta.subagentSessionId;
}

/** Waits for the child's first LLM request and for the client to have seen it named; its id. */
async function childRunning(a: MemoryAgent, sessionId: string, callId: string, v2 = false): Promise<string> {
  await a.provider.requested(2);
  const named = () => (v2 ? updates(a, sessionId).find((u) => u.toolCallId === callId && u.content?.some((c: any) => c.type === "session"))?.content[0].sessionId : childOf(a, sessionId, callId));
  await a.until(() => named() !== undefined, "the child named");
  return named();
}

test("with the subagents capability: announced first, the child speaks under its own id, asks permission as itself, and its answer is the tool result", async () => {
  const store = new SessionStore(state);
  const { a, asked, sessionId } = await open({ mode: "ask", store }, V1_SUB);
  a.provider.push(
    { calls: [task("t1", "look for X")] },
    { calls: [{ id: "c1", name: "t__echo", input: { text: "hi" } }] },
    { text: "found X in a.ts" },
    { text: "done" },
  );
  const promptId = send(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  await a.until(() => a.out.some((m) => m.method === "session/request_permission"), "a permission question");
  const ask = a.out.find((m) => m.method === "session/request_permission")!;
  const child = childOf(a, sessionId, "t1");
  expect(typeof child).toBe("string");
  expect(ask.params.sessionId).toBe(child);
  expect(ask.params.toolCall.toolCallId).toBe("c1");
  a.send({ jsonrpc: "2.0", id: ask.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
  const answer = await a.response(promptId);
  expect(answer.result.stopReason).toBe("end_turn");
  // The announcement comes before any message bearing the child's id.
  const firstChild = a.out.findIndex((m) => m.params?.sessionId === child);
  const announced = a.out.findIndex((m) => m.params?.update?.sessionUpdate === "subagent_update" && m.params.update.sessionId === child);
  expect(announced).toBeGreaterThanOrEqual(0);
  expect(a.out[announced]!.params.sessionId).toBe(sessionId);
  expect(announced).toBeLessThan(firstChild);
  expect(a.out[announced]!.params.update).toMatchObject({ title: "task t1", capabilities: { cancel: {} }, state: { state: "running" } });
  // The child's own traffic: its prompt as a received message, its tool call, its answer.
  const mine = updates(a, child);
  expect(mine[0]).toMatchObject({ sessionUpdate: "session_message", senderSessionId: sessionId, recipientSessionId: child, content: [{ type: "text", text: "look for X" }] });
  expect(mine.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "c1")).toBe(true);
  expect(mine.some((u) => u.sessionUpdate === "agent_message_chunk" && u.content.text === "found X in a.ts")).toBe(true);
  // The parent receives the answer as a message, and the child ends idle.
  const parent = updates(a, sessionId);
  const received = parent.find((u) => u.sessionUpdate === "session_message" && u.senderSessionId === child)!;
  expect(parent.some((u) => u.sessionUpdate === "session_message_chunk" && u.messageId === received.messageId && u.content.text === "found X in a.ts")).toBe(true);
  expect(parent.filter((u) => u.sessionUpdate === "subagent_update").at(-1)!.state).toEqual({ state: "idle", stopReason: "end_turn" });
  expect(parent.some((u) => u.toolCallId === "c1")).toBe(false);
  // Its own context; the answer as the tool result; its tokens counted to the parent's turn.
  expect(a.provider.requests[1]).toEqual([{ role: "user", content: [{ type: "text", text: "look for X" }] }]);
  expect(lastResult(a.provider.requests[3]!)).toMatchObject({ callId: "t1", content: "found X in a.ts", isError: false });
  expect(answer.result.usage.inputTokens).toBe(40);
  expect(schemaFailures(a.out, asked, ["v1u"])).toEqual([]);
  await a.close();

  // Load replays it: the announcement first, the child's updates under its id again.
  const b = memoryAgent({ store });
  const asked2 = new Map<unknown, string>();
  await req(b, asked2, "initialize", V1_SUB);
  await req(b, asked2, "session/load", { sessionId, cwd: tmpdir(), mcpServers: [] });
  const firstReplayed = b.out.findIndex((m) => m.params?.sessionId === child);
  const reAnnounced = b.out.findIndex((m) => m.params?.update?.sessionUpdate === "subagent_update" && m.params.update.sessionId === child);
  expect(reAnnounced).toBeGreaterThanOrEqual(0);
  expect(reAnnounced).toBeLessThan(firstReplayed);
  expect(updates(b, child).filter((u) => u.toolCallId === "c1").length).toBe(updates(a, child).filter((u) => u.toolCallId === "c1").length);
  expect(schemaFailures(b.out, asked2, ["v1u"])).toEqual([]);
  await b.close();

  // A client without the capability loading it sees no child session, only the parent's call.
  const c = memoryAgent({ store });
  const asked3 = new Map<unknown, string>();
  await req(c, asked3, "initialize", { protocolVersion: 1 });
  await req(c, asked3, "session/load", { sessionId, cwd: tmpdir(), mcpServers: [] });
  expect(c.out.some((m) => m.params?.sessionId === child)).toBe(false);
  expect(schemaFailures(c.out, asked3, ["v1"])).toEqual([]);
  await c.close();
});

test("without the capability: nothing under the child's id; its progress shows in the parent's tool call; its permission questions name the parent's call", async () => {
  const { a, asked, sessionId } = await open({ mode: "ask" }, { protocolVersion: 1 });
  a.provider.push({ calls: [task("t1", "look")] }, { calls: [{ id: "c1", name: "t__echo", input: { text: "hi" } }] }, { text: "child answer" }, { text: "done" });
  const promptId = send(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  await a.until(() => a.out.some((m) => m.method === "session/request_permission"), "a permission question");
  const ask = a.out.find((m) => m.method === "session/request_permission")!;
  expect(ask.params.sessionId).toBe(sessionId);
  expect(ask.params.toolCall.toolCallId).toBe("t1");
  expect(ask.params.toolCall.title).toContain("task t1");
  a.send({ jsonrpc: "2.0", id: ask.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
  expect((await a.response(promptId)).result.stopReason).toBe("end_turn");
  const sessions = new Set(notes(a).map((m) => m.params.sessionId));
  expect([...sessions]).toEqual([sessionId]);
  const kinds = new Set(updates(a, sessionId).map((u) => u.sessionUpdate));
  for (const k of ["subagent_update", "session_message", "session_message_chunk"]) expect(kinds.has(k)).toBe(false);
  const progress = updates(a, sessionId).filter((u) => u.toolCallId === "t1" && u.status === "in_progress" && u.content);
  expect(progress.some((u) => u.content[0].content.text.includes("t__echo"))).toBe(true);
  const final = updates(a, sessionId).find((u) => u.toolCallId === "t1" && u.status === "completed")!;
  expect(final.content[0].content.text).toBe("child answer");
  expect(schemaFailures(a.out, asked, ["v1"])).toEqual([]);
  await a.close();
});

test("a child's usage and cost count to its parent: the parent's usage_update after the child includes what the child spent", async () => {
  // $3 in, $15 out per million tokens
  const { a, asked, sessionId } = await open({ mode: "yolo", prices: { m: { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 } } }, V1_SUB);
  a.provider.push(
    { calls: [task("t1", "look")], usage: { input: 1000, output: 0 } }, // parent: 3000 µ$
    { text: "child answer", usage: { input: 2000, output: 100 } }, // child: 6000 + 1500 µ$
    { text: "done", usage: { input: 0, output: 100 } }, // parent: 1500 µ$
  );
  const answer = await a.response(send(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] }));
  expect(answer.result.stopReason).toBe("end_turn");
  expect(answer.result.usage).toMatchObject({ inputTokens: 3000, outputTokens: 200 });
  const parentCosts = updates(a, sessionId).filter((u) => u.sessionUpdate === "usage_update").map((u) => u.cost?.amount);
  expect(parentCosts.at(-1)).toBeCloseTo(0.012, 9);
  await a.close();
});

test("regression: a child whose turn threw something unexpected stayed announced as running; now it ends failed and the parent goes on", async () => {
  const { a, asked, sessionId } = await open({ mode: "yolo" }, V1_SUB);
  a.provider.push({ calls: [task("t1", "look")] }, { text: "after" });
  const inner = a.provider.stream.bind(a.provider);
  let calls = 0;
  a.provider.stream = (r) => {
    if (++calls === 2) throw new Error("a provider that broke its promise never to throw");
    return inner(r);
  };
  const answer = await a.response(send(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] }));
  expect(answer.result.stopReason).toBe("end_turn");
  const announced = updates(a, sessionId).filter((u) => u.sessionUpdate === "subagent_update");
  expect(announced[0].state).toEqual({ state: "running" });
  expect(announced.at(-1).state).toMatchObject({ state: "idle", stopReason: "error", error: { message: "a provider that broke its promise never to throw" } });
  expect(JSON.stringify(lastResult(a.provider.requests.at(-1)!))).toContain("a provider that broke its promise never to throw");
  await a.close();
});

test("a child cancelled while its LLM request hangs stops alone: the parent's call fails with a cancelled result and the parent goes on (v1)", async () => {
  const { a, asked, sessionId } = await open({}, V1_SUB);
  a.provider.push({ calls: [task("t1", "slow")] }, { hang: true }, { text: "parent went on" });
  const promptId = send(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  const child = await childRunning(a, sessionId, "t1");
  const t0 = Date.now();
  a.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: child } });
  const answer = await a.response(promptId);
  expect(Date.now() - t0).toBeLessThan(2500);
  expect(answer.result.stopReason).toBe("end_turn");
  const final = updates(a, sessionId).find((u) => u.toolCallId === "t1" && (u.status === "failed" || u.status === "completed"))!;
  expect(final.status).toBe("failed");
  expect(final.rawOutput).toEqual({ sessionId: child, stopReason: "cancelled" });
  expect(lastResult(a.provider.requests[2]!)).toMatchObject({ callId: "t1", isError: true });
  expect(lastResult(a.provider.requests[2]!).content).toContain("cancelled");
  expect(updates(a, sessionId).filter((u) => u.sessionUpdate === "subagent_update").at(-1)!.state).toEqual({ state: "idle", stopReason: "cancelled" });
  expect(schemaFailures(a.out, asked, ["v1u"])).toEqual([]);
  await a.close();
});

test("on v2 the parent's call carries {type: session} content, and a child cancelled alone ends it cancelled; both v2 schemas hold", async () => {
  const { a, asked, sessionId } = await open({}, V2);
  a.provider.push({ calls: [task("t1", "slow")] }, { hang: true }, { text: "parent went on" });
  send(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  const child = await childRunning(a, sessionId, "t1", true);
  const named = updates(a, sessionId).find((u) => u.toolCallId === "t1" && u.content?.some((c: any) => c.type === "session"));
  expect(updates(a, sessionId).findIndex((u) => u.sessionUpdate === "subagent_update")).toBeLessThan(updates(a, sessionId).indexOf(named));
  a.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: child } });
  await a.until(() => updates(a, sessionId).some((u) => u.sessionUpdate === "state_update" && u.state === "idle"), "the parent idle");
  expect(updates(a, sessionId).filter((u) => u.sessionUpdate === "state_update" && u.state === "idle")[0].stopReason).toBe("end_turn");
  const final = updates(a, sessionId).filter((u) => u.toolCallId === "t1").at(-1)!;
  expect(final.status).toBe("cancelled");
  expect(final.content[0]).toEqual({ type: "session", sessionId: child });
  expect(schemaFailures(a.out, asked, ["v2", "v2u"])).toEqual([]);
  await a.close();
});

test("cancelling the parent cancels its children; a child is no session for prompts or close", async () => {
  const { a, asked, sessionId } = await open({}, V1_SUB);
  a.provider.push({ calls: [task("t1", "slow")] }, { hang: true });
  const promptId = send(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  const child = await childRunning(a, sessionId, "t1");
  const prompted = await req(a, asked, "session/prompt", { sessionId: child, prompt: [{ type: "text", text: "hi" }] });
  expect(prompted.error.code).toBe(-32602);
  const closed = await req(a, asked, "session/close", { sessionId: child });
  expect(closed.error.code).toBe(-32602);
  expect(closed.error.message).toContain("subagent");
  a.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
  expect((await a.response(promptId)).result.stopReason).toBe("cancelled");
  // The child's turn is over: it is no longer a session of the agent.
  const after = await req(a, asked, "_session/steering", { sessionId: child, prompt: [{ type: "text", text: "x" }] });
  expect(after.error.code).toBe(-32002);
  await a.close();
});

test("parallel children; the per-turn bound; an empty prompt and an unknown model are tool errors the model reads", async () => {
  const { a, asked, sessionId } = await open({ models: ["m", "m2"] }, V1_SUB, { TENDRIL_MAX_SUBAGENTS_PER_TURN: "3" });
  a.provider.push(
    { calls: [task("a", "A: sleep"), task("b", "B: sleep"), task("d", ""), task("e", "E", { model: "nope" }), task("c", "C")] },
    { calls: [{ id: "s1", name: "t__sleep", input: { ms: 200 } }] },
    { calls: [{ id: "s2", name: "t__sleep", input: { ms: 200 } }] },
    { text: "answer one" },
    { text: "answer two" },
    { text: "done" },
  );
  const promptId = send(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  expect((await a.response(promptId)).result.stopReason).toBe("end_turn");
  // Both children asked the model before either finished: they ran side by side.
  expect(a.provider.requests[1]!.length).toBe(1);
  expect(a.provider.requests[2]!.length).toBe(1);
  const results = a.provider.requests[5]!.at(-1)!;
  const byId = Object.fromEntries((results as any).results.map((r: any) => [r.callId, r]));
  expect(byId.a.isError || byId.b.isError).toBe(false);
  expect([byId.a.content, byId.b.content].sort()).toEqual(["answer one", "answer two"]);
  expect(byId.c.isError).toBe(true);
  expect(byId.c.content).toContain("MAX_SUBAGENTS_PER_TURN");
  expect(byId.d.isError).toBe(true);
  expect(byId.d.content).toContain("prompt must be a non-empty string");
  expect(byId.e.isError).toBe(true);
  expect(byId.e.content).toContain("unknown model");
  expect(schemaFailures(a.out, asked, ["v1u"])).toEqual([]);
  await a.close();
});

test("v2 resume with replayFrom replays a finished subagent: announcement first, its updates under its id, the parent call naming it", async () => {
  const store = new SessionStore(state);
  const { a, asked, sessionId } = await open({ store }, V2);
  a.provider.push({ calls: [task("t1", "look")] }, { text: "child answer" }, { text: "done" });
  send(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  await a.until(() => updates(a, sessionId).some((u) => u.sessionUpdate === "state_update" && u.state === "idle"), "the turn idle");
  await a.close();
  const b = memoryAgent({ store });
  const asked2 = new Map<unknown, string>();
  await req(b, asked2, "initialize", V2);
  await req(b, asked2, "session/resume", { sessionId, cwd: tmpdir(), mcpServers: [], replayFrom: { type: "start" } });
  const announced = b.out.findIndex((m) => m.params?.update?.sessionUpdate === "subagent_update");
  const child = b.out[announced]!.params.update.sessionId;
  expect(announced).toBeLessThan(b.out.findIndex((m) => m.params?.sessionId === child));
  expect(updates(b, child).some((u) => u.sessionUpdate === "agent_message_chunk" && u.content.text === "child answer")).toBe(true);
  expect(updates(b, sessionId).filter((u) => u.toolCallId === "t1").at(-1)!.content[0]).toEqual({ type: "session", sessionId: child });
  expect(schemaFailures(b.out, asked2, ["v2", "v2u"])).toEqual([]);
  await b.close();
});

test("MAX_SUBAGENT_DEPTH: 0 offers no task tool; 2 lets a child start its own subagent, announced on the child", async () => {
  const none = await open({}, V1_SUB, { TENDRIL_MAX_SUBAGENT_DEPTH: "0" });
  none.a.provider.push({ calls: [task("t1", "look")] }, { text: "done" });
  await req(none.a, none.asked, "session/prompt", { sessionId: none.sessionId, prompt: [{ type: "text", text: "go" }] });
  expect(lastResult(none.a.provider.requests[1]!)).toMatchObject({ callId: "t1", isError: true, content: "unknown tool: agent__task" });
  await none.a.close();

  const { a, asked, sessionId } = await open({}, V1_SUB, { TENDRIL_MAX_SUBAGENT_DEPTH: "2" });
  a.provider.push({ calls: [task("t1", "delegate")] }, { calls: [task("t2", "the real work")] }, { text: "grandchild answer" }, { text: "child relays it" }, { text: "done" });
  const answer = await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  expect(answer.result.stopReason).toBe("end_turn");
  const child = childOf(a, sessionId, "t1");
  const grandchild = childOf(a, child, "t2");
  expect(typeof grandchild).toBe("string");
  expect(updates(a, child).some((u) => u.sessionUpdate === "subagent_update" && u.sessionId === grandchild)).toBe(true);
  expect(updates(a, grandchild).some((u) => u.sessionUpdate === "agent_message_chunk" && u.content.text === "grandchild answer")).toBe(true);
  expect(lastResult(a.provider.requests[3]!)).toMatchObject({ callId: "t2", content: "grandchild answer" });
  expect(schemaFailures(a.out, asked, ["v1u"])).toEqual([]);
  await a.close();
});

test("v2 tool_call/cancel reaches a subagent's running tool call: it ends cancelled and the child goes on", async () => {
  const { a, asked, sessionId } = await open({}, V2);
  a.provider.push({ calls: [task("t1", "sleep")] }, { calls: [{ id: "s1", name: "t__sleep", input: { ms: 20_000 } }] }, { text: "child stopped waiting" }, { text: "parent done" });
  send(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  const child = await childRunning(a, sessionId, "t1", true);
  await a.until(() => updates(a, child).some((u) => u.toolCallId === "s1" && u.status === "in_progress"), "the child's call running");
  const answer = await req(a, asked, "tool_call/cancel", { sessionId: child, toolCallId: "s1" });
  expect(answer.error).toBeUndefined();
  await a.until(() => updates(a, sessionId).some((u) => u.sessionUpdate === "state_update" && u.state === "idle"), "the parent idle");
  expect(updates(a, child).filter((u) => u.toolCallId === "s1").at(-1)!.status).toBe("cancelled");
  expect(lastResult(a.provider.requests[2]!)).toMatchObject({ callId: "s1", content: "The user cancelled this tool call.", isError: true });
  expect(lastResult(a.provider.requests[3]!)).toMatchObject({ callId: "t1", content: "child stopped waiting", isError: false });
  await a.close();
});

test("v2 child sessions report their state: running at the start, requires_action mirrored on the parent's subagent_update while the child asks, idle at the end", async () => {
  const { a, asked, sessionId } = await open({ mode: "ask" }, V2);
  a.provider.push(
    { calls: [task("t1", "look for X")] },
    { calls: [{ id: "c1", name: "t__echo", input: { text: "hi" } }] },
    { text: "found X" },
    { text: "done" },
  );
  send(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  await a.until(() => a.out.some((m) => m.method === "session/request_permission"), "a permission question");
  const ask = a.out.find((m) => m.method === "session/request_permission")!;
  const child = ask.params.sessionId as string;
  expect(child).not.toBe(sessionId);
  const mirrored = () => updates(a, sessionId).filter((u) => u.sessionUpdate === "subagent_update" && u.sessionId === child).map((u) => u.state.state);
  expect(mirrored()).toEqual(["running", "requires_action"]);
  a.send({ jsonrpc: "2.0", id: ask.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
  await a.until(() => updates(a, sessionId).some((u) => u.sessionUpdate === "state_update" && u.state === "idle"), "the parent idle");
  expect(mirrored()).toEqual(["running", "requires_action", "running", "idle"]);
  const states = updates(a, child).filter((u) => u.sessionUpdate === "state_update").map((u) => `${u.state}${u.stopReason ? `:${u.stopReason}` : ""}`);
  expect(states).toEqual(["running", "requires_action", "running", "idle:end_turn"]);
  // running before any other update of the child's own; idle after its last
  const mine = updates(a, child);
  expect(mine[0]).toMatchObject({ sessionUpdate: "state_update", state: "running" });
  expect(mine.at(-1)).toMatchObject({ sessionUpdate: "state_update", state: "idle" });
  expect(schemaFailures(a.out, asked, ["v2", "v2u"])).toEqual([]);
  await a.close();
});

test("a child is offered its parent's tools and system prompt byte for byte (the provider's cached prefix); its todo and task calls are refused", async () => {
  // The stand-in tools plus a todo list, as the dev server offers one.
  const calls: string[] = [];
  const todo = { qualifiedName: "dev__todo", server: "dev", tool: "todo", description: "todo", inputSchema: { type: "object" }, readOnly: false, hook: false };
  const pool = {
    async openTools() {
      const t = standInTools(calls);
      return { ...t, tools: () => [...t.tools(), todo] };
    },
  };
  const { a, asked, sessionId } = await open({ pool }, V1_SUB);
  a.provider.push(
    { calls: [task("t1", "look")] },
    { calls: [{ id: "c1", name: "dev__todo", input: { todos: [] } }, { id: "c2", name: "agent__task", input: { description: "deeper", prompt: "go deeper" } }] },
    { text: "done looking" },
    { text: "done" },
  );
  const answer = await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  expect(answer.result.stopReason).toBe("end_turn");
  expect(a.provider.requests.length).toBe(4);
  const [parent, child, childAgain] = a.provider.prefixes;
  expect(child).toBe(parent!);
  expect(childAgain).toBe(parent!);
  expect(JSON.parse(parent!).tools.map((t: { name: string }) => t.name)).toContain("agent__task");
  // the child's calls of its parent's own tools are refused, and no grandchild ran
  const results = a.provider.requests[2]!.at(-1) as { results: { callId: string; content: string; isError: boolean }[] };
  expect(results.results.map((r) => [r.callId, r.isError])).toEqual([["c1", true], ["c2", true]]);
  expect(results.results[0]!.content).toContain("todo list is your parent's plan");
  expect(results.results[1]!.content).toContain("MAX_SUBAGENT_DEPTH");
  expect(calls).toEqual([]);
  await a.close();
});
