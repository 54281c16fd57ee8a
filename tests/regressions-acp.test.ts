// One test per bug a review found in the agent's ACP surface, the chain and the wire, named after the
// bug, so it cannot come back unnoticed. Everything here runs in memory: no process, and no socket
// but the bridge's own private unix socket.
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Link, type LinkEnd } from "../core/wire/link.ts";
import { Chain } from "../core/conductor/router.ts";
import { memoryPeer } from "./memory-hop.ts";
import { BRIDGE_HELLO, McpBridge } from "../core/conductor/mcp-bridge.ts";
import { createConnection } from "node:net";
import { SessionStore } from "../core/agent/session-store.ts";
import type { McpServerSpec, McpSessionTools } from "../core/mcp/types.ts";
import { memoryAgent } from "./memory-agent.ts";
import { standInPool } from "./in-memory.ts";

/** Input that never yields: the link stays open until it stalls. */
const silent: AsyncIterable<Uint8Array> = {
  async *[Symbol.asyncIterator]() {
    await new Promise(() => {});
  },
};

/** A sink whose peer never reads: every write stays queued. */
const stuck = { write: () => new Promise<void>(() => {}) };

/** Whether the link ended once everything queued in this turn has been handed to the writer. */
async function stalledAfterFlush(link: Link): Promise<LinkEnd | "running"> {
  return Promise.race([link.ended, new Promise<"running">((r) => setImmediate(() => r("running")))]);
}

test("regression: MAX_HOP_QUEUE_BYTES counted UTF-16 units, not bytes (multibyte text trips the bound at its UTF-8 size)", async () => {
  const message = { jsonrpc: "2.0", method: "session/update", params: { text: "é漢🙂".repeat(200) } };
  const line = JSON.stringify(message) + "\n";
  const bytes = Buffer.byteLength(line);
  expect(line.length).toBeLessThan(bytes / 2); // the old count saw less than half the bytes

  const atBound = new Link({ input: silent, sink: stuck, maxLineBytes: 1 << 20, maxQueuedBytes: bytes, onMessage: () => {} });
  atBound.send(message);
  expect(await stalledAfterFlush(atBound)).toBe("running");

  const overBound = new Link({ input: silent, sink: stuck, maxLineBytes: 1 << 20, maxQueuedBytes: bytes - 1, onMessage: () => {} });
  overBound.send(message);
  expect(await stalledAfterFlush(overBound)).toEqual({ reason: "stalled", bytes });
});

/** A stand-in pool that counts starts and closes of session tools, each start taking `delayMs`. */
function countingPool(delayMs: number) {
  const counts = { opened: 0, closed: 0 };
  const inner = standInPool({ openDelayMs: delayMs });
  return {
    counts,
    pool: {
      async openTools(specs: McpServerSpec[], opts: { cwd: string }): Promise<McpSessionTools> {
        counts.opened++;
        const tools = await inner.openTools(specs);
        return { ...tools, close: async () => void counts.closed++ };
      },
    },
  };
}

/** A saved session with one exchange in it, made by an agent that has since exited. */
async function savedSession(state: string, ws: string): Promise<string> {
  const a = memoryAgent({ store: new SessionStore(state) });
  a.send({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: ws, mcpServers: [] } });
  const { sessionId } = (await a.response(1)).result;
  a.provider.push({ text: "first answer" });
  a.send({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "first question" }] } });
  await a.response(2);
  await a.close();
  return sessionId;
}

test("regression: two concurrent session/load of one id leaked the first session's servers and opened its file twice", async () => {
  const state = mkdtempSync(join(tmpdir(), "tendril-reg-acp-"));
  const ws = mkdtempSync(join(tmpdir(), "tendril-reg-acp-ws-"));
  try {
    const sessionId = await savedSession(state, ws);
    const { pool, counts } = countingPool(30);
    const b = memoryAgent({ store: new SessionStore(state), pool });
    const load = (id: number) => b.send({ jsonrpc: "2.0", id, method: "session/load", params: { sessionId, cwd: ws, mcpServers: [] } });
    load(10);
    load(11);
    const [first, second] = [await b.response(10), await b.response(11)];
    expect(first.result.modes).toBeDefined();
    expect(second.result).toEqual(first.result);
    expect(counts).toEqual({ opened: 1, closed: 0 });
    // The history was replayed once, before the first answer.
    const replayed = b.out.filter((m) => m.method === "session/update" && m.params.update.sessionUpdate === "user_message_chunk");
    expect(replayed.length).toBe(1);
    // One session, recorded once: a prompt works, and a close stops the one set of servers.
    b.provider.push({ text: "second answer" });
    b.send({ jsonrpc: "2.0", id: 12, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "second question" }] } });
    expect((await b.response(12)).result.stopReason).toBe("end_turn");
    b.send({ jsonrpc: "2.0", id: 13, method: "session/close", params: { sessionId } });
    expect((await b.response(13)).result).toEqual({});
    expect(counts).toEqual({ opened: 1, closed: 1 });
    await b.close();
    const lines = readFileSync(new SessionStore(state).path(sessionId), "utf8").trim().split("\n");
    expect(lines.map((l) => JSON.parse(l).type).filter((t) => t === "turn").length).toBe(2);
  } finally {
    rmSync(state, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
  }
});

