// Every message the agent sends, in a session's whole life driven in memory (initialize, new, prompts
// with tool calls and a permission question, modes, config, list, load with its replay, resume, close,
// delete, and errors; then notices and compaction; then elicitation, MCP prompt commands, plans and
// thoughts), validated against the ACP v1 JSON Schema the SDK ships — the schema is the oracle.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { schemaAjv } from "./acp-schema-ajv.ts";
import stable from "@agentclientprotocol/sdk/schema/v1/schema.json" with { type: "json" };
import unstable from "@agentclientprotocol/sdk/schema/v1/schema.unstable.json" with { type: "json" };
import { SessionStore } from "../core/agent/session-store.ts";
import { memoryAgent, type MemoryAgent } from "./memory-agent.ts";
import { scriptedProvider, standInPool, StandInServerEvents } from "./in-memory.ts";
import { loadLimits } from "../core/limits.ts";
import { createMcpPool } from "../core/mcp/pool.ts";
import { FAKE_MCP_PATH, waitFor } from "./fake-mcp-helpers.ts";

const state = mkdtempSync(join(tmpdir(), "tendril-schema-"));
const ws = mkdtempSync(join(tmpdir(), "tendril-schema-ws-"));
afterAll(() => {
  for (const d of [state, ws]) rmSync(d, { recursive: true, force: true });
});

const defs = (stable as { $defs: Record<string, Record<string, unknown>> }).$defs;
const ajv = schemaAjv();
ajv.addSchema(stable as object, "acp");
ajv.addSchema(unstable as object, "acp-unstable");
/** The response definition of each method the agent answers (`x-side: agent`): stable first, then the
 *  unstable schema for what Tendril takes from it (session/fork). */
const responseOf = new Map<string, string>();
for (const [schema, all] of [["acp", defs], ["acp-unstable", (unstable as typeof stable).$defs]] as const) {
  for (const [name, d] of Object.entries(all as Record<string, Record<string, unknown>>)) {
    const method = d["x-method"] as string;
    if (d["x-side"] === "agent" && name.endsWith("Response") && !responseOf.has(method)) responseOf.set(method, `${schema}#/$defs/${name}`);
  }
}
const validator = (def: string) => ajv.getSchema(def.includes("#") ? def : `acp#/$defs/${def}`)!;

const UNSTABLE_KINDS = new Set(["subagent_update", "session_message", "session_message_chunk"]);

/** Which schema definition a message the agent sent must satisfy, and the part of it that is checked. */
function expectation(m: any, asked: Map<unknown, string>): { def: string; value: unknown } {
  // Subagent updates are the unstable schema's (SPEC §3.10): checked against it.
  if (m.method === "session/update" && UNSTABLE_KINDS.has(m.params?.update?.sessionUpdate)) return { def: "acp-unstable#/$defs/SessionNotification", value: m.params };
  if (m.method === "session/update") return { def: "SessionNotification", value: m.params };
  if (m.method === "session/request_permission") return { def: "RequestPermissionRequest", value: m.params };
  if (m.method === "elicitation/create") return { def: "CreateElicitationRequest", value: m.params };
  if (m.method === "elicitation/complete") return { def: "CompleteElicitationNotification", value: m.params };
  if (m.method !== undefined) throw new Error(`the agent sent ${m.method}, which this test does not know`);
  if (m.error !== undefined) return { def: "Error", value: m.error };
  const method = asked.get(m.id);
  const def = method && responseOf.get(method);
  if (!def) throw new Error(`an answer to ${method ?? `unknown id ${m.id}`} has no response definition in the v1 schema`);
  return { def, value: m.result };
}

/** Update kinds validated by any test of this file (the last test checks they are all the agent sends). */
const validatedKinds = new Set<string>();

