// The connection's first initialize is answered before the session layer is built; what the client
// declared there still reaches the sessions, whatever comes in the same read, in either version.
import { afterEach, expect, test } from "bun:test";
import { memoryAgent, type MemoryAgent } from "../../tests/memory-agent.ts";
import { AgentAuth } from "./auth.ts";

const agents: MemoryAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
});

/** An agent whose sessions are built when it first needs them; `events` records the build among the answers. */
function lazyAgent(withAuth = false) {
  const events: string[] = [];
  const auth = withAuth ? new AgentAuth({ provider: "anthropic", keyVar: "ANTHROPIC_API_KEY", usable: () => false, forget: () => false }) : undefined;
  const a = memoryAgent({}, {}, { ...(auth ? { auth } : {}), lazy: { built: () => events.push(`built after ${a.out.length} message(s)`) } });
  agents.push(a);
  return { a, events };
}

/** Polls `ok` every 5 ms for up to 5 s (the build writes nothing a wait on the output would hear). */
async function eventually(ok: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !ok(); waited += 5) {
    if (waited >= 5000) throw new Error(`no ${what} within 5 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const line = (id: number, method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id, method, params });

test("the first initialize is answered before the sessions are built, and they are built without another request", async () => {
  const { a, events } = lazyAgent();
  a.send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
  expect((await a.response(0)).result.protocolVersion).toBe(1);
  await eventually(() => events.length > 0, "sessions built");
  expect(events).toEqual(["built after 1 message(s)"]);
  a.send({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: process.cwd(), mcpServers: [] } });
  expect((await a.response(1)).result.sessionId).toBeString();
  expect(events).toHaveLength(1);
});

test("v1: a session/new in the same read as initialize sees what the client declared (terminal auth)", async () => {
  const { a } = lazyAgent(true);
  a.sendLine(`${line(0, "initialize", { protocolVersion: 1, clientCapabilities: { auth: { terminal: true } } })}\n${line(1, "session/new", { cwd: process.cwd(), mcpServers: [] })}`);
  expect((await a.response(0)).result.authMethods.map((m: { id: string }) => m.id)).toEqual(["api-key", "login"]);
  const refused = (await a.response(1)).error;
  expect(refused.code).toBe(-32000);
  expect(refused.data.authMethods).toEqual(["api-key", "login"]);
});

test("v2: a session/new in the same read as initialize sees what the client declared (terminal auth)", async () => {
  const { a } = lazyAgent(true);
  const init = { protocolVersion: 2, info: { name: "t", version: "1" }, capabilities: { auth: { terminal: {} } } };
  a.sendLine(`${line(0, "initialize", init)}\n${line(1, "session/new", { cwd: process.cwd(), mcpServers: [] })}`);
  expect((await a.response(0)).result.authMethods.map((m: { methodId: string }) => m.methodId)).toEqual(["api-key", "login"]);
  expect((await a.response(1)).error.data.authMethods).toEqual(["api-key", "login"]);
});

test("a request before any initialize is served; a later first initialize asking for v2 is answered in v2", async () => {
  const { a } = lazyAgent();
  a.send({ jsonrpc: "2.0", id: 1, method: "session/list", params: {} });
  expect((await a.response(1)).error?.code ?? 0).not.toBe(-32601);
  a.send({ jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: 2, info: { name: "t", version: "1" }, capabilities: {} } });
  const answer = (await a.response(2)).result;
  expect(answer.protocolVersion).toBe(2);
  expect(answer.info.name).toBe("tendril");
  // and the connection is served by the v2 table from then on
  a.send({ jsonrpc: "2.0", id: 3, method: "session/new", params: { cwd: process.cwd(), mcpServers: [] } });
  const opened = (await a.response(3)).result;
  expect(opened.availableCommands).toBeArray();
  expect(opened.modes).toBeUndefined();
});

test("an unknown method before the sessions are built is still -32601, naming it", async () => {
  const { a } = lazyAgent();
  a.sendLine(`${line(0, "initialize", { protocolVersion: 1, clientCapabilities: {} })}\n${line(1, "no/such", {})}`);
  const err = (await a.response(1)).error;
  expect(err.code).toBe(-32601);
  expect(err.message).toContain("no/such");
});

test("the protocol version is fixed by the initialize that succeeds: a v2 initialize refused for its params, then a v1 fallback, is answered in v1", async () => {
  const { a } = lazyAgent();
  a.send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 2, info: "not an object", capabilities: {} } });
  expect((await a.response(0)).error.code).toBe(-32602);
  a.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
  const answer = (await a.response(1)).result;
  expect(answer.protocolVersion).toBe(1);
  expect(answer.agentCapabilities).toBeObject();
  // and v1 serves the connection from then on (a later v2 initialize does not switch it)
  a.send({ jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: 2, info: { name: "t", version: "1" }, capabilities: {} } });
  expect((await a.response(2)).result.protocolVersion).toBe(1);
  a.send({ jsonrpc: "2.0", id: 3, method: "session/new", params: { cwd: process.cwd(), mcpServers: [] } });
  expect((await a.response(3)).result.modes).toBeObject();
});
