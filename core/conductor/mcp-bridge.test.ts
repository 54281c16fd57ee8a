import { afterEach, expect, test } from "bun:test";
import { createConnection, type Socket } from "node:net";
import { Chain } from "./router.ts";
import { BRIDGE_HELLO, McpBridge } from "./mcp-bridge.ts";
import { memoryPeer, type MemoryPeer } from "../../tests/memory-hop.ts";
import { Cancellation } from "../wire/rpc-peer.ts";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A socket's JSON lines, awaited one by one. */
function lines(sock: Socket): () => Promise<any> {
  const got: any[] = [];
  const waiters: (() => void)[] = [];
  let buf = "";
  sock.setEncoding("utf8").on("data", (c: string) => {
    buf += c;
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      got.push(JSON.parse(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
    }
    waiters.splice(0).forEach((w) => w());
  });
  return async () => {
    while (got.length === 0) await new Promise<void>((r) => waiters.push(r));
    return got.shift();
  };
}

/** A chain whose agent does not speak MCP-over-ACP, a session declaring the Rust-dialect server `srv`
 *  (or the sacp `acp:srv`), and a bridge process's connection to it, opened (mcp/connect answered
 *  `conn-b`; sacp: `_mcp/connect` answered `connection_id: conn-b`) and past its first ping. */
async function bridgedConnection(sacp = false): Promise<{ bridge: McpBridge; client: MemoryPeer; sock: Socket; next: () => Promise<any> }> {
  const { bridge, client, sock, next } = await bridgeProcess(sacp, 10_000);
  const connect = await client.next();
  if (sacp) expect(connect).toMatchObject({ method: "_mcp/connect", params: { acp_url: "acp:srv" } });
  else expect(connect).toMatchObject({ method: "mcp/connect", params: { serverId: "srv" } });
  client.send({ jsonrpc: "2.0", id: connect.id, result: sacp ? { connection_id: "conn-b" } : { connectionId: "conn-b" } });
  sock.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) + "\n");
  const ping = await client.next();
  expect(ping.params).toMatchObject({ connectionId: "conn-b", method: "ping" });
  client.send({ jsonrpc: "2.0", id: ping.id, result: {} });
  expect(await next()).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
  return { bridge, client, sock, next };
}

/** The same chain and session, and a bridge process connected and greeted; nothing asked of the client yet. */
async function bridgeProcess(sacp: boolean, connectTimeoutMs: number): Promise<{ bridge: McpBridge; client: MemoryPeer; sock: Socket; next: () => Promise<any> }> {
  const client = memoryPeer();
  const agent = memoryPeer();
  const bridge = await McpBridge.start({ self: { command: "tendril", args: [] }, maxLineBytes: 1 << 20, connectTimeoutMs });
  const chain = new Chain({ mode: "agent", client: client.io, components: [agent.io], maxLineBytes: 1 << 20, agentEdge: bridge });
  bridge.attach(chain.agentSide());
  cleanups.push(() => (bridge.close(), client.close(), agent.close()));
  client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
  agent.send({ jsonrpc: "2.0", id: (await agent.next()).id, result: { protocolVersion: 1, agentCapabilities: {} } });
  await client.next();
  const declared = sacp ? { type: "http", name: "notes", url: "acp:srv", headers: [] } : { type: "acp", name: "notes", serverId: "srv" };
  client.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/", mcpServers: [declared] } });
  const seen = await agent.next();
  const args: string[] = seen.params.mcpServers[0].args;
  agent.send({ jsonrpc: "2.0", id: seen.id, result: { sessionId: "S" } });
  await client.next();
  const sock = createConnection(args[args.indexOf("--socket") + 1]!);
  cleanups.push(() => sock.destroy());
  const next = lines(sock);
  sock.write(JSON.stringify({ jsonrpc: "2.0", method: BRIDGE_HELLO, params: { server: sacp ? "acp:srv" : "srv" } }) + "\n");
  expect((await next()).params).toEqual({ ok: true });
  return { bridge, client, sock, next };
}