/** Every message the agent sent, each checked against its definition; and the update kinds seen. */
function validateAll(a: MemoryAgent, asked: Map<unknown, string>) {
  const kinds = new Set<string>();
  const failures: string[] = [];
  for (const m of a.out) {
    const { def, value } = expectation(m, asked);
    if (m.method === "session/update") kinds.add(m.params.update.sessionUpdate);
    const validate = validator(def);
    if (!validate(value)) failures.push(`${def}: ${JSON.stringify(value).slice(0, 200)}\n  ${ajv.errorsText(validate.errors)}`);
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

test("every message the agent sends validates against the ACP v1 schema", async () => {
  const store = new SessionStore(state);
  const asked = new Map<unknown, string>();
  const a = memoryAgent({ store, mode: "ask" });
  await req(a, asked, "initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: { name: "schema-test", version: "1" } });
  const { sessionId } = (await req(a, asked, "session/new", { cwd: ws, mcpServers: [] })).result;
  // the commands are announced right after the answer
  await a.until(() => a.out.some((m) => m.params?.update?.sessionUpdate === "available_commands_update"), "available_commands_update");
  // a turn with text, a tool call the user is asked about (and allows), and a failing tool
  a.provider.push(
    { text: "Echoing.", calls: [{ id: "c1", name: "t__echo", input: { text: "hi" } }] },
    { text: "Failing.", calls: [{ id: "c2", name: "t__fail", input: {} }] },
    { text: "Done." },
  );
  const turn = req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "echo hi" }] });
  const asks = () => a.out.filter((m) => m.method === "session/request_permission");
  for (let answered = 0; answered < 2; answered++) {
    await a.until(() => asks().length > answered, `permission request ${answered + 1}`);
    a.send({ jsonrpc: "2.0", id: asks()[answered]!.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
  }
  expect((await turn).result.stopReason).toBe("end_turn");
  await req(a, asked, "session/set_mode", { sessionId, modeId: "read-only" });
  await req(a, asked, "session/set_mode", { sessionId, modeId: "no-such-mode" });
  await req(a, asked, "session/set_config_option", { sessionId, configId: "mode", value: "ask" });
  await req(a, asked, "session/set_config_option", { sessionId, configId: "model", value: "m" });
  await req(a, asked, "session/list", {});
  await req(a, asked, "session/prompt", { sessionId: "no-such-session", prompt: [] });
  await req(a, asked, "session/close", { sessionId });
  await req(a, asked, "session/load", { sessionId, cwd: ws, mcpServers: [] });
  await req(a, asked, "session/resume", { sessionId, cwd: ws, mcpServers: [] });
  await req(a, asked, "session/fork", { sessionId, cwd: ws, mcpServers: [] });
  await req(a, asked, "session/delete", { sessionId });
  await a.close();

  const { kinds, failures } = validateAll(a, asked);
  expect(failures).toEqual([]);
  // what this life of a session showed, so a kind that stops being sent is noticed
  expect([...kinds].sort()).toEqual([
    "agent_message_chunk",
    "available_commands_update",
    "config_option_update",
    "current_mode_update",
    "session_info_update",
    "tool_call",
    "tool_call_update",
    "usage_update",
    "user_message_chunk",
  ]);
  expect([...new Set([...asked.values()])].every((m) => responseOf.has(m))).toBe(true);
});

test("with session.notices and session.compaction advertised, notices and compaction updates validate too", async () => {
  const store = new SessionStore(state);
  const asked = new Map<unknown, string>();
  const events = new StandInServerEvents();
  const over = { store, contextWindow: 10_000, pool: standInPool({ events }) };
  const a = memoryAgent(over);
  const caps = { session: { notices: {}, compaction: {} } };
  await req(a, asked, "initialize", { protocolVersion: 1, clientCapabilities: caps, clientInfo: { name: "schema-test", version: "1" } });
  const { sessionId } = (await req(a, asked, "session/new", { cwd: ws, mcpServers: [] })).result;
  // an automatic handoff (reported usage past the ratio), then /compact, whose summary fails
  a.provider.push(
    { text: "read a lot", calls: [{ id: "r1", name: "t__echo", input: { text: "big" } }], usage: { input: 9_500, output: 100 } },
    { text: "THE SUMMARY" },
    { text: "continuing" },
    { error: { kind: "server", message: "overloaded", status: 529 } },
  );
  await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "the task" }] });
  await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "/compact" }] });
  for (const kind of ["died", "restarted", "gone"] as const) events.fire({ server: "t", kind, detail: `it ${kind}` });
  await req(a, asked, "session/close", { sessionId });
  await req(a, asked, "session/load", { sessionId, cwd: ws, mcpServers: [] });
  await a.close();

  const { kinds, failures } = validateAll(a, asked);
  expect(failures).toEqual([]);
  expect(kinds.has("notice")).toBe(true);
  expect(kinds.has("compaction_update")).toBe(true);
  const statuses = a.out.filter((m) => m.params?.update?.sessionUpdate === "compaction_update").map((m) => m.params.update.status);
  // live: the handoff and the failed /compact; replayed by load: the same four
  expect(statuses).toEqual(["in_progress", "completed", "in_progress", "failed", "in_progress", "completed", "in_progress", "failed"]);
});

