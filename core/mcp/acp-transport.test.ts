import { expect, test } from "bun:test";
import { AcpMcpRelay, AcpMcpTransport } from "./acp-transport.ts";

test("a provider without mcp/connect (-32601): MCP requests travel as stateless mcp/message; {result}, {error} and outer failures come back as MCP answers", async () => {
  const sent: [string, any][] = [];
  const answers: unknown[] = [{ result: { tools: [] } }, { error: { code: -32602, message: "bad" } }];
  const relay = new AcpMcpRelay();
  relay.bind({
    request: async (method, params) => {
      if (method === "mcp/connect") throw { code: -32601, message: "Method not found: mcp/connect" };
      sent.push([method, params]);
      const a = answers.shift();
      if (a === undefined) throw { code: -33001, message: "server unavailable" };
      return a;
    },
    notify: (method, params) => void sent.push([method, params]),
  });
  const t = new AcpMcpTransport("srv-1", relay);
  const got: any[] = [];
  t.onmessage = (m) => void got.push(m);
  await t.start();
  await t.send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  await t.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x" } });
  await t.send({ jsonrpc: "2.0", id: 3, method: "ping" });
  await t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await Bun.sleep(0);
  expect(sent[0]).toEqual(["mcp/message", { serverId: "srv-1", requestId: 1, method: "tools/list", params: null }]);
  expect(sent[3]).toEqual(["mcp/message", { serverId: "srv-1", method: "notifications/initialized", params: null }]);
  expect(got).toEqual([
    { jsonrpc: "2.0", id: 1, result: { tools: [] } },
    { jsonrpc: "2.0", id: 2, error: { code: -32602, message: "bad" } },
    { jsonrpc: "2.0", id: 3, error: { code: -33001, message: "server unavailable", data: undefined } },
  ]);
  // a provider notification reaches the transports of its server only
  relay.deliver({ serverId: "srv-1", requestId: 9, method: "notifications/progress", params: { progress: 1 } });
  relay.deliver({ serverId: "other", method: "notifications/progress" });
  expect(got.at(-1)).toEqual({ jsonrpc: "2.0", method: "notifications/progress", params: { progress: 1 } });
  expect(got).toHaveLength(4);
  await t.close();
  relay.deliver({ serverId: "srv-1", method: "notifications/progress" });
  expect(got).toHaveLength(4);
});

test("the Rust conductor 2.x dialect: mcp/connect → connectionId, mcp/message by connectionId answered with the inner result, mcp/disconnect on close", async () => {
  const sent: [string, any][] = [];
  const relay = new AcpMcpRelay();
  relay.bind({
    request: async (method, params) => {
      sent.push([method, params]);
      if (method === "mcp/connect") return { connectionId: "conn-7" };
      if (method === "mcp/disconnect") return {};
      if (params.method === "tools/list") return { tools: [{ name: "t" }] };
      if (params.method === "ping") return null; // a missing result is {} for the MCP client, never null
      throw { code: -32602, message: "unknown tool" };
    },
    notify: (method, params) => void sent.push([method, params]),
  });
  const t = new AcpMcpTransport("srv-r", relay);
  const got: any[] = [];
  t.onmessage = (m) => void got.push(m);
  await t.start();
  await t.send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  await t.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x" } });
  await t.send({ jsonrpc: "2.0", id: 3, method: "ping" });
  await t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await Bun.sleep(0);
  expect(sent[0]).toEqual(["mcp/connect", { serverId: "srv-r" }]);
  expect(sent[1]).toEqual(["mcp/message", { connectionId: "conn-7", method: "tools/list" }]);
  expect(sent[2]).toEqual(["mcp/message", { connectionId: "conn-7", method: "tools/call", params: { name: "x" } }]);
  expect(sent[4]).toEqual(["mcp/message", { connectionId: "conn-7", method: "notifications/initialized" }]);
  expect(got).toEqual([
    { jsonrpc: "2.0", id: 1, result: { tools: [{ name: "t" }] } },
    { jsonrpc: "2.0", id: 2, error: { code: -32602, message: "unknown tool" } },
    { jsonrpc: "2.0", id: 3, result: {} },
  ]);
  // provider notifications name the connection
  relay.deliver({ connectionId: "conn-7", method: "notifications/progress", params: { progress: 1 } });
  relay.deliver({ serverId: "srv-r", method: "notifications/progress" });
  expect(got.at(-1)).toEqual({ jsonrpc: "2.0", method: "notifications/progress", params: { progress: 1 } });
  expect(got).toHaveLength(4);
  await t.close();
  await Bun.sleep(0);
  expect(sent.at(-1)).toEqual(["mcp/disconnect", { connectionId: "conn-7" }]);
});

