import { expect, test } from "bun:test";
import { Chain } from "./router.ts";
import { memoryPeer } from "../../tests/memory-hop.ts";
import { bytePipe } from "../wire/byte-pipe.ts";
import { allowOnce, Proxy } from "./proxy.ts";

/** client → [our Proxy] → agent, all in memory. */
function setup() {
  const client = memoryPeer();
  const agent = memoryPeer();
  const down = bytePipe();
  const up = bytePipe();
  const proxy = new Proxy({ input: down.input, sink: up.sink }, { maxLineBytes: 1 << 20 });
  new Chain({ mode: "agent", client: client.io, components: [{ input: up.input, sink: down.sink }, agent.io], maxLineBytes: 1 << 20 });
  return { client, agent, proxy };
}

async function initialize(client: ReturnType<typeof memoryPeer>, agent: ReturnType<typeof memoryPeer>) {
  client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
  const init = await agent.next();
  expect(init.method).toBe("initialize");
  agent.send({ jsonrpc: "2.0", id: init.id, result: { protocolVersion: 1, agentInfo: { name: "a" } } });
  expect((await client.next()).result).toEqual({ protocolVersion: 1, agentInfo: { name: "a" } });
}

test("forwards by default, intercepts a method, injects MCP servers into session/new", async () => {
  const { client, agent, proxy } = setup();
  proxy
    .addMcpServers(() => [{ type: "acp", name: "tools", serverId: "t1" }])
    .onNotification("session/update", (p, next) => next({ ...p, update: { ...p.update, seen: true } as unknown as typeof p.update }));
  await initialize(client, agent);
  client.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/w", mcpServers: [{ name: "mine" }], extra: 1 } });
  const sn = await agent.next();
  expect(sn.params).toEqual({ cwd: "/w", mcpServers: [{ name: "mine" }, { type: "acp", name: "tools", serverId: "t1" }], extra: 1 });
  agent.send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "_x" } } });
  agent.send({ jsonrpc: "2.0", id: sn.id, result: { sessionId: "s" } });
  expect((await client.next()).params.update).toEqual({ sessionUpdate: "_x", seen: true });
  expect((await client.next()).result).toEqual({ sessionId: "s" });
  // an error from the successor reaches the client unchanged
  client.send({ jsonrpc: "2.0", id: 3, method: "_nope", params: {} });
  const nope = await agent.next();
  agent.send({ jsonrpc: "2.0", id: nope.id, error: { code: -32601, message: "Method not found", data: { m: "_nope" } } });
  expect(await client.next()).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32601, message: "Method not found", data: { m: "_nope" } } });
});

test("a sub-session it owns: updates stay with the proxy, permissions are auto-answered, others pass through", async () => {
  const { client, agent, proxy } = setup();
  await initialize(client, agent);
  const opening = proxy.openSession({ cwd: "/r" }, allowOnce);
  const sn = await agent.next();
  expect(sn.method).toBe("session/new");
  agent.send({ jsonrpc: "2.0", id: sn.id, result: { sessionId: "sub" } });
  const sub = await opening;
  const turn = sub.prompt("what is in the crate?");
  const prompt = await agent.next();
  expect(prompt.params).toEqual({ sessionId: "sub", prompt: [{ type: "text", text: "what is in the crate?" }] });
  agent.send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "sub", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "found " } } } });
  agent.send({
    jsonrpc: "2.0",
    id: 50,
    method: "session/request_permission",
    params: { sessionId: "sub", toolCall: { toolCallId: "t" }, options: [{ optionId: "no", kind: "reject_once" }, { optionId: "yes", kind: "allow_once" }] },
  });
  expect(await agent.next()).toEqual({ jsonrpc: "2.0", id: 50, result: { outcome: { outcome: "selected", optionId: "yes" } } });
  agent.send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "sub", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "it" } } } });
  agent.send({ jsonrpc: "2.0", id: prompt.id, result: { stopReason: "end_turn" } });
  expect(await turn).toEqual({ stopReason: "end_turn", text: "found it" });
  // a permission request of a session the proxy does not own reaches the client
  agent.send({ jsonrpc: "2.0", id: 51, method: "session/request_permission", params: { sessionId: "users", options: [] } });
  const asked = await client.next();
  expect(asked.method).toBe("session/request_permission");
  client.send({ jsonrpc: "2.0", id: asked.id, result: { outcome: { outcome: "cancelled" } } });
  expect(await agent.next()).toEqual({ jsonrpc: "2.0", id: 51, result: { outcome: { outcome: "cancelled" } } });
  expect(client.inbox).toEqual([]);
});