test("plan mode (plan entries, the switch question), thought_level, additionalDirectories and a cancelled request validate too", async () => {
  const store = new SessionStore(state);
  const asked = new Map<unknown, string>();
  const provider = scriptedProvider();
  // session starts take a moment, so one can be cancelled while it runs
  const a = memoryAgent({ store, mode: "plan", pool: standInPool({ openDelayMs: 50 }), provider: Object.assign(provider, { thoughtLevels: true }) });
  await req(a, asked, "initialize", { protocolVersion: 1, clientCapabilities: {} });
  const extra = mkdtempSync(join(tmpdir(), "tendril-schema-extra-"));
  const { sessionId } = (await req(a, asked, "session/new", { cwd: ws, additionalDirectories: [extra], mcpServers: [] })).result;
  await req(a, asked, "session/set_config_option", { sessionId, configId: "thought_level", value: "medium" });
  provider.push(
    { calls: [{ id: "e1", name: "t__echo", input: { text: "denied" } }] },
    { calls: [{ id: "p1", name: "plan__ready", input: { steps: ["one", "two"], summary: "the plan" } }] },
    { text: "carrying it out" },
  );
  const turn = req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "plan" }] });
  const ask = () => a.out.find((m) => m.method === "session/request_permission");
  await a.until(() => ask() !== undefined, "permission request");
  a.send({ jsonrpc: "2.0", id: ask()!.id, result: { outcome: { outcome: "selected", optionId: "auto-edit" } } });
  expect((await turn).result.stopReason).toBe("end_turn");
  // a request cancelled while it runs: -32800
  const id = nextId++;
  asked.set(id, "session/new");
  a.send({ jsonrpc: "2.0", id, method: "session/new", params: { cwd: ws, mcpServers: [] } });
  a.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } });
  expect((await a.response(id)).error.code).toBe(-32800);
  await req(a, asked, "session/fork", { sessionId, cwd: ws, additionalDirectories: [extra], mcpServers: [] });
  await a.close();
  rmSync(extra, { recursive: true, force: true });

  const { kinds, failures } = validateAll(a, asked);
  expect(failures).toEqual([]);
  for (const kind of ["plan", "current_mode_update", "config_option_update", "tool_call_update"]) expect(kinds.has(kind)).toBe(true);
  expect(a.out.some((m) => m.method === "session/request_permission" && m.params.toolCall.kind === "switch_mode")).toBe(true);
  const options = a.out.filter((m) => m.params?.update?.sessionUpdate === "config_option_update").at(-1)!.params.update.configOptions;
  expect(options.map((o: { id: string }) => o.id)).toEqual(["mode", "model", "thought_level"]);
});

