// Conductor, current (issue 26): MCP-over-ACP in the Rust conductor 2.x dialect and the stateless one,
// end to end through the binary (a raw proxy offers a tool, tendril agent calls it, natively and through
// the bridge), and the chain's refusals of MCP-over-ACP requests no provider could answer.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeLlm, type FakeLlm } from "./fake-llm.ts";
import { agentEnv } from "./agent-env.ts";
import { startAgent, type StartOptions, type TestAgent } from "./acp-client.ts";
import { BIN, ROOT } from "./binary.ts";
import { waitFor } from "./fake-mcp-helpers.ts";
import { spawnRawMode } from "./raw-harness.ts";
import { Chain } from "../core/conductor/router.ts";
import { memoryPeer } from "./memory-hop.ts";

let fake: FakeLlm;
let work: string;
const running: TestAgent[] = [];

const FIXTURES = join(ROOT, "tests", "fixtures");
const RUST_PROXY = `${process.execPath} ${join(FIXTURES, "rust-dialect-proxy.ts")}`;
const ECHO_AGENT = `${process.execPath} ${join(FIXTURES, "echo-agent.ts")}`;
const TENDRIL_AGENT = `${BIN} agent`;

beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-conductor2-e2e-"));
});

afterAll(async () => {
  for (const a of running) await a.close(2000).catch(() => {});
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

function chainAgent(components: string[], opts: StartOptions & { flags?: string[] } = {}): TestAgent {
  const a = startAgent({ ...opts, args: ["conductor", "agent", ...(opts.flags ?? []), ...components], env: { ...agentEnv(fake, work), ...opts.env } });
  running.push(a);
  return a;
}

function workspace(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function traceOf(file: string): any[] {
  return readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((r) => r.message !== undefined);
}

describe("MCP-over-ACP dialects through the binary", () => {
  for (const dialect of ["connect", "stateless"] as const) {
    test(`a raw proxy in the ${dialect === "connect" ? "Rust conductor 2.x (mcp/connect)" : "ACP SDK 2.4 stateless"} dialect offers a tool; tendril agent calls it natively`, async () => {
      const file = join(work, `mcp-${dialect}.jsonl`);
      const proxy = dialect === "stateless" ? `MCP_DIALECT=stateless ${RUST_PROXY}` : RUST_PROXY;
      const a = chainAgent([proxy, TENDRIL_AGENT], { env: { TENDRIL_MODE: "yolo" }, flags: ["--trace", file] });
      await a.initialize();
      const { sessionId } = await a.newSession(workspace(`mcp-${dialect}`));
      fake.script([{ toolCalls: [{ id: "e1", name: "rust-notes__echo", input: { text: `via ${dialect}` } }] }, { text: "echoed" }]);
      expect((await a.prompt(sessionId, "echo it")).stopReason).toBe("end_turn");
      const done = a.ofKind("tool_call_update").find((u) => u.toolCallId === "e1" && u.status === "completed");
      expect(JSON.stringify(done)).toContain(`echo: via ${dialect}`);
      // The trace is written as messages pass; under load its last records may land just after the answer.
      const mcpIn = () => traceOf(file).filter((r) => r.hop === 1 && r.dir === "in" && typeof r.message.method === "string" && r.message.method.startsWith("mcp/"));
      for (let i = 0; i < 100 && !mcpIn().some((r) => r.message.params?.method === "tools/call"); i++) await Bun.sleep(50);
      const fromAgent = mcpIn();
      expect(fromAgent[0].message).toMatchObject({ method: "mcp/connect", params: { serverId: "rust-notes-1" } });
      const call = fromAgent.find((r) => r.message.params?.method === "tools/call")!.message;
      if (dialect === "connect") expect(call.params.connectionId).toBe("mcp-over-acp-connection:1");
      else expect(call.params).toMatchObject({ serverId: "rust-notes-1", requestId: expect.anything() });
    }, 30_000);
  }

  test("for an agent without acp MCP the conductor bridges to a Rust-dialect provider: connect, call, disconnect when the bridge ends", async () => {
    const file = join(work, "mcp-bridge-rust.jsonl");
    const a = chainAgent([RUST_PROXY, ECHO_AGENT], { flags: ["--trace", file] });
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("mcp-bridge-rust"));
    await a.prompt(sessionId, "mcp");
    const server = (JSON.parse(a.text()) as { name: string; command: string; args: string[] }[]).find((s) => s.name === "rust-notes")!;
    expect(server.args).toContain("mcp-bridge");
    const bridge = spawn(server.command, server.args, { stdio: ["pipe", "pipe", "inherit"] });
    const lines: any[] = [];
    bridge.stdout.setEncoding("utf8").on("data", (c: string) => c.split("\n").filter(Boolean).forEach((l) => lines.push(JSON.parse(l))));
    const ask = (m: object) => bridge.stdin.write(JSON.stringify(m) + "\n");
    ask({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } });
    ask({ jsonrpc: "2.0", method: "notifications/initialized" });
    ask({ jsonrpc: "2.0", id: 2, method: "ping" });
    ask({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { text: "bridged" } } });
    expect(await waitFor(() => lines.length >= 3, 5000)).toBe(true);
    expect(lines.find((l) => l.id === 1).result.serverInfo.name).toBe("rust-notes");
    expect(lines.find((l) => l.id === 2).result).toEqual({});
    expect(lines.find((l) => l.id === 3).result.content[0].text).toBe("echo: bridged");
    bridge.stdin.end();
    expect(await new Promise((r) => bridge.on("exit", r))).toBe(0);
    // the bridge's connection is closed with a request, and the provider answered it
    const sawDisconnect = () => traceOf(file).some((r) => r.hop === 0 && r.dir === "out" && r.message.params?.method === "mcp/disconnect");
    expect(await waitFor(sawDisconnect, 5000)).toBe(true);
    // the chain is unharmed
    expect((await a.prompt(sessionId, "say still here")).stopReason).toBe("end_turn");
  }, 30_000);
});