test("regression: a concurrent session/resume of an id being loaded with other servers waits, then reopens it; nothing leaks", async () => {
  const state = mkdtempSync(join(tmpdir(), "tendril-reg-acp-"));
  const ws = mkdtempSync(join(tmpdir(), "tendril-reg-acp-ws-"));
  try {
    const sessionId = await savedSession(state, ws);
    const { pool, counts } = countingPool(30);
    const b = memoryAgent({ store: new SessionStore(state), pool });
    b.send({ jsonrpc: "2.0", id: 10, method: "session/load", params: { sessionId, cwd: ws, mcpServers: [] } });
    b.send({ jsonrpc: "2.0", id: 11, method: "session/resume", params: { sessionId, cwd: ws, mcpServers: [] } });
    expect((await b.response(10)).result.modes).toBeDefined();
    expect((await b.response(11)).result.modes).toBeDefined();
    // The resume came second and reopened the session: the load's servers were stopped, not leaked.
    expect(counts).toEqual({ opened: 2, closed: 1 });
    await b.close();
    expect(counts).toEqual({ opened: 2, closed: 2 });
  } finally {
    rmSync(state, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
  }
});

test("regression: initialize took clientCapabilities: \"x\"; every wrong-typed field the agent reads is -32602 naming it", async () => {
  const a = memoryAgent();
  const ws = tmpdir();
  a.send({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: ws, mcpServers: [] } });
  const sessionId: string = (await a.response(1)).result.sessionId;
  const init = (over: Record<string, unknown>) => ({ protocolVersion: 1, ...over });
  const caps = (over: Record<string, unknown>) => init({ clientCapabilities: over });
  const session = (over: Record<string, unknown>) => ({ cwd: ws, mcpServers: [], ...over });
  const loaded = (over: Record<string, unknown>) => ({ sessionId, cwd: ws, mcpServers: [], ...over });
  // [method, params, the field the error must name]
  const table: [string, unknown, string][] = [
    ["initialize", [1], "params"],
    ["initialize", {}, "protocolVersion"],
    ["initialize", init({ protocolVersion: "1" }), "protocolVersion"],
    ["initialize", init({ protocolVersion: 1.5 }), "protocolVersion"],
    ["initialize", init({ protocolVersion: 70000 }), "protocolVersion"],
    ["initialize", init({ clientCapabilities: "x" }), "clientCapabilities"],
    ["initialize", init({ clientCapabilities: null }), "clientCapabilities"],
    ["initialize", caps({ fs: true }), "clientCapabilities.fs"],
    ["initialize", caps({ fs: { readTextFile: "yes" } }), "clientCapabilities.fs.readTextFile"],
    ["initialize", caps({ fs: { writeTextFile: 1 } }), "clientCapabilities.fs.writeTextFile"],
    ["initialize", caps({ terminal: "true" }), "clientCapabilities.terminal"],
    ["initialize", caps({ auth: { terminal: {} } }), "clientCapabilities.auth.terminal"],
    ["initialize", caps({ session: [] }), "clientCapabilities.session"],
    ["initialize", init({ clientInfo: "zed" }), "clientInfo"],
    ["initialize", init({ clientInfo: { name: "zed" } }), "clientInfo.version"],
    ["initialize", init({ clientInfo: { name: 5, version: "1" } }), "clientInfo.name"],
    ["session/new", session({ cwd: 5 }), "cwd"],
    ["session/new", session({ mcpServers: {} }), "mcpServers"],
    ["session/new", session({ mcpServers: [{ name: "x" }] }), "mcpServers[0]"],
    ["session/new", session({ _meta: "x" }), "_meta"],
    ["session/new", session({ _meta: { systemPrompt: 5 } }), "_meta.systemPrompt"],
    ["session/new", session({ _meta: { systemPrompt: { append: 5 } } }), "_meta.systemPrompt.append"],
    ["session/load", loaded({ sessionId: 5 }), "sessionId"],
    ["session/load", loaded({ cwd: ["/"] }), "cwd"],
    ["session/load", loaded({ mcpServers: "none" }), "mcpServers"],
    ["session/resume", loaded({ sessionId: "" }), "sessionId"],
    ["session/resume", loaded({ _meta: 1 }), "_meta"],
    ["session/prompt", { prompt: [] }, "sessionId"],
    ["session/prompt", { sessionId, prompt: "hello" }, "prompt"],
    ["session/set_mode", { sessionId, modeId: 1 }, "modeId"],
    ["session/set_mode", { sessionId: null, modeId: "yolo" }, "sessionId"],
    ["session/set_model", { sessionId, modelId: false }, "modelId"],
    ["session/set_config_option", { sessionId, configId: 3, value: "m" }, "configId"],
    ["session/set_config_option", { sessionId, configId: "model", value: { v: "m" } }, "value"],
    ["session/set_config_option", { sessionId, configId: "model" }, "value"],
    ["session/close", { sessionId: 7 }, "sessionId"],
    ["session/list", { cwd: 7 }, "cwd"],
    ["session/list", { cursor: 100 }, "cursor"],
  ];
  for (const [i, [method, params, field]] of table.entries()) {
    a.send({ jsonrpc: "2.0", id: 100 + i, method, params });
    const r = await a.response(100 + i);
    expect([method, field, r.error?.code]).toEqual([method, field, -32602]);
    expect([method, field, r.error.data?.param]).toEqual([method, field, field]);
    expect(r.error.message).toStartWith(`${method}${field === "params" ? " needs params" : `: ${field} `}`);
  }
  // What the clients people use send still works, and the session is untouched.
  a.send({ jsonrpc: "2.0", id: 2, method: "initialize", params: init({
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true, auth: { terminal: false }, session: null, _meta: { x: 1 } },
    clientInfo: { name: "zed", version: "0.200.0", title: null },
  }) });
  expect((await a.response(2)).result.protocolVersion).toBe(1);
  a.provider.push({ text: "fine" });
  a.send({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "still here?" }] } });
  expect((await a.response(3)).result.stopReason).toBe("end_turn");
  await a.close();
});