test("$/cancel_request for a forwarded request is translated to the forwarded id", async () => {
  const { client, agent } = setup();
  client.send({ jsonrpc: "2.0", id: 9, method: "session/prompt", params: { sessionId: "s", prompt: [] } });
  const p = await agent.next();
  client.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 9 } });
  expect(await agent.next()).toEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: p.id } });
});

test("regression: a session/new handler set after addMcpServers still forwards the added servers", async () => {
  const { client, agent, proxy } = setup();
  proxy.addMcpServers(() => [{ type: "acp", name: "late", serverId: "l1" }]).onRequest("session/new", (p, next) => next({ ...p, tagged: true } as typeof p));
  client.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/w", mcpServers: [] } });
  const sn = await agent.next();
  expect(sn.params).toEqual({ cwd: "/w", mcpServers: [{ type: "acp", name: "late", serverId: "l1" }], tagged: true });
});

test("when the conductor connection closes, requests still waiting fail instead of hanging", async () => {
  const down = bytePipe();
  const up = bytePipe();
  const proxy = new Proxy({ input: down.input, sink: up.sink }, { maxLineBytes: 1 << 20 });
  const waiting = proxy.successor.request("session/new", { cwd: "/", mcpServers: [] });
  down.close();
  await expect(waiting).rejects.toThrow("the conductor connection closed");
  expect((await proxy.ended).reason).toBe("eof");
});

test("an answer relayed by default is never overtaken by what the successor sent after it", async () => {
  const { client, agent } = setup();
  client.send({ jsonrpc: "2.0", id: 4, method: "session/prompt", params: { sessionId: "s", prompt: [] } });
  const p = await agent.next();
  const answer = { jsonrpc: "2.0", id: p.id, result: { stopReason: "end_turn" } };
  const later = { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "session_info_update", title: "t" } } };
  agent.raw(JSON.stringify(answer) + "\n" + JSON.stringify(later) + "\n"); // one chunk
  expect((await client.next()).id).toBe(4);
  expect((await client.next()).method).toBe("session/update");
});

test("a served tool reports progress to the caller's token, sees the caller's cancellation, and stops being served", async () => {
  const { client, agent, proxy } = setup();
  await initialize(client, agent);
  let aborted: unknown;
  const served = proxy.serveMcp("slow", {
    tools: [{ name: "wait" }],
    call: (_n, _a, ctx) => {
      ctx.progress(1, "half way");
      return new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve({ content: [], isError: !!(aborted = ctx.signal.reason) })));
    },
  });
  const { serverId } = served() as { serverId: string };
  const call = { serverId, requestId: 7, method: "tools/call", params: { name: "wait", arguments: {}, _meta: { progressToken: "tok" } } };
  agent.send({ jsonrpc: "2.0", id: 60, method: "mcp/message", params: call });
  expect(await agent.next()).toMatchObject({
    method: "mcp/message",
    params: { serverId, requestId: 7, method: "notifications/progress", params: { progressToken: "tok", progress: 1, message: "half way" } },
  });
  agent.send({ jsonrpc: "2.0", method: "mcp/message", params: { serverId, method: "notifications/cancelled", params: { requestId: 7 } } });
  expect((await agent.next()).id).toBe(60);
  expect(String(aborted)).toContain("cancelled by the MCP client");
  served.stop();
  agent.send({ jsonrpc: "2.0", id: 61, method: "mcp/message", params: { ...call, requestId: 8 } });
  expect((await client.next()).method).toBe("mcp/message"); // no longer ours: forwarded like any request
});

