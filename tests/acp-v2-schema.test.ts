// ACP v2 on a connection whose initialize asks for protocolVersion 2, driven in memory: every message
// the agent sends validates against the SDK's v2 JSON Schema (the oracle), the turn's shape (prompt
// acknowledged with a messageId, state_update running → idle with the stop reason), resume with
// replayFrom and its closing state snapshot, tool_call/cancel, and the errors: a v1 method on a v2
// connection and the reverse (-32601), an unknown replay cursor, a cancel of a finished tool call.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import v2 from "@agentclientprotocol/sdk/schema/v2/schema.json" with { type: "json" };
import v2unstable from "@agentclientprotocol/sdk/schema/v2/schema.unstable.json" with { type: "json" };
import { SessionStore } from "../core/agent/session-store.ts";
import { memoryAgent, type MemoryAgent } from "./memory-agent.ts";
import { liveToolPool, standInPool, StandInServerEvents } from "./in-memory.ts";
import { schemaAjv } from "./acp-schema-ajv.ts";
import { FAKE_MCP_PATH, waitFor } from "./fake-mcp-helpers.ts";
import { createMcpPool } from "../core/mcp/pool.ts";
import { AgentAuth } from "../core/acp/auth.ts";
import { credentialsPath, keySource, storeKey } from "../core/credentials.ts";
import { loadLimits } from "../core/limits.ts";

const state = mkdtempSync(join(tmpdir(), "tendril-v2-"));
const ws = mkdtempSync(join(tmpdir(), "tendril-v2-ws-"));
afterAll(() => {
  for (const d of [state, ws]) rmSync(d, { recursive: true, force: true });
});

const defs = (v2 as { $defs: Record<string, Record<string, unknown>> }).$defs;
const ajv = schemaAjv();
ajv.addSchema(v2 as object, "acp2");
// The unstable schema too: it defines what Tendril takes from it (the idle state's token `usage`).
ajv.addSchema(v2unstable as object, "acp2u");
/** The v2 response definition of each method the agent answers (`x-side: agent`). */
const responseOf = new Map<string, string>();
for (const [name, d] of Object.entries(defs)) {
  if (d["x-side"] === "agent" && name.endsWith("Response")) responseOf.set(d["x-method"] as string, name);
}

function expectation(m: any, asked: Map<unknown, string>): { def: string; value: unknown } {
  if (m.method === "session/update") return { def: "UpdateSessionNotification", value: m.params };
  if (m.method === "session/request_permission") return { def: "RequestPermissionRequest", value: m.params };
  if (m.method === "elicitation/create") return { def: "CreateElicitationRequest", value: m.params };
  if (m.method === "elicitation/complete") return { def: "CompleteElicitationNotification", value: m.params };
  if (m.method !== undefined) throw new Error(`the agent sent ${m.method} on a v2 connection, which this test does not know`);
  if (m.error !== undefined) return { def: "Error", value: m.error };
  const method = asked.get(m.id);
  const def = method && responseOf.get(method);
  if (!def) throw new Error(`an answer to ${method ?? `unknown id ${m.id}`} has no response definition in the v2 schema`);
  return { def, value: m.result };
}

const validatedKinds = new Set<string>();

function validateAll(a: MemoryAgent, asked: Map<unknown, string>) {
  const failures: string[] = [];
  const kinds = new Set<string>();
  for (const m of a.out) {
    const { def, value } = expectation(m, asked);
    if (m.method === "session/update") kinds.add(m.params.update.sessionUpdate);
    for (const schema of ["acp2", "acp2u"]) {
      const validate = ajv.getSchema(`${schema}#/$defs/${def}`)!;
      if (!validate(value)) failures.push(`${schema} ${def}: ${JSON.stringify(value).slice(0, 300)}\n  ${ajv.errorsText(validate.errors)}`);
    }
  }
  if (failures.length === 0) for (const k of kinds) validatedKinds.add(k);
  return { kinds, failures };
}