// Regression: a provider's server-to-client request (Rust dialect) for a bridged MCP client went on to
// an agent that does not speak MCP-over-ACP, and came back -32601.
test("a provider's mcp/message request naming a bridged connection goes to that bridge process's MCP client, and its answer or error comes back", async () => {
  const { bridge, sock, next } = await bridgedConnection();
  const roots = bridge.takeRequest("mcp/message", { connectionId: "conn-b", method: "roots/list" })!;
  const asked = await next();
  expect(asked).toMatchObject({ jsonrpc: "2.0", method: "roots/list" });
  sock.write(JSON.stringify({ jsonrpc: "2.0", id: asked.id, result: { roots: [{ uri: "file:///w" }] } }) + "\n");
  expect(await roots).toEqual({ result: { roots: [{ uri: "file:///w" }] } });

  const sampling = bridge.takeRequest("mcp/message", { connectionId: "conn-b", method: "sampling/createMessage", params: { messages: [] } })!;
  const s = await next();
  expect(s.params).toEqual({ messages: [] });
  sock.write(JSON.stringify({ jsonrpc: "2.0", id: s.id, error: { code: -32601, message: "Method not found" } }) + "\n");
  expect(await sampling).toEqual({ error: { code: -32601, message: "Method not found" } });

  // not for a bridged connection: -32602 naming it; not a provider's MCP request at all: the agent's
  expect(await bridge.takeRequest("mcp/message", { connectionId: "conn-x", method: "ping" })).toMatchObject({ error: { code: -32602, message: expect.stringContaining('"conn-x"') } });
  expect(await bridge.takeRequest("mcp/message", { method: "ping" })).toMatchObject({ error: { code: -32602, message: expect.stringContaining("connectionId") } });
  expect(bridge.takeRequest("session/prompt", { sessionId: "S", prompt: [] })).toBeUndefined();
});

test("a bridge process that goes away before answering: the provider's waiting request gets an error, and later ones are refused", async () => {
  const { bridge, sock, next } = await bridgedConnection();
  const waiting = bridge.takeRequest("mcp/message", { connectionId: "conn-b", method: "elicitation/create", params: { message: "?" } })!;
  await next();
  sock.destroy();
  expect(await waiting).toMatchObject({ error: { code: -32603, message: expect.stringContaining("went away") } });
  expect(await bridge.takeRequest("mcp/message", { connectionId: "conn-b", method: "ping" })).toMatchObject({ error: { code: -32602 } });
});

test("sacp: a provider's _mcp/message request naming a bridged connection (connectionId or connection_id) reaches that bridge process's MCP client", async () => {
  const { bridge, sock, next } = await bridgedConnection(true);
  const roots = bridge.takeRequest("_mcp/message", { connection_id: "conn-b", method: "roots/list", params: null })!;
  const asked = await next();
  expect(asked).toEqual({ jsonrpc: "2.0", id: asked.id, method: "roots/list" });
  sock.write(JSON.stringify({ jsonrpc: "2.0", id: asked.id, result: { roots: [] } }) + "\n");
  expect(await roots).toEqual({ result: { roots: [] } });
  expect(await bridge.takeRequest("_mcp/message", { connectionId: "gone", method: "ping" })).toMatchObject({ error: { code: -32602 } });
});

test("a provider cancelling its request to a bridged MCP client: the client hears notifications/cancelled, the provider gets -32800", async () => {
  const { bridge, next } = await bridgedConnection();
  const cancellation = new Cancellation();
  const waiting = bridge.takeRequest("mcp/message", { connectionId: "conn-b", method: "elicitation/create", params: { message: "?" } }, cancellation)!;
  const asked = await next();
  expect(asked).toMatchObject({ method: "elicitation/create" });
  cancellation.cancel();
  expect(await waiting).toMatchObject({ error: { code: -32800 } });
  expect(await next()).toMatchObject({ method: "notifications/cancelled", params: { requestId: asked.id } });
});

test("B5: a client that never answers mcp/connect: after MCP_CONNECT_TIMEOUT_S the bridge speaks the stateless dialect; a late connection is closed again", async () => {
  const { client, sock, next } = await bridgeProcess(false, 100);
  const connect = await client.next();
  expect(connect).toMatchObject({ method: "mcp/connect", params: { serverId: "srv" } });
  // no answer: the MCP client's first request goes out in the stateless form once the bound passes
  sock.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) + "\n");
  const ping = await client.next(5000);
  expect(ping).toMatchObject({ method: "mcp/message", params: { serverId: "srv", requestId: 1, method: "ping" } });
  client.send({ jsonrpc: "2.0", id: ping.id, result: { result: {} } });
  expect(await next()).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
  // the connect answer comes after all: that connection is closed, not used
  client.send({ jsonrpc: "2.0", id: connect.id, result: { connectionId: "late" } });
  expect(await client.next(5000)).toMatchObject({ method: "mcp/disconnect", params: { connectionId: "late" } });
});