test("regression: updates of an owned session's ending turn stay with the proxy until session/close is answered", async () => {
  const { client, agent, proxy } = setup();
  await initialize(client, agent);
  const opening = proxy.openSession({ cwd: "/r" }, allowOnce);
  const sn = await agent.next();
  agent.send({ jsonrpc: "2.0", id: sn.id, result: { sessionId: "sub" } });
  const sub = await opening;
  const closing = sub.close();
  const close = await agent.next();
  expect(close.params).toEqual({ sessionId: "sub" });
  agent.send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "sub", update: { sessionUpdate: "tool_call_update", status: "cancelled" } } });
  agent.send({ jsonrpc: "2.0", id: close.id, result: {} });
  await closing;
  // a marker sent after: it is the first thing the client gets (order is kept, so nothing leaked before it)
  agent.send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "users", update: { sessionUpdate: "_marker" } } });
  expect((await client.next()).params.sessionId).toBe("users");
});

// C2: the sub-session was registered only after `await`ing session/new, so updates or a permission
// request for it read in the same chunk as the answer went to the editor.
test("C2: updates and a permission request read with session/new's answer stay with the proxy", async () => {
  const { client, agent, proxy } = setup();
  await initialize(client, agent);
  const opening = proxy.openSession({ cwd: "/r" }, allowOnce);
  const sn = await agent.next();
  const lines = [
    // before the answer: the id is not known yet, so it is held until the answer says whose it is
    { jsonrpc: "2.0", method: "session/update", params: { sessionId: "sub", update: { sessionUpdate: "available_commands_update", availableCommands: [] } } },
    { jsonrpc: "2.0", id: sn.id, result: { sessionId: "sub" } },
    { jsonrpc: "2.0", method: "session/update", params: { sessionId: "sub", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } } } },
    { jsonrpc: "2.0", id: 70, method: "session/request_permission", params: { sessionId: "sub", toolCall: { toolCallId: "t", kind: "read" }, options: [{ optionId: "y", kind: "allow_once" }] } },
    { jsonrpc: "2.0", method: "session/update", params: { sessionId: "users", update: { sessionUpdate: "_marker" } } },
  ];
  agent.raw(lines.map((l) => JSON.stringify(l) + "\n").join(""));
  const sub = await opening;
  expect(sub.sessionId).toBe("sub");
  expect(await agent.next()).toEqual({ jsonrpc: "2.0", id: 70, result: { outcome: { outcome: "selected", optionId: "y" } } });
  // the first thing the client sees is the marker for its own session
  expect((await client.next()).params).toEqual({ sessionId: "users", update: { sessionUpdate: "_marker" } });
  expect(client.inbox).toEqual([]);
});

test("C2: while a sub-session opens, updates of the client's own sessions are not held", async () => {
  const { client, agent, proxy } = setup();
  await initialize(client, agent);
  client.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/w", mcpServers: [] } });
  const users = await agent.next();
  agent.send({ jsonrpc: "2.0", id: users.id, result: { sessionId: "users" } });
  expect((await client.next()).result.sessionId).toBe("users");
  const opening = proxy.openSession({ cwd: "/r" }, allowOnce);
  const sn = await agent.next();
  agent.send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "users", update: { sessionUpdate: "_live" } } });
  expect((await client.next()).params.update).toEqual({ sessionUpdate: "_live" });
  agent.send({ jsonrpc: "2.0", id: sn.id, result: { sessionId: "sub" } });
  await opening;
});

// C5: a throwing answerer or listener ended the whole connection.
test("C5: a throwing permission answerer answers cancelled and a throwing listener is logged; the connection goes on", async () => {
  const { client, agent, proxy } = setup();
  await initialize(client, agent);
  const opening = proxy.openSession({ cwd: "/r" }, () => {
    throw new Error("answerer bug");
  });
  const sn = await agent.next();
  agent.send({ jsonrpc: "2.0", id: sn.id, result: { sessionId: "sub" } });
  const sub = await opening;
  sub.onUpdate(() => {
    throw new Error("listener bug");
  });
  agent.send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "sub", update: { sessionUpdate: "agent_message_chunk" } } });
  agent.send({ jsonrpc: "2.0", id: 71, method: "session/request_permission", params: { sessionId: "sub", toolCall: { toolCallId: "t" }, options: [{ optionId: "y", kind: "allow_once" }] } });
  expect(await agent.next()).toEqual({ jsonrpc: "2.0", id: 71, result: { outcome: { outcome: "cancelled" } } });
  proxy.onNotification("_x/ping", () => {
    throw new Error("handler bug");
  });
  client.send({ jsonrpc: "2.0", method: "_x/ping", params: {} });
  client.send({ jsonrpc: "2.0", id: 72, method: "_x/still", params: {} });
  const still = await agent.next();
  expect(still.method).toBe("_x/still");
  agent.send({ jsonrpc: "2.0", id: still.id, result: { ok: true } });
  expect(await client.next()).toEqual({ jsonrpc: "2.0", id: 72, result: { ok: true } });
});