let nextId = 1;
async function req(a: MemoryAgent, asked: Map<unknown, string>, method: string, params: Record<string, unknown>) {
  const id = nextId++;
  asked.set(id, method);
  a.send({ jsonrpc: "2.0", id, method, params });
  return a.response(id);
}

const INIT_V2 = { protocolVersion: 2, info: { name: "v2-test", version: "1" }, capabilities: {} };
const updates = (a: MemoryAgent, sessionId: string) => a.out.filter((m) => m.method === "session/update" && m.params.sessionId === sessionId).map((m) => m.params.update);
const idles = (a: MemoryAgent, sessionId: string) => updates(a, sessionId).filter((u) => u.sessionUpdate === "state_update" && u.state === "idle");

async function untilIdle(a: MemoryAgent, sessionId: string, n: number) {
  await waitFor(() => idles(a, sessionId).length >= n, 10_000);
  return idles(a, sessionId)[n - 1];
}

test("a v2 session's life validates against the v2 schema: acknowledged prompt, state updates, upserts by id, resume with replay", async () => {
  const store = new SessionStore(state);
  const asked = new Map<unknown, string>();
  const a = memoryAgent({ store, mode: "ask" });
  const init = (await req(a, asked, "initialize", INIT_V2)).result;
  expect(init.protocolVersion).toBe(2);
  const created = (await req(a, asked, "session/new", { cwd: ws, mcpServers: [] })).result;
  const { sessionId } = created;
  expect(created.availableCommands.length).toBeGreaterThan(0);
  a.provider.push(
    { text: "Echoing.", calls: [{ id: "c1", name: "t__echo", input: { text: "hi" } }] },
    { text: "Failing.", calls: [{ id: "c2", name: "t__fail", input: {} }] },
    { text: "Done." },
  );
  const ack = (await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "echo hi" }] })).result;
  expect(typeof ack.messageId).toBe("string");
  for (let answered = 0; answered < 2; answered++) {
    let ask: any;
    await waitFor(() => (ask = a.out.filter((m) => m.method === "session/request_permission")[answered]) !== undefined, 10_000);
    a.send({ jsonrpc: "2.0", id: ask.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
  }
  const ended = await untilIdle(a, sessionId, 1);
  expect(ended.stopReason).toBe("end_turn");
  expect(ended.usage.outputTokens).toBeGreaterThan(0);
  const live = updates(a, sessionId);
  // the prompt echoed with the acknowledged id; the first state is running; every tool call an upsert
  expect(live.find((u) => u.sessionUpdate === "user_message").messageId).toBe(ack.messageId);
  expect(live.filter((u) => u.sessionUpdate === "state_update").map((u) => u.state)).toEqual(["running", "requires_action", "running", "requires_action", "running", "idle"]);
  expect(live.some((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "plan")).toBe(false);
  const c1 = live.filter((u) => u.toolCallId === "c1");
  expect(c1[0].capabilities).toEqual({ cancel: {} });
  expect(c1.at(-1).status).toBe("completed");
  expect(live.filter((u) => u.toolCallId === "c2").at(-1).status).toBe("failed");
  expect(live.filter((u) => u.sessionUpdate === "agent_message_chunk").every((u) => typeof u.messageId === "string")).toBe(true);

  const set = (await req(a, asked, "session/set_config_option", { sessionId, configId: "mode", type: "id", value: "read-only" })).result;
  expect(set.configOptions.find((o: any) => o.configId === "mode").currentValue).toBe("read-only");
  await req(a, asked, "session/list", {});
  expect((await req(a, asked, "session/prompt", { sessionId: "no-such-session", prompt: [{ type: "text", text: "x" }] })).error.code).toBe(-32002);
  const audio = (await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }] })).error;
  expect(audio.code).toBe(-32602);
  expect(audio.message).toContain("audio");
  expect(updates(a, "no-such-session")).toEqual([]);
  await req(a, asked, "session/close", { sessionId });
  // resume with replay: the history, then the current state (idle) as the last update before the answer
  const before = a.out.length;
  const resumeId = nextId;
  const resumed = await req(a, asked, "session/resume", { sessionId, cwd: ws, mcpServers: [], replayFrom: { type: "start" } });
  expect(resumed.result.configOptions.length).toBeGreaterThan(0);
  const during = a.out.slice(before, a.out.findIndex((m) => m.id === resumeId && m.result));
  const replayed = during.map((m) => m.params.update);
  expect(replayed.some((u) => u.sessionUpdate === "user_message_chunk" && u.content.text === "echo hi")).toBe(true);
  expect(replayed.some((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "c1")).toBe(true);
  // a replayed message keeps its id: the user's under the id the prompt's answer gave, the agent's as streamed
  expect(replayed.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.messageId)).toEqual([ack.messageId]);
  const liveAgentIds = [...new Set(live.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.messageId))];
  expect(liveAgentIds.length).toBeGreaterThan(0);
  expect([...new Set(replayed.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.messageId))]).toEqual(liveAgentIds);
  expect(replayed.at(-1)).toEqual({ sessionUpdate: "state_update", state: "idle" });
  // resume without replay: only the state snapshot
  const before2 = a.out.length;
  const again = nextId;
  await req(a, asked, "session/resume", { sessionId, cwd: ws });
  // what the session has used and spent so far, then the current-state snapshot
  const resumedAgain = a.out.slice(before2).filter((m) => m.method === "session/update").map((m) => m.params.update);
  expect(resumedAgain.map((u) => u.sessionUpdate)).toEqual(["usage_update", "state_update"]);
  expect(resumedAgain[1]).toEqual({ sessionUpdate: "state_update", state: "idle" });
  expect(a.out.some((m) => m.id === again && m.result)).toBe(true);
  await req(a, asked, "session/delete", { sessionId });
  await a.close();

  const { failures, kinds } = validateAll(a, asked);
  expect(failures).toEqual([]);
  for (const k of ["state_update", "user_message", "tool_call_update", "agent_message_chunk", "config_option_update", "session_info_update", "usage_update", "user_message_chunk"]) expect(kinds.has(k)).toBe(true);
});