test("with elicitation advertised: elicitation requests, MCP prompt commands, plans and thoughts validate too", async () => {
  const pool = createMcpPool({ limits: loadLimits({}), env: process.env });
  const asked = new Map<unknown, string>();
  const a = memoryAgent({ pool, mode: "yolo" });
  await req(a, asked, "initialize", { protocolVersion: 1, clientCapabilities: { elicitation: { form: {}, url: {} } }, clientInfo: { name: "schema-test", version: "1" } });
  const env = [{ name: "FAKE_MCP_PROMPTS", value: "1" }, { name: "FAKE_MCP_EXTRA_TOOLS", value: "todo" }];
  const { sessionId } = (await req(a, asked, "session/new", { cwd: ws, mcpServers: [{ name: "fk", command: process.execPath, args: [FAKE_MCP_PATH], env }] })).result;
  // a thought first, then a todo list (a plan), a form and a URL question
  const inner = a.provider.stream.bind(a.provider);
  let thought = false;
  a.provider.stream = async function* (r) {
    if (!thought) yield { type: "thinking" as const, text: "Let me think." };
    thought = true;
    yield* inner(r);
  };
  a.provider.push(
    { calls: [{ id: "t1", name: "fk__todo", input: { items: [{ text: "look" }, { text: "fix", done: true }] } }] },
    { calls: [{ id: "f1", name: "fk__confirm", input: { field: "name" } }] },
    { calls: [{ id: "u1", name: "fk__confirm", input: { url: "https://example.test/login" } }] },
    { text: "Done." },
    { text: "Reviewed." },
  );
  const turn = req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "plan and ask" }] });
  const answered = new Set<unknown>();
  for (const result of [{ action: "accept", content: { name: "Ada" } }, { action: "accept" }]) {
    let q: Record<string, any> | undefined;
    await waitFor(() => (q = a.out.find((m) => m.method === "elicitation/create" && !answered.has(m.id))) !== undefined, 10_000);
    answered.add(q!.id);
    a.send({ jsonrpc: "2.0", id: q!.id, result });
  }
  expect((await turn).result.stopReason).toBe("end_turn");
  await waitFor(() => a.out.some((m) => m.method === "elicitation/complete"), 5000);
  await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "/fk:review a.ts" }] });
  await req(a, asked, "session/prompt", { sessionId, prompt: [{ type: "text", text: "/fk:review" }] });
  await a.close();
  await pool.closeAll();

  const { kinds, failures } = validateAll(a, asked);
  expect(failures).toEqual([]);
  for (const kind of ["agent_thought_chunk", "plan", "available_commands_update"]) expect(kinds.has(kind)).toBe(true);
  expect(a.out.filter((m) => m.method === "elicitation/create").map((m) => m.params.mode)).toEqual(["form", "url"]);
  expect(a.out.some((m) => m.method === "elicitation/complete")).toBe(true);
  const commands = a.out.find((m) => m.params?.update?.sessionUpdate === "available_commands_update")!.params.update.availableCommands;
  expect(commands.some((c: { name: string }) => c.name === "fk:review")).toBe(true);
});

test("with the subagents capability: a task's child session, its messages and its announcement validate too (unstable schema)", async () => {
  const a = memoryAgent({ mode: "ask" });
  const asked = new Map<unknown, string>();
  await req(a, asked, "initialize", { protocolVersion: 1, clientCapabilities: { subagents: {} } });
  const sessionId = (await req(a, asked, "session/new", { cwd: ws, mcpServers: [] })).result.sessionId;
  a.provider.push(
    { calls: [{ id: "t1", name: "agent__task", input: { description: "look", prompt: "look for X" } }] },
    { calls: [{ id: "c1", name: "t__echo", input: { text: "hi" } }] },
    { text: "found X" },
    { text: "done" },
  );
  const id = nextId++;
  asked.set(id, "session/prompt");
  a.send({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "go" }] } });
  await a.until(() => a.out.some((m) => m.method === "session/request_permission"), "the child's permission question");
  const ask = a.out.find((m) => m.method === "session/request_permission")!;
  a.send({ jsonrpc: "2.0", id: ask.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
  expect((await a.response(id)).result.stopReason).toBe("end_turn");
  const { kinds, failures } = validateAll(a, asked);
  expect(failures).toEqual([]);
  for (const k of UNSTABLE_KINDS) expect(kinds.has(k)).toBe(true);
  await a.close();
});

test("every update kind the agent can send was validated by the tests above", () => {
  // What the agent's code can send: each `sessionUpdate: "KIND"` literal under core/ (tests excluded).
  const root = join(import.meta.dir, "..");
  const sent = new Set<string>();
  for (const file of new Bun.Glob("core/**/*.ts").scanSync({ cwd: root })) {
    if (file.endsWith(".test.ts")) continue;
    for (const m of readFileSync(join(root, file), "utf8").matchAll(/sessionUpdate: "([a-z_]+)"/g)) sent.add(m[1]!);
  }
  expect(sent.size).toBeGreaterThan(10);
  expect([...sent].filter((k) => !validatedKinds.has(k)).sort()).toEqual([]);
});