test("a sub-session's prompt over ACP v2: acknowledged, and the turn ends with the idle state_update's stop reason (or its error)", async () => {
  const { client, agent, proxy } = setup();
  client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 2, info: { name: "c", version: "1" } } });
  const init = await agent.next();
  expect(init.params.protocolVersion).toBe(2);
  agent.send({ jsonrpc: "2.0", id: init.id, result: { protocolVersion: 2, info: { name: "a", version: "1" }, capabilities: { session: {} } } });
  expect((await client.next()).result.protocolVersion).toBe(2);
  const opening = proxy.openSession({ cwd: "/r" }, allowOnce);
  const sn = await agent.next();
  agent.send({ jsonrpc: "2.0", id: sn.id, result: { sessionId: "sub" } });
  const sub = await opening;
  // (over v1 the answer would end the turn: no stop reason, no text after it)
  const turn = sub.prompt("look");
  const prompt = await agent.next();
  const chunk = (text: string) => ({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "sub", update: { sessionUpdate: "agent_message_chunk", messageId: "m1", content: { type: "text", text } } } });
  const state = (update: Record<string, unknown>) => ({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "sub", update: { sessionUpdate: "state_update", ...update } } });
  agent.send(state({ state: "running" }));
  agent.send({ jsonrpc: "2.0", id: prompt.id, result: { messageId: "u1" } });
  agent.send(chunk("seen "));
  agent.send(chunk("it"));
  agent.send(state({ state: "idle", stopReason: "end_turn" }));
  expect(await turn).toEqual({ stopReason: "end_turn", text: "seen it" });
  const failing = sub.prompt("again");
  const p2 = await agent.next();
  agent.send({ jsonrpc: "2.0", id: p2.id, result: { messageId: "u2" } });
  agent.send(state({ state: "idle", stopReason: "error", error: { code: -32603, message: "the model is gone" } }));
  await expect(failing).rejects.toThrow("the model is gone");
  expect(client.inbox).toEqual([]);
});

test("a sub-session over ACP v2: its modes come from the mode config option (grouped values too), and setMode sets that option", async () => {
  const { client, agent, proxy } = setup();
  client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 2, info: { name: "c", version: "1" } } });
  const init = await agent.next();
  agent.send({ jsonrpc: "2.0", id: init.id, result: { protocolVersion: 2, info: { name: "a", version: "1" } } });
  await client.next();
  const opening = proxy.openSession({ cwd: "/r" }, allowOnce);
  const sn = await agent.next();
  const configOptions = [
    { configId: "model", name: "Model", category: "model", type: "select", currentValue: "m", options: [{ value: "m", name: "M" }] },
    { configId: "mode", name: "Mode", category: "mode", type: "select", currentValue: "ask", options: [{ group: "g", name: "G", options: [{ value: "ask", name: "Ask" }, { value: "read-only", name: "Read only" }] }] },
  ];
  agent.send({ jsonrpc: "2.0", id: sn.id, result: { sessionId: "sub", configOptions } });
  const sub = await opening;
  expect(sub.modes).toEqual({ currentModeId: "ask", availableModes: [{ id: "ask", name: "Ask" }, { id: "read-only", name: "Read only" }] });
  const setting = sub.setMode("read-only");
  const set = await agent.next();
  expect(set).toMatchObject({ method: "session/set_config_option", params: { sessionId: "sub", configId: "mode", type: "id", value: "read-only" } });
  agent.send({ jsonrpc: "2.0", id: set.id, result: { configOptions } });
  await setting;
  expect(client.inbox).toEqual([]);
});