test("regression: a session/cancel naming no session by a string is ignored with a warning, never a crash", async () => {
  const a = memoryAgent();
  a.provider.push({ hang: true });
  a.send({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: tmpdir(), mcpServers: [] } });
  const sessionId: string = (await a.response(1)).result.sessionId;
  a.send({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "wait" }] } });
  a.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: 42 } });
  a.send({ jsonrpc: "2.0", method: "session/cancel", params: "x" });
  a.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
  expect((await a.response(2)).result.stopReason).toBe("cancelled");
  await a.close();
});

test("regression: AgentSide.request never settled when the chain ended; now it answers -32603 naming the end", async () => {
  const client = memoryPeer();
  const agent = memoryPeer();
  const chain = new Chain({ mode: "agent", client: client.io, components: [agent.io], maxLineBytes: 1 << 20 });
  const side = chain.agentSide();
  const waiting = side.request("mcp/message", { serverId: "s", method: "tools/list" });
  expect((await client.next()).method).toBe("mcp/message"); // it reached the client, which never answers
  client.close();
  expect(await waiting).toEqual({
    jsonrpc: "2.0",
    id: 0,
    error: { code: -32603, message: "the chain ended before mcp/message was answered: the client closed its output" },
  });
  // One sent after the end is answered at once, the same way.
  expect((await side.request("_mcp/connect", {})).error).toMatchObject({ code: -32603, message: expect.stringContaining("_mcp/connect") });
});

