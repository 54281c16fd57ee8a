// `tendril conductor` routes each chain in the ACP version its components agreed on, through the
// binary: the SDK's experimental v2 client app → conductor → `tendril agent` with 0 and 1 raw proxy is
// v2 end to end (checked on every hop in the trace), Ctrl-C cancels a v2 turn that was acknowledged,
// acp MCP servers are bridged in v2's shapes; a chain whose proxy speaks only v1 answers v1 to a v2
// client; a chain whose components answer different versions is refused at initialize naming them.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { agentEnv } from "./agent-env.ts";
import { BIN, ROOT } from "./binary.ts";
import { startFakeLlm, type FakeLlm } from "./fake-llm.ts";
import { waitFor } from "./fake-mcp-helpers.ts";
import { type SdkV2Client, sdkV2Client, terminalText, untilStop } from "./sdk-v2-client.ts";
import { spawnRawMode } from "./raw-harness.ts";
import { schemaAjv } from "./acp-schema-ajv.ts";
import v2 from "@agentclientprotocol/sdk/schema/v2/schema.json" with { type: "json" };
import v2unstable from "@agentclientprotocol/sdk/schema/v2/schema.unstable.json" with { type: "json" };

let fake: FakeLlm;
let work: string;
let counter = 0;
const children: ChildProcessWithoutNullStreams[] = [];

const RAW_PROXY = `${process.execPath} ${join(ROOT, "tests", "fixtures", "raw-proxy.ts")}`;
const TENDRIL_AGENT = `${BIN} agent`;

beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-conductor-v2-"));
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

interface V2Chain extends SdkV2Client {
  child: ChildProcessWithoutNullStreams;
  trace: string;
  ws: string;
}

/** The SDK's v2 client app on `tendril conductor agent --trace FILE COMPONENTS…`. */
function v2Chain(components: string[], env: Record<string, string> = {}): V2Chain {
  const n = ++counter;
  const trace = join(work, `trace-${n}.jsonl`);
  const ws = join(work, `ws-${n}`);
  mkdirSync(ws, { recursive: true });
  const child = spawn(BIN, ["conductor", "agent", "--trace", trace, ...components], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, ...agentEnv(fake, join(work, `h-${n}`)), ...env },
  });
  children.push(child);
  return { ...sdkV2Client(child, "conductor-v2-test", 10_000), child, trace, ws };
}

const initV2 = (c: V2Chain) => c.initialize();

/** The trace's records: `{hop, dir, message}`. */
function traceOf(file: string): { hop: string | number; dir: string; message: any }[] {
  return readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((r) => r.message !== undefined);
}

const ajv = schemaAjv();
ajv.addSchema(v2 as object, "acp2");
ajv.addSchema(v2unstable as object, "acp2u");
const defs = (v2 as { $defs: Record<string, Record<string, unknown>> }).$defs;
const responseOf = new Map<string, string>();
for (const [name, d] of Object.entries(defs)) if (d["x-side"] === "agent" && name.endsWith("Response")) responseOf.set(d["x-method"] as string, name);
const TO_CLIENT: Record<string, string> = { "session/update": "UpdateSessionNotification", "session/request_permission": "RequestPermissionRequest" };

/** Every message the conductor wrote to the client, checked against the v2 schema (stable and unstable);
 *  returns the failures. */
function v2Failures(records: { hop: string | number; dir: string; message: any }[]): string[] {
  const asked = new Map<unknown, string>();
  for (const r of records) if (r.hop === "client" && r.dir === "in" && r.message.method && r.message.id !== undefined) asked.set(r.message.id, r.message.method);
  const failures: string[] = [];
  for (const { hop, dir, message: m } of records) {
    if (hop !== "client" || dir !== "out") continue;
    const def = m.method !== undefined ? TO_CLIENT[m.method] : m.error !== undefined ? "Error" : responseOf.get(asked.get(m.id) ?? "");
    const value = m.method !== undefined ? m.params : m.error ?? m.result;
    if (!def) {
      failures.push(`no v2 definition for ${JSON.stringify(m).slice(0, 200)}`);
      continue;
    }
    for (const schema of ["acp2", "acp2u"]) {
      const validate = ajv.getSchema(`${schema}#/$defs/${def}`)!;
      if (!validate(value)) failures.push(`${schema} ${def}: ${JSON.stringify(value).slice(0, 300)}\n  ${ajv.errorsText(validate.errors)}`);
    }
  }
  return failures;
}