test("v1 methods on a v2 connection and v2 methods on a v1 connection are -32601; any version but 2 gets v1", async () => {
  const asked = new Map<unknown, string>();
  const two = memoryAgent({});
  await req(two, asked, "initialize", INIT_V2);
  const { sessionId } = (await req(two, asked, "session/new", { cwd: ws })).result;
  for (const method of ["authenticate", "logout", "session/load", "session/fork", "session/set_mode", "session/set_model"]) {
    const r = await req(two, asked, method, { sessionId, cwd: ws, mcpServers: [], modeId: "ask", methodId: "api-key" });
    expect([method, r.error?.code]).toEqual([method, -32601]);
  }
  await two.close();
  expect(validateAll(two, asked).failures).toEqual([]);

  for (const version of [1, 3]) {
    const one = memoryAgent({});
    const init = (await req(one, new Map(), "initialize", { protocolVersion: version, clientCapabilities: {} })).result;
    expect(init.protocolVersion).toBe(1);
    const v1Session = (await req(one, new Map(), "session/new", { cwd: ws, mcpServers: [] })).result.sessionId;
    for (const method of ["auth/login", "auth/logout", "tool_call/cancel"]) {
      const r = await req(one, new Map(), method, { sessionId: v1Session, toolCallId: "x", methodId: "api-key" });
      expect([method, r.error?.code]).toEqual([method, -32601]);
    }
    await one.close();
  }
});

