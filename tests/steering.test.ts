// Steering (SPEC §3.10), in memory: `_session/steering` during a slow tool call is answered
// `injected` at once and its text is the next LLM request's last user message, after the tool result;
// the client sees it as a `user_message_chunk`; it is saved and replayed by load; on v2 too. With no
// turn running it starts one (`startedNewTurn`), or changes nothing when the client asked
// `idleBehavior: "promptRequired"`; the refusals (another idle behaviour, an unknown session, a prompt
// that is not an array). Every message is schema-checked.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionStore } from "../core/agent/session-store.ts";
import { memoryAgent, type MemoryAgent } from "./memory-agent.ts";
import { requestAsked, schemaFailures, type SchemaName, sendAsked } from "./acp-validate.ts";

const state = mkdtempSync(join(tmpdir(), "tendril-steer-"));
afterAll(() => rmSync(state, { recursive: true, force: true }));

const req = requestAsked;

const updates = (a: MemoryAgent, sessionId: string) => a.out.filter((m) => m.method === "session/update" && m.params.sessionId === sessionId).map((m) => m.params.update);
const steerText = "use the other file instead";

/** A prompt whose first response calls t__sleep for `ms`; steering is sent once the call runs. */
async function steerDuringSleep(a: MemoryAgent, asked: Map<unknown, string>, sessionId: string, ms: number) {
  a.provider.push({ calls: [{ id: "slow", name: "t__sleep", input: { ms } }] }, { text: "switched" });
  const promptId = sendAsked(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "read a file" }] });
  await a.until(() => updates(a, sessionId).some((u) => u.toolCallId === "slow" && u.status === "in_progress"), "the slow call running");
  const t0 = Date.now();
  const answer = await req(a, asked, "_session/steering", { sessionId, prompt: [{ type: "text", text: steerText }] });
  const answeredMs = Date.now() - t0;
  // Answered while the tool still sleeps: the turn has not moved on.
  expect(answer.result).toEqual({ outcome: "injected" });
  expect(a.provider.requests.length).toBe(1);
  expect(answeredMs).toBeLessThan(ms);
  return promptId;
}

test("steering during a slow tool call: answered at once, heard at the next LLM request after the tool result, shown as a user_message_chunk", async () => {
  const a = memoryAgent();
  const asked = new Map<unknown, string>();
  const init = await req(a, asked, "initialize", { protocolVersion: 1 });
  // Where the adapters that ship steering advertise it (top level), and where this agent did before.
  expect(init.result._meta.steering.supported).toBe(true);
  expect(init.result.agentCapabilities._meta.steering.supported).toBe(true);
  const sessionId = (await req(a, asked, "session/new", { cwd: tmpdir(), mcpServers: [] })).result.sessionId;
  const promptId = await steerDuringSleep(a, asked, sessionId, 400);
  expect((await a.response(promptId)).result.stopReason).toBe("end_turn");
  const next = a.provider.requests[1]!;
  expect(next.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"]);
  expect(next[3]).toEqual({ role: "user", content: [{ type: "text", text: steerText }] });
  // The client sees it where the model does: after the call's result, before the answer's text.
  const seen = updates(a, sessionId);
  const shown = seen.findIndex((u) => u.sessionUpdate === "user_message_chunk" && u.content.text === steerText);
  const done = seen.findIndex((u) => u.toolCallId === "slow" && u.status === "completed");
  const text = seen.findIndex((u) => u.sessionUpdate === "agent_message_chunk");
  expect(done).toBeGreaterThanOrEqual(0);
  expect(shown).toBeGreaterThan(done);
  expect(text).toBeGreaterThan(shown);
  expect(typeof seen[shown].messageId).toBe("string");
  expect(schemaFailures(a.out, asked, ["v1"])).toEqual([]);
  await a.close();
});

test("steering while the model writes its last answer continues the turn instead of dropping the message", async () => {
  const a = memoryAgent();
  const asked = new Map<unknown, string>();
  await req(a, asked, "initialize", { protocolVersion: 1 });
  const sessionId = (await req(a, asked, "session/new", { cwd: tmpdir(), mcpServers: [] })).result.sessionId;
  // The first answer ends the turn, but the steering arrives while it is being written.
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const inner = a.provider.stream.bind(a.provider);
  let calls = 0;
  a.provider.stream = async function* (r) {
    if (calls++ === 0) await gate;
    yield* inner(r);
  };
  a.provider.push({ text: "done early" }, { text: "done as steered" });
  const promptId = sendAsked(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  await a.until(() => calls === 1, "the first LLM request");
  expect((await req(a, asked, "_session/steering", { sessionId, prompt: [{ type: "text", text: steerText }] })).result).toEqual({ outcome: "injected" });
  release();
  expect((await a.response(promptId)).result.stopReason).toBe("end_turn");
  expect(a.provider.requests.length).toBe(2);
  expect(a.provider.requests[1]!.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: steerText }] });
  await a.close();
});