const textOf = (updates: acp.SessionUpdate[]) =>
  updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => (u as { content: { text?: string } }).content.text ?? "").join("");

for (const proxies of [0, 1]) {
  test(`v2 client → conductor → tendril agent with ${proxies} prox${proxies === 1 ? "y" : "ies"}: v2 end to end, a turn with a permission-asking tool call`, async () => {
    const components = proxies === 1 ? [`REWRITE=upper ${RAW_PROXY}`, TENDRIL_AGENT] : [TENDRIL_AGENT];
    const c = v2Chain(components, { TENDRIL_MODE: "ask" });
    const init = await initV2(c);
    expect(init.protocolVersion).toBe(2);
    expect(init.info.name).toBe("tendril");
    const session = await c.conn.agent.buildSession(c.ws).start();
    fake.script([{ toolCalls: [{ id: "t1", name: "dev__shell", input: { command: "echo through-the-chain" } }] }, { text: "Chained over v2." }]);
    const ack = await session.prompt("run it");
    expect(typeof ack.messageId).toBe("string");
    const { updates, stopReason } = await untilStop(session);
    expect(stopReason).toBe("end_turn");
    const t1 = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "t1") as { status?: string; content?: unknown }[];
    expect(t1.at(-1)!.status).toBe("completed");
    // the output is shown in the call's terminal (v2's terminal_output_chunk, base64: no proxy rewrites it)
    expect(terminalText(updates, "t1")).toBe("through-the-chain\n");
    expect(textOf(updates)).toBe(proxies === 1 ? "CHAINED OVER V2." : "Chained over v2.");
    session.dispose();
    await c.close();
    // every component was offered v2 and answered it; the agent got v2's methods
    const records = traceOf(c.trace);
    for (let hop = 0; hop <= proxies; hop++) {
      const init = records.find((r) => r.hop === hop && r.dir === "out" && /initialize$/.test(r.message.method ?? ""));
      expect(init?.message.params.protocolVersion).toBe(2);
      const answer = records.find((r) => r.hop === hop && r.dir === "in" && r.message.id === init!.message.id && r.message.result);
      expect(answer?.message.result.protocolVersion).toBe(2);
    }
    const toAgent = records.filter((r) => r.hop === proxies && r.dir === "out").map((r) => r.message.method);
    expect(toAgent).toContain("session/prompt");
    expect(records.some((r) => r.hop === "client" && r.dir === "out" && r.message.params?.update?.sessionUpdate === "state_update")).toBe(true);
    expect(v2Failures(records)).toEqual([]);
  });
}

test("Ctrl-C at the conductor cancels a v2 turn that was already acknowledged: session/cancel reaches the agent, the turn ends cancelled, the chain serves on", async () => {
  const c = v2Chain([RAW_PROXY, TENDRIL_AGENT], { TENDRIL_MODE: "yolo" });
  await initV2(c);
  const session = await c.conn.agent.buildSession(c.ws).start();
  fake.script([{ toolCalls: [{ id: "long", name: "dev__shell", input: { command: "sleep 29.75" } }] }]);
  await session.prompt("wait");
  await waitFor(() => c.updates.some((n) => n.update.sessionUpdate === "tool_call_update" && n.update.toolCallId === "long" && n.update.status === "in_progress"), 20_000);
  const started = Date.now();
  c.child.kill("SIGINT");
  const { stopReason } = await untilStop(session);
  expect(stopReason).toBe("cancelled");
  expect(Date.now() - started).toBeLessThan(20_000);
  expect(c.child.exitCode).toBeNull();
  fake.script([{ text: "Still here." }]);
  await session.prompt("again");
  const next = await untilStop(session);
  expect(next.stopReason).toBe("end_turn");
  expect(textOf(next.updates)).toBe("Still here.");
  session.dispose();
  await c.close();
  const cancels = traceOf(c.trace).filter((r) => r.hop === 0 && r.dir === "out" && r.message.method === "session/cancel");
  expect(cancels.length).toBe(1);
});

/** A v2 session on `c` whose one turn calls `tool` with `input` and ends end_turn; the call completed.
 *  Returns the call's last content; the chain is closed. */
async function oneToolCall(c: V2Chain, tool: string, input: Record<string, unknown>): Promise<unknown> {
  const init = await initV2(c);
  expect(init.protocolVersion).toBe(2);
  const session = await c.conn.agent.buildSession(c.ws).start();
  fake.script([{ toolCalls: [{ id: "call-1", name: tool, input }] }, { text: "Done." }]);
  await session.prompt(`call ${tool}`);
  const { updates, stopReason } = await untilStop(session);
  expect(stopReason).toBe("end_turn");
  const call = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call-1") as { status?: string; content?: unknown }[];
  expect(call.at(-1)!.status).toBe("completed");
  session.dispose();
  await c.close();
  return call.at(-1)!.content;
}