test("an unknown replay cursor, an unknown or finished tool call, a busy session: clear errors", async () => {
  const store = new SessionStore(state);
  const asked = new Map<unknown, string>();
  const a = memoryAgent({ store });
  await req(a, asked, "initialize", INIT_V2);
  const { sessionId } = (await req(a, asked, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ calls: [{ id: "e1", name: "t__echo", input: { text: "x" } }] }, { text: "ok" });
  await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  await untilIdle(a, sessionId, 1);
  const finished = (await req(a, asked, "tool_call/cancel", { sessionId, toolCallId: "e1" })).error;
  expect(finished.code).toBe(-32602);
  expect(finished.message).toContain("already finished");
  const unknown = (await req(a, asked, "tool_call/cancel", { sessionId, toolCallId: "nope" })).error;
  expect(unknown.code).toBe(-32602);
  expect(unknown.message).toContain("no tool call");
  expect((await req(a, asked, "tool_call/cancel", { sessionId: "gone", toolCallId: "e1" })).error.code).toBe(-32002);
  // v1's stdio shape (no type) and sse are no MCP servers of v2
  for (const server of [{ name: "x", command: "/bin/true", args: [], env: [] }, { type: "sse", name: "s", url: "http://127.0.0.1:9/", headers: [] }]) {
    const bad = (await req(a, asked, "session/new", { cwd: ws, mcpServers: [server] })).error;
    expect(bad.code).toBe(-32602);
    expect(bad.message).toContain('mcpServers[0].type must be "stdio" or "http"');
  }
  await req(a, asked, "session/close", { sessionId });
  const cursor = (await req(a, asked, "session/resume", { sessionId, cwd: ws, replayFrom: { type: "message", messageId: "m1" } })).error;
  expect(cursor.code).toBe(-32602);
  expect(cursor.message).toContain('"message" is not a replay cursor');
  expect((await req(a, asked, "session/resume", { sessionId: "no-such", cwd: ws, replayFrom: { type: "start" } })).error.code).toBe(-32002);
  // a prompt while one runs
  await req(a, asked, "session/resume", { sessionId, cwd: ws });
  a.provider.push({ calls: [{ id: "s1", name: "t__sleep", input: { ms: 20_000 } }] }, { text: "late" });
  await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "sleep" }] });
  const stateCount = updates(a, sessionId).filter((u) => u.sessionUpdate === "state_update").length;
  const busy = (await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "again" }] })).error;
  expect(busy.message).toContain("busy");
  // refused prompts change no state: no running, no echo
  const audio = (await req(a, asked, "session/prompt", { sessionId: "no-such", prompt: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }] })).error;
  expect(audio.code).toBe(-32002);
  expect(updates(a, sessionId).filter((u) => u.sessionUpdate === "state_update").length).toBe(stateCount);
  // session/cancel: the turn ends idle, cancelled
  a.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
  // (the second idle is resume's state snapshot)
  expect((await untilIdle(a, sessionId, 3)).stopReason).toBe("cancelled");
  await a.close();
  expect(validateAll(a, asked).failures).toEqual([]);
});

test("tool_call/cancel stops one running call: it ends cancelled, the model hears so, and the turn goes on", async () => {
  const asked = new Map<unknown, string>();
  const a = memoryAgent({});
  await req(a, asked, "initialize", INIT_V2);
  const { sessionId } = (await req(a, asked, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ calls: [{ id: "s1", name: "t__sleep", input: { ms: 20_000 } }] }, { text: "carried on" });
  const started = Date.now();
  await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "sleep" }] });
  await waitFor(() => updates(a, sessionId).some((u) => u.toolCallId === "s1" && u.status === "in_progress"), 10_000);
  expect((await req(a, asked, "tool_call/cancel", { sessionId, toolCallId: "s1" })).result).toEqual({});
  expect((await untilIdle(a, sessionId, 1)).stopReason).toBe("end_turn");
  expect(Date.now() - started).toBeLessThan(10_000);
  const s1 = updates(a, sessionId).filter((u) => u.toolCallId === "s1");
  expect(s1.at(-1).status).toBe("cancelled");
  expect(updates(a, sessionId).some((u) => u.sessionUpdate === "agent_message_chunk" && u.content.text === "carried on")).toBe(true);
  expect(JSON.stringify(a.provider.requests.at(-1))).toContain("cancelled this tool call");
  await a.close();
  expect(validateAll(a, asked).failures).toEqual([]);
});