test("steering with no turn running starts a new turn with it: startedNewTurn, the model hears it, the client sees the message and the answer", async () => {
  const a = memoryAgent();
  const asked = new Map<unknown, string>();
  await req(a, asked, "initialize", { protocolVersion: 1 });
  const sessionId = (await req(a, asked, "session/new", { cwd: tmpdir(), mcpServers: [] })).result.sessionId;
  a.provider.push({ text: "on it" });
  const answer = await req(a, asked, "_session/steering", { sessionId, prompt: [{ type: "text", text: steerText }] });
  expect(answer.result).toEqual({ outcome: "startedNewTurn" });
  await a.until(() => updates(a, sessionId).some((u) => u.sessionUpdate === "agent_message_chunk"), "the new turn's answer");
  expect(a.provider.requests.length).toBe(1);
  expect(JSON.stringify(a.provider.requests[0]!.at(-1))).toContain(steerText);
  const seen = updates(a, sessionId);
  const shown = seen.findIndex((u) => u.sessionUpdate === "user_message_chunk" && u.content.text === steerText);
  expect(shown).toBeGreaterThanOrEqual(0);
  expect(shown).toBeLessThan(seen.findIndex((u) => u.sessionUpdate === "agent_message_chunk"));
  // the session is free again once that turn ends: a prompt is taken
  await a.until(() => updates(a, sessionId).some((u) => u.sessionUpdate === "session_info_update"), "the turn's end");
  a.provider.push({ text: "again" });
  expect((await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "more" }] })).result.stopReason).toBe("end_turn");
  expect(schemaFailures(a.out, asked, ["v1"])).toEqual([]);
  await a.close();
});

test("steering with no turn running and idleBehavior promptRequired changes nothing: promptRequired, noRunningTurn", async () => {
  const a = memoryAgent();
  const asked = new Map<unknown, string>();
  await req(a, asked, "initialize", { protocolVersion: 1 });
  const sessionId = (await req(a, asked, "session/new", { cwd: tmpdir(), mcpServers: [] })).result.sessionId;
  const answer = await req(a, asked, "_session/steering", { sessionId, prompt: [{ type: "text", text: "x" }], _meta: { steering: { idleBehavior: "promptRequired" } } });
  expect(answer.result).toEqual({ outcome: "promptRequired", reason: "noRunningTurn" });
  await new Promise((r) => setTimeout(r, 50));
  expect(a.provider.requests.length).toBe(0);
  // (the command list comes after any session/new)
  expect(updates(a, sessionId).filter((u) => u.sessionUpdate !== "available_commands_update")).toEqual([]);
  await a.close();
});

test("steering refusals: another idleBehavior -32602 naming it, an unknown session -32002, a prompt that is no array -32602", async () => {
  const a = memoryAgent();
  const asked = new Map<unknown, string>();
  await req(a, asked, "initialize", { protocolVersion: 1 });
  const sessionId = (await req(a, asked, "session/new", { cwd: tmpdir(), mcpServers: [] })).result.sessionId;
  const other = await req(a, asked, "_session/steering", { sessionId, prompt: [{ type: "text", text: "x" }], _meta: { steering: { idleBehavior: "queue" } } });
  expect(other.error.code).toBe(-32602);
  expect(other.error.message).toContain("idleBehavior");
  expect(a.provider.requests.length).toBe(0);
  const unknown = await req(a, asked, "_session/steering", { sessionId: "nope", prompt: [{ type: "text", text: "x" }] });
  expect(unknown.error.code).toBe(-32002);
  const notArray = await req(a, asked, "_session/steering", { sessionId, prompt: "x" });
  expect(notArray.error.code).toBe(-32602);
  expect(notArray.error.message).toContain("prompt");
  expect(schemaFailures(a.out, asked, ["v1"])).toEqual([]);
  await a.close();
});