test("mcp/connect refused for an unknown server id: start fails naming the server", async () => {
  const relay = new AcpMcpRelay();
  relay.bind({
    request: async () => {
      throw { code: -32602, message: "no MCP-over-ACP server with id \"ghost\" was declared" };
    },
    notify: () => {},
  });
  const t = new AcpMcpTransport("ghost", relay);
  await expect(t.start()).rejects.toThrow('mcp/connect ghost: no MCP-over-ACP server with id "ghost" was declared');
});

/** A relay whose provider speaks the Rust conductor 2.x dialect (connectionId `conn-1`) and records what it got. */
function connectRelay(sent: [string, any][] = []): AcpMcpRelay {
  const relay = new AcpMcpRelay();
  relay.bind({
    request: async (method, params) => {
      sent.push([method, params]);
      if (method === "mcp/connect") return { connectionId: "conn-1" };
      return {};
    },
    notify: (method, params) => void sent.push([method, params]),
  });
  return relay;
}

// Regression: a provider's server-to-client request (roots/list, elicitation/create, ping) was answered
// -32601 by the agent instead of reaching its MCP client.
test("server-to-client MCP requests (Rust dialect): a provider's mcp/message request by connectionId reaches the MCP client, and its answer or error comes back", async () => {
  const relay = connectRelay();
  const t = new AcpMcpTransport("srv-r", relay);
  const got: any[] = [];
  // the MCP client: answers roots/list, refuses sampling as the MCP SDK does for an undeclared capability
  t.onmessage = (m: any) => {
    got.push(m);
    if (m.method === "roots/list") void t.send({ jsonrpc: "2.0", id: m.id, result: { roots: [{ uri: "file:///w", name: "w" }] } });
    if (m.method === "sampling/createMessage") void t.send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
  };
  await t.start();
  expect(await relay.answer({ connectionId: "conn-1", method: "roots/list" })).toEqual({ roots: [{ uri: "file:///w", name: "w" }] });
  expect(got[0]).toEqual({ jsonrpc: "2.0", id: 1, method: "roots/list" });
  await expect(relay.answer({ connectionId: "conn-1", method: "sampling/createMessage", params: { messages: [] } })).rejects.toMatchObject({ code: -32601, message: "Method not found" });
  expect(got[1]).toEqual({ jsonrpc: "2.0", id: 2, method: "sampling/createMessage", params: { messages: [] } });
  // a connection this agent never opened, a request naming none, bad inner params: -32602 naming why
  await expect(relay.answer({ connectionId: "conn-9", method: "ping" })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('"conn-9"') });
  await expect(relay.answer({ serverId: "srv-r", method: "ping" })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("connectionId") });
  await expect(relay.answer({ connectionId: "conn-1", method: "ping", params: [1] })).rejects.toMatchObject({ code: -32602 });
  await expect(relay.answer("garbage")).rejects.toMatchObject({ code: -32602 });
  // an answer to no request of the provider's is ignored
  await t.send({ jsonrpc: "2.0", id: 99, result: {} });
});

test("server-to-client MCP requests: cancelled by the provider, the client hears notifications/cancelled; closing the connection settles the waiting ones and stops taking more", async () => {
  const relay = connectRelay();
  const t = new AcpMcpTransport("srv-r", relay);
  const got: any[] = [];
  t.onmessage = (m: any) => void got.push(m); // a client that never answers
  await t.start();
  const ac = new AbortController();
  const cancelled = relay.answer({ connectionId: "conn-1", method: "elicitation/create", params: { message: "?" } }, ac.signal);
  ac.abort();
  await expect(cancelled).rejects.toMatchObject({ code: -32800 });
  expect(got[1]).toEqual({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: got[0].id, reason: expect.any(String) } });
  const waiting = relay.answer({ connectionId: "conn-1", method: "ping" });
  await t.close();
  await expect(waiting).rejects.toMatchObject({ code: -32603, message: expect.stringContaining("closed") });
  await expect(relay.answer({ connectionId: "conn-1", method: "ping" })).rejects.toMatchObject({ code: -32602 });
});

test("the stateless dialect carries no server-to-client requests: a provider's request for such a server is refused, naming the missing connectionId", async () => {
  const relay = new AcpMcpRelay();
  relay.bind({ request: async (method) => (method === "mcp/connect" ? Promise.reject({ code: -32601, message: "Method not found" }) : { result: {} }), notify: () => {} });
  const t = new AcpMcpTransport("srv-s", relay);
  await t.start();
  await expect(relay.answer({ serverId: "srv-s", requestId: 1, method: "roots/list" })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("connectionId") });
});