test("a v2 stdio MCP server, a todo list as plan_update, elicitation, a prompt list change and an MCP prompt command validate too", async () => {
  const pool = createMcpPool({ limits: loadLimits({}), env: process.env });
  const asked = new Map<unknown, string>();
  const a = memoryAgent({ pool, mode: "yolo" });
  await req(a, asked, "initialize", { ...INIT_V2, capabilities: { elicitation: { form: {}, url: {} } } });
  const env = [{ name: "FAKE_MCP_PROMPTS", value: "1" }, { name: "FAKE_MCP_EXTRA_TOOLS", value: "todo" }];
  const server = { type: "stdio", name: "fk", command: process.execPath, args: [FAKE_MCP_PATH], env };
  const { sessionId } = (await req(a, asked, "session/new", { cwd: ws, mcpServers: [server] })).result;
  a.provider.push(
    { calls: [{ id: "t1", name: "fk__todo", input: { items: [{ text: "look" }, { text: "fix", done: true }] } }] },
    { calls: [{ id: "f1", name: "fk__confirm", input: { field: "name" } }] },
    { calls: [{ id: "u1", name: "fk__confirm", input: { url: "https://example.test/login" } }] },
    { calls: [{ id: "a1", name: "fk__add_prompt", input: { name: "later" } }] },
    { text: "Done." },
    { text: "Reviewed." },
  );
  await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "plan" }] });
  const answered = new Set<unknown>();
  for (const result of [{ action: "accept", content: { name: "Ada" } }, { action: "accept" }]) {
    let q: Record<string, any> | undefined;
    await waitFor(() => (q = a.out.find((m) => m.method === "elicitation/create" && !answered.has(m.id))) !== undefined, 10_000);
    answered.add(q!.id);
    a.send({ jsonrpc: "2.0", id: q!.id, result });
  }
  expect((await untilIdle(a, sessionId, 1)).stopReason).toBe("end_turn");
  expect(a.out.filter((m) => m.method === "elicitation/create").map((m) => [m.params.mode, m.params.toolCallId])).toEqual([["form", "f1"], ["url", "u1"]]);
  await waitFor(() => a.out.some((m) => m.method === "elicitation/complete"), 5000);
  // the questions are foreground work waiting on the user
  expect(updates(a, sessionId).filter((u) => u.sessionUpdate === "state_update").map((u) => u.state).slice(0, 5)).toEqual(["running", "requires_action", "running", "requires_action", "running"]);
  await waitFor(() => updates(a, sessionId).some((u) => u.sessionUpdate === "available_commands_update"), 10_000);
  await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "/fk:review a.ts" }] });
  expect((await untilIdle(a, sessionId, 2)).stopReason).toBe("end_turn");
  await a.close();
  await pool.closeAll();
  const { failures, kinds } = validateAll(a, asked);
  expect(failures).toEqual([]);
  const plans = updates(a, sessionId).filter((u) => u.sessionUpdate === "plan_update");
  expect(plans[0].plan.entries.map((e: { content: string }) => e.content)).toEqual(["look", "fix"]);
  const commands = updates(a, sessionId).find((u) => u.sessionUpdate === "available_commands_update").availableCommands;
  expect(commands.some((c: { type: string; name: string }) => c.type === "command" && c.name === "fk:later")).toBe(true);
  expect(kinds.has("plan_update")).toBe(true);
});