test("v2: steering with no turn running starts one that reports its state: running, the user message, idle", async () => {
  const a = memoryAgent();
  const asked = new Map<unknown, string>();
  const init = await req(a, asked, "initialize", { protocolVersion: 2, info: { name: "t", version: "1" }, capabilities: {} });
  expect(init.result._meta.steering.supported).toBe(true);
  const sessionId = (await req(a, asked, "session/new", { cwd: tmpdir(), mcpServers: [] })).result.sessionId;
  a.provider.push({ text: "on it" });
  expect((await req(a, asked, "_session/steering", { sessionId, prompt: [{ type: "text", text: steerText }] })).result).toEqual({ outcome: "startedNewTurn" });
  await a.until(() => updates(a, sessionId).some((u) => u.sessionUpdate === "state_update" && u.state === "idle"), "idle");
  const kinds = updates(a, sessionId).filter((u) => ["state_update", "user_message", "agent_message_chunk"].includes(u.sessionUpdate)).map((u) => (u.sessionUpdate === "state_update" ? `${u.state}${u.stopReason ? `:${u.stopReason}` : ""}` : u.sessionUpdate));
  expect(kinds).toEqual(["running", "user_message", "agent_message_chunk", "idle:end_turn"]);
  expect(schemaFailures(a.out, asked, ["v2", "v2u"])).toEqual([]);
  await a.close();
});

test("a steering message is saved with the session and replayed by load like any user message", async () => {
  const store = new SessionStore(state);
  const a = memoryAgent({ store });
  const asked = new Map<unknown, string>();
  await req(a, asked, "initialize", { protocolVersion: 1 });
  const sessionId = (await req(a, asked, "session/new", { cwd: tmpdir(), mcpServers: [] })).result.sessionId;
  const promptId = await steerDuringSleep(a, asked, sessionId, 300);
  await a.response(promptId);
  const live = updates(a, sessionId).find((u) => u.sessionUpdate === "user_message_chunk" && u.content.text === steerText);
  await a.close();

  const b = memoryAgent({ store });
  const asked2 = new Map<unknown, string>();
  await req(b, asked2, "initialize", { protocolVersion: 1 });
  await req(b, asked2, "session/load", { sessionId, cwd: tmpdir(), mcpServers: [] });
  const replay = updates(b, sessionId);
  const shown = replay.findIndex((u) => u.sessionUpdate === "user_message_chunk" && u.content.text === steerText);
  expect(shown).toBeGreaterThan(replay.findIndex((u) => u.toolCallId === "slow" && u.status === "completed"));
  expect(replay[shown].messageId).toBe(live.messageId);
  // The model hears it again in the loaded history.
  b.provider.push({ text: "ok" });
  await req(b, asked2, "session/prompt", { sessionId, prompt: [{ type: "text", text: "more" }] });
  expect(b.provider.requests[0]!.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user", "assistant", "user"]);
  expect(b.provider.requests[0]![3]).toEqual({ role: "user", content: [{ type: "text", text: steerText }] });
  expect(schemaFailures(b.out, asked2, ["v1"])).toEqual([]);
  await b.close();
});

test("steering on a v2 connection: advertised, answered at once, heard after the tool result, valid in both v2 schemas", async () => {
  const a = memoryAgent();
  const asked = new Map<unknown, string>();
  const init = await req(a, asked, "initialize", { protocolVersion: 2, info: { name: "t", version: "1" }, capabilities: {} });
  expect(init.result._meta.steering.supported).toBe(true);
  expect(init.result.capabilities._meta.steering.supported).toBe(true);
  const sessionId = (await req(a, asked, "session/new", { cwd: tmpdir(), mcpServers: [] })).result.sessionId;
  await steerDuringSleep(a, asked, sessionId, 300);
  await a.until(() => updates(a, sessionId).some((u) => u.sessionUpdate === "state_update" && u.state === "idle"), "idle");
  expect(a.provider.requests[1]!.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: steerText }] });
  const seen = updates(a, sessionId);
  expect(seen.some((u) => u.sessionUpdate === "user_message_chunk" && u.content.text === steerText)).toBe(true);
  const schemas: SchemaName[] = ["v2", "v2u"];
  expect(schemaFailures(a.out, asked, schemas)).toEqual([]);
  await a.close();
});