describe("MCP-over-ACP requests no provider could answer (in memory)", () => {
  test("mcp/connect for an undeclared server id and a message for a closed connectionId: clear errors, the chain unharmed", async () => {
    const client = memoryPeer();
    const proxy = memoryPeer();
    const agent = memoryPeer();
    new Chain({ mode: "agent", client: client.io, components: [proxy.io, agent.io], maxLineBytes: 1 << 20 });
    // the proxy declares a server in session/new on its way to the agent
    client.send({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/w", mcpServers: [] } });
    const sn = await proxy.next();
    proxy.send({ jsonrpc: "2.0", id: 70, method: "proxy/successor", params: { method: "session/new", params: { cwd: "/w", mcpServers: [{ type: "acp", name: "n", serverId: "s1" }] } } });
    const toAgent = await agent.next();
    agent.send({ jsonrpc: "2.0", id: toAgent.id, result: { sessionId: "S" } });
    proxy.send({ jsonrpc: "2.0", id: sn.id, result: (await proxy.next()).result });
    expect((await client.next()).result).toEqual({ sessionId: "S" });

    agent.send({ jsonrpc: "2.0", id: 5, method: "mcp/connect", params: { serverId: "ghost" } });
    expect(await agent.next()).toEqual({
      jsonrpc: "2.0",
      id: 5,
      error: { code: -32602, message: 'mcp/connect: no MCP-over-ACP server with id "ghost" is declared by a session on this chain' },
    });
    // a declared one reaches its provider; the connection it opens is known until mcp/disconnect is answered
    agent.send({ jsonrpc: "2.0", id: 6, method: "mcp/connect", params: { serverId: "s1" } });
    const connect = await proxy.next();
    expect(connect.params).toEqual({ method: "mcp/connect", params: { serverId: "s1" } });
    proxy.send({ jsonrpc: "2.0", id: connect.id, result: { connectionId: "c1" } });
    expect((await agent.next()).result).toEqual({ connectionId: "c1" });
    agent.send({ jsonrpc: "2.0", id: 7, method: "mcp/message", params: { connectionId: "c1", method: "ping" } });
    const ping = await proxy.next();
    proxy.send({ jsonrpc: "2.0", id: ping.id, result: {} });
    expect(await agent.next()).toEqual({ jsonrpc: "2.0", id: 7, result: {} });
    agent.send({ jsonrpc: "2.0", id: 8, method: "mcp/disconnect", params: { connectionId: "c1" } });
    const bye = await proxy.next();
    proxy.send({ jsonrpc: "2.0", id: bye.id, result: {} });
    expect(await agent.next()).toEqual({ jsonrpc: "2.0", id: 8, result: {} });
    agent.send({ jsonrpc: "2.0", id: 9, method: "mcp/message", params: { connectionId: "c1", method: "tools/list" } });
    agent.send({ jsonrpc: "2.0", method: "mcp/message", params: { connectionId: "c1", method: "notifications/cancelled" } });
    expect(await agent.next()).toEqual({
      jsonrpc: "2.0",
      id: 9,
      error: { code: -32602, message: 'mcp/message: no open MCP-over-ACP connection "c1" (closed by mcp/disconnect, or never opened by mcp/connect)' },
    });
    // the chain goes on; the dropped notification never reached the proxy
    client.send({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId: "S", prompt: [] } });
    expect((await proxy.next()).method).toBe("session/prompt");
    expect(proxy.inbox).toEqual([]);
    // once the session that declared it is closed, its server is no longer reachable
    client.send({ jsonrpc: "2.0", id: 3, method: "session/close", params: { sessionId: "S" } });
    const close = await proxy.next();
    proxy.send({ jsonrpc: "2.0", id: 71, method: "proxy/successor", params: { method: "session/close", params: close.params } });
    const closeAtAgent = await agent.next();
    agent.send({ jsonrpc: "2.0", id: closeAtAgent.id, result: {} });
    proxy.send({ jsonrpc: "2.0", id: close.id, result: (await proxy.next()).result });
    expect((await client.next()).id).toBe(3);
    agent.send({ jsonrpc: "2.0", id: 10, method: "mcp/connect", params: { serverId: "s1" } });
    expect((await agent.next()).error.message).toBe('mcp/connect: no MCP-over-ACP server with id "s1" is declared by a session on this chain');
  });
});

describe("JSON-RPC batches", () => {
  const BATCH = [
    { jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/w", mcpServers: [] } },
    { jsonrpc: "2.0", method: "_x/note", params: { n: 1 } },
    42,
    { jsonrpc: "1.0", id: 9, method: "_x/old" },
    { jsonrpc: "2.0", id: 3, method: "_x/echo", params: { a: 1 } },
  ];
  const GARBAGE_ANSWERS = [
    { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid request: a message must be a JSON object" } },
    { jsonrpc: "2.0", id: 9, error: { code: -32600, message: 'Invalid request: jsonrpc must be "2.0"' } },
  ];

  test("in memory through 0 proxies: one batch to the agent, its answers and the malformed entries' back as one batch; an empty batch is one -32600", async () => {
    const client = memoryPeer();
    const agent = memoryPeer();
    new Chain({ mode: "agent", client: client.io, components: [agent.io], maxLineBytes: 1 << 20 });
    client.raw(JSON.stringify(BATCH) + "\n");
    const got = await agent.next();
    expect(Array.isArray(got)).toBe(true);
    expect(got.map((m: any) => m.method)).toEqual(["session/new", "_x/note", "_x/echo"]);
    agent.send([
      { jsonrpc: "2.0", id: got[2].id, result: { echoed: true } },
      { jsonrpc: "2.0", id: got[0].id, result: { sessionId: "S" } },
    ] as unknown as Record<string, unknown>);
    const answers = await client.next();
    expect(Array.isArray(answers)).toBe(true);
    expect(answers).toEqual([...GARBAGE_ANSWERS, { jsonrpc: "2.0", id: 3, result: { echoed: true } }, { jsonrpc: "2.0", id: 2, result: { sessionId: "S" } }]);
    client.raw("[]\n");
    expect(await client.next()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid request: an empty batch" } });
    // a notification-only batch gets no answer; single messages go on as before
    client.raw(JSON.stringify([{ jsonrpc: "2.0", method: "_x/a" }, { jsonrpc: "2.0", method: "_x/b" }]) + "\n");
    expect((await agent.next()).map((m: any) => m.method)).toEqual(["_x/a", "_x/b"]);
    client.send({ jsonrpc: "2.0", id: 4, method: "_x/single" });
    const single = await agent.next();
    expect(single.method).toBe("_x/single");
    agent.send({ jsonrpc: "2.0", id: single.id, result: {} });
    expect(await client.next()).toEqual({ jsonrpc: "2.0", id: 4, result: {} });
  });

  test("a proxy that writes a batch of notifications (to its client, and wrapped for its successor) does not end the chain; each keeps its order", async () => {
    const client = memoryPeer();
    const proxy = memoryPeer();
    const agent = memoryPeer();
    new Chain({ mode: "agent", client: client.io, components: [proxy.io, agent.io], maxLineBytes: 1 << 20 });
    const notes = [1, 2, 3].map((n) => ({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "S", n } }));
    proxy.raw(JSON.stringify(notes) + "\n");
    const toClient = await client.next();
    const seen = Array.isArray(toClient) ? toClient : [toClient, await client.next(), await client.next()];
    expect(seen.map((m: any) => m.params.n)).toEqual([1, 2, 3]);
    proxy.raw(JSON.stringify([1, 2].map((n) => ({ jsonrpc: "2.0", method: "proxy/successor", params: { method: "_x/note", params: { n } } }))) + "\n");
    const toAgent = await agent.next();
    const atAgent = Array.isArray(toAgent) ? toAgent : [toAgent, await agent.next()];
    expect(atAgent.map((m: any) => [m.method, m.params.n])).toEqual([["_x/note", 1], ["_x/note", 2]]);
    // requests still go both ways, each answered under its own id
    client.send({ jsonrpc: "2.0", id: 7, method: "_x/ping", params: {} });
    const ping = await proxy.next();
    expect(ping.method).toBe("_x/ping");
    proxy.send({ jsonrpc: "2.0", id: ping.id, result: { pong: true } });
    expect(await client.next()).toEqual({ jsonrpc: "2.0", id: 7, result: { pong: true } });
    expect(client.inbox).toEqual([]);
  });

  for (const proxies of [0, 2]) {
    test(`through the binary and ${proxies} proxies (the proxy library): relayed as a batch at every hop, answered as one batch`, async () => {
      const file = join(work, `batch-${proxies}.jsonl`);
      const API_PROXY = `${process.execPath} ${join(FIXTURES, "api-proxy.ts")}`;
      const BATCH_AGENT = `${process.execPath} ${join(FIXTURES, "batch-agent.ts")}`;
      const components = [...Array.from({ length: proxies }, () => API_PROXY), BATCH_AGENT];
      const r = spawnRawMode("conductor", {}, ["agent", "--trace", file, ...components]);
      try {
        r.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
        expect((await r.response(1)).result.protocolVersion).toBe(1);
        r.writeLine(BATCH);
        const answers = await r.nextMessage(10_000);
        expect(Array.isArray(answers)).toBe(true);
        expect(answers).toHaveLength(4);
        expect(answers.slice(0, 2)).toEqual(GARBAGE_ANSWERS);
        expect(answers.find((a: any) => a.id === 2).result).toEqual({ sessionId: "batch-session" });
        expect(answers.find((a: any) => a.id === 3).result).toEqual({ method: "_x/echo", params: { a: 1 } });
        r.writeLine([]);
        expect(await r.nextMessage()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid request: an empty batch" } });
        // the chain goes on with single messages
        r.writeLine({ jsonrpc: "2.0", id: 5, method: "_x/after", params: {} });
        expect((await r.response(5)).result).toEqual({ method: "_x/after", params: {} });
        r.child.stdin.end();
        expect(await r.exited(10_000)).toBe(0);
        // every hop saw the batch as one batch on its way out of the conductor, and sent one back
        const records = traceOf(file);
        for (let hop = 0; hop <= proxies; hop++) {
          const out = records.find((x) => x.hop === hop && x.dir === "out" && Array.isArray(x.message));
          expect(out?.message.length).toBe(3); // session/new, the notification, _x/echo (wrapped for a proxy)
          expect(records.some((x) => x.hop === hop && x.dir === "in" && Array.isArray(x.message))).toBe(true);
        }
      } finally {
        r.kill();
      }
    }, 30_000);
  }
});

describe("a hop that takes no batches", () => {
  test("its one -32600 (id null) answers every request of the batch it refused; the sender gets them as one batch", async () => {
    const client = memoryPeer();
    const agent = memoryPeer();
    new Chain({ mode: "agent", client: client.io, components: [agent.io], maxLineBytes: 1 << 20 });
    client.raw(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "_x/a" }, { jsonrpc: "2.0", method: "_x/n" }, { jsonrpc: "2.0", id: 2, method: "_x/b" }]) + "\n");
    expect((await agent.next()).map((m: any) => m.method)).toEqual(["_x/a", "_x/n", "_x/b"]);
    const refusal = { code: -32600, message: "Invalid request: batches are not supported" };
    agent.send({ jsonrpc: "2.0", id: null, error: refusal });
    expect(await client.next()).toEqual([
      { jsonrpc: "2.0", id: 1, error: refusal },
      { jsonrpc: "2.0", id: 2, error: refusal },
    ]);
    // the chain goes on
    client.send({ jsonrpc: "2.0", id: 3, method: "_x/c" });
    const c = await agent.next();
    agent.send({ jsonrpc: "2.0", id: c.id, result: {} });
    expect(await client.next()).toEqual({ jsonrpc: "2.0", id: 3, result: {} });
  });

  test("through the binary: a batch to tendril agent, which takes none, is answered with its refusal per request", async () => {
    const r = spawnRawMode("conductor", agentEnv(fake, work), ["agent", TENDRIL_AGENT]);
    try {
      r.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
      expect((await r.response(1, 10_000)).result.protocolVersion).toBe(1);
      r.writeLine([{ jsonrpc: "2.0", id: 2, method: "session/list", params: {} }, { jsonrpc: "2.0", id: 3, method: "_x/none", params: {} }]);
      const answers = await r.nextMessage(10_000);
      expect(answers.map((a: any) => [a.id, a.error.code])).toEqual([
        [2, -32600],
        [3, -32600],
      ]);
      r.child.stdin.end();
      expect(await r.exited(10_000)).toBe(0);
    } finally {
      r.kill();
    }
  }, 30_000);
});