/** A chain in front of an agent without MCP-over-ACP, with the conductor's bridge at its edge. */
async function bridgedChain() {
  const client = memoryPeer();
  const agent = memoryPeer();
  const bridge = await McpBridge.start({ self: { command: "tendril", args: [] }, maxLineBytes: 1 << 20, connectTimeoutMs: 10_000 });
  const chain = new Chain({ mode: "agent", client: client.io, components: [agent.io], maxLineBytes: 1 << 20, agentEdge: bridge });
  bridge.attach(chain.agentSide());
  // The client: answers every relayed MCP message (and says which server it was for); queues the rest.
  const relayed: ((serverId: string) => void)[] = [];
  const answers: any[] = [];
  const answerWaiters: (() => void)[] = [];
  let stopped = false;
  void (async () => {
    while (!stopped) {
      const m = await client.next(1000).catch(() => undefined);
      if (!m) continue;
      // a provider of the stateless dialect: mcp/connect is unknown to it
      if (m.method === "mcp/connect") client.send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found: mcp/connect" } });
      else if (m.method === "mcp/message") {
        client.send({ jsonrpc: "2.0", id: m.id, result: { result: {} } });
        relayed.shift()?.(m.params.serverId);
      } else {
        answers.push(m);
        answerWaiters.shift()?.();
      }
    }
  })();
  const nextAnswer = async () => {
    if (answers.length === 0) await new Promise<void>((r) => answerWaiters.push(r));
    return answers.shift();
  };
  let ids = 1;
  /** A client request the agent answers with `answer` (result or error); gives what the agent saw. */
  const ask = async (method: string, params: Record<string, unknown>, answer: Record<string, unknown>) => {
    const id = ids++;
    client.send({ jsonrpc: "2.0", id, method, params });
    const seen = await agent.next();
    agent.send({ jsonrpc: "2.0", id: seen.id, ...answer });
    expect((await nextAnswer()).id).toBe(id);
    return seen;
  };
  await ask("initialize", { protocolVersion: 1 }, { result: { protocolVersion: 1, agentCapabilities: {} } });
  let socket = "";
  /** Whether a bridge process naming `serverId` is served: its ping reaches the client, or it is hung up on. */
  const served = async (serverId: string): Promise<boolean> => {
    const sock = createConnection(socket);
    sock.on("error", () => {});
    sock.resume(); // the conductor's answer to the hello is read and dropped, so its hang-up is seen
    const closed = new Promise<boolean>((r) => sock.on("close", () => r(false)));
    const reached = new Promise<boolean>((r) => relayed.push((id) => r(id === serverId)));
    sock.write(JSON.stringify({ jsonrpc: "2.0", method: BRIDGE_HELLO, params: { server: serverId } }) + "\n");
    sock.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) + "\n");
    const answer = await Promise.race([reached, closed]);
    if (!answer) relayed.pop(); // nothing was relayed for this one
    sock.destroy();
    return answer;
  };
  const acp = (serverId: string) => ({ type: "acp", name: serverId, serverId });
  /** session/new declaring `serverIds`; the agent answers `sessionId` (or an error when undefined). */
  const open = async (serverIds: string[], sessionId?: string) => {
    const answer = sessionId ? { result: { sessionId } } : { error: { code: -32603, message: "no" } };
    const seen = await ask("session/new", { cwd: "/", mcpServers: serverIds.map(acp) }, answer);
    const args: string[] = seen.params.mcpServers[0]?.args ?? [];
    if (args.includes("--socket")) socket = args[args.indexOf("--socket") + 1]!;
  };
  return { ask, served, open, acp, close: () => ((stopped = true), bridge.close(), client.close(), agent.close()) };
}

test("regression: the MCP-over-ACP bridge kept every declared server forever; a closed session's servers are no longer served", async () => {
  const b = await bridgedChain();
  try {
    await b.open(["shared", "mine"], "A");
    await b.open(["shared"], "B");
    expect(await b.served("mine")).toBe(true);
    await b.ask("session/close", { sessionId: "A" }, { result: {} });
    expect(await b.served("mine")).toBe(false);
    expect(await b.served("shared")).toBe(true); // B still declares it
    // A load of B declaring other servers replaces what B held.
    await b.ask("session/load", { sessionId: "B", cwd: "/", mcpServers: [b.acp("later")] }, { result: {} });
    expect(await b.served("shared")).toBe(false);
    expect(await b.served("later")).toBe(true);
    // A session/new the agent refused holds nothing.
    await b.open(["refused"]);
    expect(await b.served("refused")).toBe(false);
    await b.ask("session/close", { sessionId: "B" }, { result: {} });
    expect(await b.served("later")).toBe(false);
  } finally {
    b.close();
  }
});