test("a proxy's acp MCP server reaches a v2 agent through the bridge, declared in v2's shapes, and its tool is called", async () => {
  const c = v2Chain([`DIALECT=sacp MCP=1 ${RAW_PROXY}`, TENDRIL_AGENT], { TENDRIL_MODE: "yolo" });
  expect(JSON.stringify(await oneToolCall(c, "sacp-notes__whisper", { text: "QUIET PLEASE" }))).toContain("quiet please");
  const newSession = traceOf(c.trace).find((r) => r.hop === 1 && r.dir === "out" && r.message.method === "session/new");
  const bridged = newSession!.message.params.mcpServers.find((s: { name: string }) => s.name === "sacp-notes");
  expect(bridged.type).toBe("stdio");
  expect(bridged.args).toContain("mcp-bridge");
  expect(v2Failures(traceOf(c.trace))).toEqual([]);
});

for (const dialect of ["rust", "stateless"] as const) {
  test(`a proxy's acp MCP server (${dialect} MCP-over-ACP) reaches a v2 tendril agent natively, not bridged, and its tool is called`, async () => {
    const proxy = `${dialect === "stateless" ? "MCP_DIALECT=stateless " : ""}${process.execPath} ${join(ROOT, "tests", "fixtures", "rust-dialect-proxy.ts")}`;
    const c = v2Chain([proxy, TENDRIL_AGENT], { TENDRIL_MODE: "yolo" });
    expect(JSON.stringify(await oneToolCall(c, "rust-notes__echo", { text: "over acp" }))).toContain("echo: over acp");
    const records = traceOf(c.trace);
    // the agent answered initialize offering acp MCP servers, so the conductor passed the declaration on as it was
    const answered = records.find((r) => r.hop === 1 && r.dir === "in" && r.message.result?.protocolVersion === 2);
    expect(answered!.message.result.capabilities.session.mcp.acp).toEqual({});
    const newSession = records.find((r) => r.hop === 1 && r.dir === "out" && r.message.method === "session/new");
    expect(newSession!.message.params.mcpServers).toContainEqual({ type: "acp", name: "rust-notes", serverId: "rust-notes-1" });
    expect(records.some((r) => r.hop === 1 && r.dir === "in" && (r.message.method === "mcp/connect" || r.message.method === "mcp/message"))).toBe(true);
    expect(v2Failures(records)).toEqual([]);
  });
}

test("a chain whose proxy speaks only v1 answers v1 to a v2 client, and routes v1", async () => {
  const raw = spawnRawMode("conductor", {}, ["agent", `OFFER_VERSION=1 ${RAW_PROXY}`, TENDRIL_AGENT]);
  children.push(raw.child);
  raw.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 2, info: { name: "raw", version: "1" }, capabilities: {} } });
  const init = await raw.response(1, 20_000);
  expect(init.error).toBeUndefined();
  expect(init.result.protocolVersion).toBe(1);
  expect(init.result.agentCapabilities).toBeDefined();
  raw.child.stdin.end();
  expect(await raw.exited(20_000)).toBe(0);
});

test("B6: a chain version mismatch is -32022 (unsupported protocol version), at initialize, naming the component and both versions", async () => {
  const raw = spawnRawMode("conductor", {}, ["agent", `ANSWER_VERSION=1 ${RAW_PROXY}`, TENDRIL_AGENT]);
  children.push(raw.child);
  raw.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 2, info: { name: "raw", version: "1" }, capabilities: {} } });
  const init = await raw.response(1, 20_000);
  expect(init.result).toBeUndefined();
  expect(init.error.code).toBe(-32022);
  expect(init.error.message).toContain("component 1 (raw-proxy.ts) answered protocolVersion 1");
  expect(init.error.message).toContain("its successor component 2 (tendril agent) answered 2");
  expect(init.error.data).toMatchObject({ component: 1, protocolVersion: 1, successor: 2, successorProtocolVersion: 2 });
  // the chain refuses what follows with the same error; it never reaches a component
  raw.writeLine({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: work, mcpServers: [] } });
  const next = await raw.response(2, 20_000);
  expect(next.error).toEqual(init.error);
  raw.child.stdin.end();
  expect(await raw.exited(20_000)).toBe(0);
});