test("auth over v2: methods in v2's shape, -32000 until a key exists, auth/login, auth/logout", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tendril-v2-auth-"));
  const file = credentialsPath(join(dir, "tendril"));
  const auth = new AgentAuth(keySource("anthropic", {}, file).auth);
  const asked = new Map<unknown, string>();
  const a = memoryAgent({}, {}, { auth });
  const init = (await req(a, asked, "initialize", { ...INIT_V2, capabilities: { auth: { terminal: {} } } })).result;
  expect(init.authMethods.map((m: any) => [m.type, m.methodId])).toEqual([["agent", "api-key"], ["terminal", "login"]]);
  expect(init.authMethods[1].args).toEqual(["login"]);
  expect(init.capabilities.auth).toEqual({});
  const refused = (await req(a, asked, "session/new", { cwd: ws })).error;
  expect(refused.code).toBe(-32000);
  expect(refused.message).toContain("tendril agent login");
  expect((await req(a, asked, "auth/login", { methodId: "api-key" })).error.code).toBe(-32000);
  storeKey(file, "anthropic", { api_key: "sk-stored" });
  expect((await req(a, asked, "auth/login", { methodId: "api-key" })).result).toEqual({});
  expect(typeof (await req(a, asked, "session/new", { cwd: ws })).result.sessionId).toBe("string");
  expect((await req(a, asked, "auth/login", { methodId: "nope" })).error.code).toBe(-32602);
  expect((await req(a, asked, "auth/logout", {})).result).toEqual({});
  expect((await req(a, asked, "session/new", { cwd: ws })).error.code).toBe(-32000);
  await a.close();
  rmSync(dir, { recursive: true, force: true });
  expect(validateAll(a, asked).failures).toEqual([]);
});

test("notices, a context handoff's compaction updates, and a close during a turn (idle, cancelled, before the answer) validate too", async () => {
  const store = new SessionStore(state);
  const asked = new Map<unknown, string>();
  const events = new StandInServerEvents();
  const a = memoryAgent({ store, contextWindow: 10_000, pool: standInPool({ events }) });
  await req(a, asked, "initialize", INIT_V2);
  const { sessionId } = (await req(a, asked, "session/new", { cwd: ws })).result;
  a.provider.push(
    { text: "read a lot", calls: [{ id: "r1", name: "t__echo", input: { text: "big" } }], usage: { input: 9_500, output: 100 } },
    { text: "THE SUMMARY" },
    { text: "continuing" },
  );
  await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "the task" }] });
  expect((await untilIdle(a, sessionId, 1)).stopReason).toBe("end_turn");
  events.fire({ server: "t", kind: "died", detail: "it died" });
  a.provider.push({ calls: [{ id: "s1", name: "t__sleep", input: { ms: 20_000 } }] }, { text: "never" });
  await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "sleep" }] });
  await waitFor(() => updates(a, sessionId).some((u) => u.toolCallId === "s1" && u.status === "in_progress"), 10_000);
  const closeId = nextId;
  await req(a, asked, "session/close", { sessionId });
  const closedAt = a.out.findIndex((m) => m.id === closeId);
  const idle = a.out.findIndex((m) => m.params?.update?.state === "idle" && m.params.update.stopReason === "cancelled");
  expect(idle).toBeGreaterThan(-1);
  expect(idle).toBeLessThan(closedAt);
  expect(a.out.slice(closedAt + 1).some((m) => m.params?.sessionId === sessionId)).toBe(false);
  await a.close();
  const { failures, kinds } = validateAll(a, asked);
  expect(failures).toEqual([]);
  expect(["notice", "compaction_update"].filter((k) => !kinds.has(k))).toEqual([]);
});

test("a live shell call in v2: the terminal announced by terminal_update, its output as terminal_output_chunks while it runs, its exit before the call ends; all valid", async () => {
  const asked = new Map<unknown, string>();
  const a = memoryAgent({ pool: liveToolPool() });
  await req(a, asked, "initialize", INIT_V2);
  const { sessionId } = (await req(a, asked, "session/new", { cwd: ws, mcpServers: [] })).result;
  const chunks = ["one\n", "two\n", "three\n"];
  a.provider.push({ text: "Running.", calls: [{ id: "r1", name: "t__run", input: { chunks, gapMs: 250 } }] }, { text: "Done." });
  await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "run it" }] });
  expect((await untilIdle(a, sessionId, 1)).stopReason).toBe("end_turn");
  const live = updates(a, sessionId);
  const announced = live.findIndex((u) => u.sessionUpdate === "terminal_update");
  const terminalId = live[announced].terminalId;
  const named = live.findIndex((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "r1" && u.content?.some((c: any) => c.type === "terminal" && c.terminalId === terminalId));
  expect(announced).toBeGreaterThanOrEqual(0);
  expect(named).toBeGreaterThan(announced);
  const outputs = live.filter((u) => u.sessionUpdate === "terminal_output_chunk" && u.terminalId === terminalId);
  expect(outputs.length).toBeGreaterThanOrEqual(2);
  expect(outputs.map((u) => Buffer.from(u.data, "base64").toString("utf8")).join("")).toBe(chunks.join(""));
  const exited = live.findIndex((u) => u.sessionUpdate === "terminal_update" && u.exitStatus);
  const ended = live.findIndex((u) => u.toolCallId === "r1" && u.status === "completed");
  expect(live[exited].exitStatus).toEqual({ exitCode: 0, signal: null });
  expect(live.indexOf(outputs[0])).toBeLessThan(ended);
  expect(exited).toBeLessThan(ended);
  // no v1 terminal metadata leaks into v2
  for (const key of ['"terminal_info"', '"terminal_output"', '"terminal_output_delta"', '"terminal_exit"']) expect(JSON.stringify(live)).not.toContain(key);
  await a.close();
  const { failures, kinds } = validateAll(a, asked);
  expect(failures).toEqual([]);
  expect(kinds.has("terminal_update") && kinds.has("terminal_output_chunk")).toBe(true);
});

test("every v2 update kind the v2 mapping makes was validated by the tests above", () => {
  const dir = join(import.meta.dir, "..", "core", "acp", "v2");
  const made = new Set<string>();
  for (const file of new Bun.Glob("*.ts").scanSync({ cwd: dir })) {
    for (const m of readFileSync(join(dir, file), "utf8").matchAll(/v2Update\("([a-z_]+)"/g)) made.add(m[1]!);
  }
  expect(made.size).toBeGreaterThan(4);
  expect([...made].filter((k) => !validatedKinds.has(k)).sort()).toEqual([]);
});

test("B2: a session/resume of a busy session is refused and leaves the running turn's state: tool_call/cancel and session/close still reach the turn", async () => {
  const store = new SessionStore(state);
  const asked = new Map<unknown, string>();
  const a = memoryAgent({ store });
  await req(a, asked, "initialize", INIT_V2);
  const { sessionId } = (await req(a, asked, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ calls: [{ id: "b1", name: "t__sleep", input: { ms: 20_000 } }] }, { text: "carried on" }, { calls: [{ id: "b2", name: "t__sleep", input: { ms: 20_000 } }] });
  const started = Date.now();
  await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "sleep" }] });
  await waitFor(() => updates(a, sessionId).some((u) => u.toolCallId === "b1" && u.status === "in_progress"), 10_000);
  const refused = (await req(a, asked, "session/resume", { sessionId, cwd: ws, replayFrom: { type: "start" } })).error;
  expect(refused).toBeDefined();
  // the running turn's tool call is still known and cancellable
  expect((await req(a, asked, "tool_call/cancel", { sessionId, toolCallId: "b1" })).result).toEqual({});
  expect((await untilIdle(a, sessionId, 1)).stopReason).toBe("end_turn");
  expect(updates(a, sessionId).filter((u) => u.toolCallId === "b1").at(-1).status).toBe("cancelled");
  // and session/close of a busy session (refused resume in between) cancels its turn before answering
  await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "sleep again" }] });
  await waitFor(() => updates(a, sessionId).some((u) => u.toolCallId === "b2" && u.status === "in_progress"), 10_000);
  expect((await req(a, asked, "session/resume", { sessionId, cwd: ws })).error).toBeDefined();
  expect((await req(a, asked, "session/close", { sessionId })).result).toEqual({});
  expect(idles(a, sessionId).at(-1).stopReason).toBe("cancelled");
  expect(Date.now() - started).toBeLessThan(10_000);
  await a.close();
  expect(validateAll(a, asked).failures).toEqual([]);
});
