import { expect, test } from "bun:test";
import { Chain, type Hop } from "./router.ts";
import { type MemoryPeer, memoryPeer } from "../../tests/memory-hop.ts";
import type { Dialect } from "./dialect.ts";

const MAX = 1024 * 1024;

/** A pass-through proxy on a memory hop that speaks only `dialect` (answers -32601 to the others). */
function passThrough(peer: MemoryPeer, dialect: Dialect, rewrite?: (m: any) => any): void {
  const initMethod = dialect === "proxy" ? "proxy/initialize" : dialect === "underscore" ? "_proxy/initialize" : "initialize";
  const wrapMethods = dialect === "proxy" ? ["proxy/successor"] : dialect === "underscore" ? ["_proxy/successor"] : ["_proxy/successor/request", "_proxy/successor/notification"];
  const wrap = (inner: any, isRequest: boolean) =>
    dialect === "sacp" ? (isRequest ? wrapMethods[0]! : wrapMethods[1]!) : wrapMethods[0]!;
  let nextId = 1000;
  const pending = new Map<number, any>();
  const pump = async () => {
    for (;;) {
      let m: any;
      try {
        m = await peer.next(5000);
      } catch {
        return;
      }
      if (m.method === undefined) {
        const back = pending.get(m.id);
        pending.delete(m.id);
        peer.send({ ...m, id: back });
        continue;
      }
      const isRequest = m.id !== undefined;
      const fromSuccessor = wrapMethods.includes(m.method);
      if (!fromSuccessor && m.method.includes("initialize") && m.method !== initMethod) {
        peer.send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
        continue;
      }
      if (dialect === "sacp" && m.method === "initialize" && m.params?._meta?.proxy !== true) {
        peer.send({ jsonrpc: "2.0", id: m.id, error: { code: -32600, message: "not a proxy initialize" } });
        continue;
      }
      const out: any = { jsonrpc: "2.0" };
      if (fromSuccessor) {
        Object.assign(out, { method: m.params.method, params: rewrite ? rewrite(m.params.params) : m.params.params });
      } else {
        const method = m.method === initMethod ? "initialize" : m.method;
        Object.assign(out, { method: wrap(m, isRequest), params: { method, params: m.params } });
      }
      if (isRequest) {
        out.id = nextId++;
        pending.set(out.id, m.id);
      }
      peer.send(out);
    }
  };
  void pump();
}

function chain(n: number, mode: "agent" | "proxy" = "agent", trace?: (hop: Hop, dir: string, m: unknown) => void) {
  const client = memoryPeer();
  const comps = Array.from({ length: n }, () => memoryPeer());
  const c = new Chain({ mode, client: client.io, components: comps.map((p) => p.io), maxLineBytes: MAX, trace });
  return { chain: c, client, comps };
}

test("initialize reaches a proxy as proxy/initialize and the agent as plain initialize; ids map back", async () => {
  const { client, comps } = chain(2);
  passThrough(comps[0]!, "proxy");
  client.send({ jsonrpc: "2.0", id: 7, method: "initialize", params: { protocolVersion: 1, x: 1 } });
  const atAgent = await comps[1]!.next();
  expect(atAgent.method).toBe("initialize");
  expect(atAgent.params).toEqual({ protocolVersion: 1, x: 1 });
  comps[1]!.send({ jsonrpc: "2.0", id: atAgent.id, result: { protocolVersion: 1, extra: "kept" } });
  expect(await client.next()).toEqual({ jsonrpc: "2.0", id: 7, result: { protocolVersion: 1, extra: "kept" } });
});

for (const dialect of ["underscore", "sacp"] as const) {
  test(`a proxy answering -32601 is retried until it speaks: ${dialect}`, async () => {
    const { client, comps } = chain(2);
    passThrough(comps[0]!, dialect);
    client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    const atAgent = await comps[1]!.next();
    expect(atAgent.method).toBe("initialize");
    expect(atAgent.params._meta).toBeUndefined();
    comps[1]!.send({ jsonrpc: "2.0", id: atAgent.id, result: { ok: true } });
    expect((await client.next()).result).toEqual({ ok: true });
    // later traffic uses the learned dialect in both directions
    client.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/", mcpServers: [], unknown: { k: 1 } } });
    const sn = await comps[1]!.next();
    expect(sn.params.unknown).toEqual({ k: 1 });
    comps[1]!.send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "_vendor_x", v: 1 } } });
    comps[1]!.send({ jsonrpc: "2.0", id: sn.id, result: { sessionId: "s" } });
    expect((await client.next()).params.update).toEqual({ sessionUpdate: "_vendor_x", v: 1 });
    expect(await client.next()).toEqual({ jsonrpc: "2.0", id: 2, result: { sessionId: "s" } });
  });
}

test("requests from the agent reach the client through every proxy and the answer comes back", async () => {
  const { client, comps } = chain(3);
  passThrough(comps[0]!, "proxy");
  passThrough(comps[1]!, "underscore");
  client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} });
  const init = await comps[2]!.next();
  comps[2]!.send({ jsonrpc: "2.0", id: init.id, result: {} });
  await client.next();
  comps[2]!.send({ jsonrpc: "2.0", id: 0, method: "session/request_permission", params: { sessionId: "s", options: [] } });
  const req = await client.next();
  expect(req.method).toBe("session/request_permission");
  client.send({ jsonrpc: "2.0", id: req.id, result: { outcome: { outcome: "selected", optionId: "a" } } });
  expect(await comps[2]!.next()).toEqual({ jsonrpc: "2.0", id: 0, result: { outcome: { outcome: "selected", optionId: "a" } } });
});

test("updates sent before a response arrive before it, through two proxies, 1000 of them", async () => {
  const { client, comps } = chain(3);
  passThrough(comps[0]!, "proxy");
  passThrough(comps[1]!, "sacp");
  client.send({ jsonrpc: "2.0", id: 5, method: "session/prompt", params: { sessionId: "s", prompt: [] } });
  const prompt = await comps[2]!.next();
  for (let i = 0; i < 1000; i++) {
    comps[2]!.send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", i } });
  }
  comps[2]!.send({ jsonrpc: "2.0", id: prompt.id, result: { stopReason: "end_turn" } });
  for (let i = 0; i < 1000; i++) expect((await client.next()).params.i).toBe(i);
  expect((await client.next()).result).toEqual({ stopReason: "end_turn" });
});

test("$/cancel_request is translated to each hop's id, never forwarded verbatim", async () => {
  const { client, comps } = chain(1);
  client.send({ jsonrpc: "2.0", id: 40, method: "session/prompt", params: {} });
  client.send({ jsonrpc: "2.0", id: 41, method: "session/prompt", params: {} });
  const a = await comps[0]!.next();
  const b = await comps[0]!.next();
  client.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 41 } });
  client.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 999 } });
  expect(await comps[0]!.next()).toEqual({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: b.id } });
  expect(a.id).not.toBe(b.id);
  comps[0]!.send({ jsonrpc: "2.0", id: 0, method: "x", params: {} }); // ids of each direction are separate
  expect((await client.next()).id).toBe(0);
  expect(comps[0]!.inbox).toEqual([]);
});

test("proxy mode: the last component's successor is reached through the client, wrapped in the client's dialect", async () => {
  const { client, comps } = chain(1, "proxy");
  passThrough(comps[0]!, "proxy");
  client.send({ jsonrpc: "2.0", id: 1, method: "_proxy/initialize", params: { protocolVersion: 1 } });
  const up = await client.next();
  expect(up.method).toBe("_proxy/successor");
  expect(up.params).toEqual({ method: "initialize", params: { protocolVersion: 1 } });
  client.send({ jsonrpc: "2.0", id: up.id, result: { protocolVersion: 1 } });
  expect(await client.next()).toEqual({ jsonrpc: "2.0", id: 1, result: { protocolVersion: 1 } });
  // a message from our successor arrives wrapped and reaches the proxy's predecessor unwrapped
  client.send({ jsonrpc: "2.0", method: "_proxy/successor", params: { method: "session/update", params: { n: 1 } } });
  expect(await client.next()).toEqual({ jsonrpc: "2.0", method: "session/update", params: { n: 1 } });
});

test("a proxy that rewrites what passes keeps everything else untouched", async () => {
  const { client, comps } = chain(2);
  passThrough(comps[0]!, "proxy", (p) => ({ ...p, update: { ...p.update, content: { type: "text", text: p.update.content.text.toUpperCase() } } }));
  comps[1]!.send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } } } });
  expect((await client.next()).params.update.content.text).toBe("HI");
});

test("a component that ends or writes garbage ends the chain naming its hop; pending client requests can be failed", async () => {
  const { chain: c, client, comps } = chain(2);
  passThrough(comps[0]!, "proxy");
  client.send({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: {} });
  await comps[1]!.next();
  comps[1]!.raw("this is not json\n");
  const end = await c.ended;
  expect(end.hop).toBe(1);
  expect(end.end.reason).toBe("garbage");
  c.failPending("agent died");
  expect(await client.next()).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32603, message: "agent died" } });
});

test("malformed client lines are answered and the chain goes on; every hop is traced", async () => {
  const seen: [Hop, string][] = [];
  const { client, comps } = chain(1, "agent", (hop, dir) => seen.push([hop, dir]));
  client.raw("{oops\n");
  expect((await client.next()).error.code).toBe(-32700);
  client.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } });
  expect((await comps[0]!.next()).method).toBe("session/cancel");
  expect(seen).toContainEqual(["client", "in"]);
  expect(seen).toContainEqual([0, "out"]);
});

test("a hop that stops reading ends the chain once MAX_HOP_QUEUE_BYTES wait for it", async () => {
  const agent = memoryPeer();
  const client = memoryPeer();
  const stuck = { input: client.io.input, sink: { write: () => new Promise<void>(() => {}) } };
  const c = new Chain({ mode: "agent", client: stuck, components: [agent.io], maxLineBytes: MAX, maxQueuedBytes: 2000 });
  for (let i = 0; i < 60; i++) {
    agent.send({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", n: i, pad: "x".repeat(50) } });
    await Bun.sleep(0);
  }
  const end = await c.ended;
  expect(end.hop).toBe("client");
  expect(end.end.reason).toBe("stalled");
});

test("a chain that is a proxy inside a sacp conductor answers its initialize with _meta.proxy; inner hops never see the marker", async () => {
  const { client, comps } = chain(1, "proxy");
  passThrough(comps[0]!, "proxy");
  client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, _meta: { proxy: true } } });
  const up = await client.next();
  expect(up.method).toBe("_proxy/successor/request");
  expect(up.params).toEqual({ method: "initialize", params: { protocolVersion: 1 } });
  client.send({ jsonrpc: "2.0", id: up.id, result: { protocolVersion: 1 } });
  expect(await client.next()).toEqual({ jsonrpc: "2.0", id: 1, result: { protocolVersion: 1, _meta: { proxy: true } } });
});

test("a $/cancel_request a proxy wraps for its successor is dropped: its id belongs to another hop", async () => {
  const { comps } = chain(2);
  comps[0]!.send({ jsonrpc: "2.0", method: "proxy/successor", params: { method: "$/cancel_request", params: { requestId: 0 } } });
  comps[0]!.send({ jsonrpc: "2.0", method: "proxy/successor", params: { method: "session/cancel", params: { sessionId: "s" } } });
  expect(await comps[1]!.next()).toEqual({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } });
});

test("a proxy that speaks no dialect: the client gets its last answer to initialize", async () => {
  const { client, comps } = chain(2);
  client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} });
  for (const method of ["proxy/initialize", "_proxy/initialize", "initialize"]) {
    const m = await comps[0]!.next();
    expect(m.method).toBe(method);
    comps[0]!.send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `Method not found: ${method}` } });
  }
  expect(await client.next()).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32601, message: "Method not found: initialize" } });
  expect(comps[0]!.inbox).toEqual([]);
});

test("ACP versions: a proxy that answers before its successor does, in another version, gets the refusal for its successor's answer", async () => {
  const client = memoryPeer();
  const proxy = memoryPeer();
  const agent = memoryPeer();
  new Chain({ mode: "agent", client: client.io, components: [proxy.io, agent.io], maxLineBytes: MAX, names: ["eager.ts", "agent"] });
  client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 2 } });
  const init = await proxy.next();
  expect(init).toMatchObject({ method: "proxy/initialize", params: { protocolVersion: 2 } });
  // the proxy answers at once (1), then initializes its successor, which answers 2
  proxy.send({ jsonrpc: "2.0", id: init.id, result: { protocolVersion: 1 } });
  expect((await client.next()).result).toEqual({ protocolVersion: 1 });
  proxy.send({ jsonrpc: "2.0", id: 7, method: "proxy/successor", params: { method: "initialize", params: { protocolVersion: 2 } } });
  const down = await agent.next();
  agent.send({ jsonrpc: "2.0", id: down.id, result: { protocolVersion: 2 } });
  const refused = await proxy.next();
  expect(refused.id).toBe(7);
  expect(refused.error.message).toContain("component 1 (eager.ts) answered protocolVersion 1, its successor component 2 (agent) answered 2");
  // and the client's later requests are refused the same way
  client.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "/", mcpServers: [] } });
  expect((await client.next()).error.message).toBe(refused.error.message);
  expect(proxy.inbox).toEqual([]);
});

test("ACP versions: a chain that is itself a proxy checks its last component against its successor (reached through the client hop)", async () => {
  const client = memoryPeer();
  const proxy = memoryPeer();
  new Chain({ mode: "proxy", client: client.io, components: [proxy.io], maxLineBytes: MAX, names: ["inner.ts"] });
  client.send({ jsonrpc: "2.0", id: 1, method: "proxy/initialize", params: { protocolVersion: 2 } });
  const init = await proxy.next();
  proxy.send({ jsonrpc: "2.0", id: 50, method: "proxy/successor", params: { method: "initialize", params: { protocolVersion: 2 } } });
  const up = await client.next();
  expect(up).toMatchObject({ method: "proxy/successor", params: { method: "initialize", params: { protocolVersion: 2 } } });
  client.send({ jsonrpc: "2.0", id: up.id, result: { protocolVersion: 2 } });
  expect((await proxy.next()).result).toEqual({ protocolVersion: 2 });
  proxy.send({ jsonrpc: "2.0", id: init.id, result: { protocolVersion: 1 } });
  const refused = await client.next();
  expect(refused.id).toBe(1);
  expect(refused.error.message).toContain("component 1 (inner.ts) answered protocolVersion 1, the chain's own successor answered 2");
});

/** A chain of one agent behind an edge that takes `mcp/message` requests and answers each when `answer`
 *  is called for it (or with -32800 once cancelled). */
function edgeChain() {
  const client = memoryPeer();
  const agent = memoryPeer();
  const held = new Map<string, (a: { result: unknown } | { error: { code: number; message: string } }) => void>();
  const cancelled: string[] = [];
  new Chain({
    mode: "agent",
    client: client.io,
    components: [agent.io],
    maxLineBytes: MAX,
    agentEdge: {
      toAgent: (_method, params) => ({ params }),
      takeRequest: (method, params, cancellation) => {
        if (method !== "mcp/message") return undefined;
        const key = (params as { method: string }).method;
        return new Promise((resolve) => {
          held.set(key, resolve);
          cancellation.onCancel(() => (cancelled.push(key), resolve({ error: { code: -32800, message: `${key} was cancelled` } })));
        });
      },
    },
  });
  return { client, agent, held, cancelled };
}

// Regression: `$/cancel_request` for a request the agent edge took (a provider's MCP request to a bridged
// client) was dropped, so the request and its answer waited for ever.
test("$/cancel_request for a request the agent edge took cancels it there, and the -32800 answer comes back", async () => {
  const { client, agent, held, cancelled } = edgeChain();
  client.send({ jsonrpc: "2.0", id: 5, method: "mcp/message", params: { connectionId: "c", method: "elicitation/create" } });
  for (let i = 0; i < 50 && !held.has("elicitation/create"); i++) await Bun.sleep(1);
  expect(held.has("elicitation/create")).toBe(true);
  client.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 5 } });
  expect(await client.next()).toEqual({ jsonrpc: "2.0", id: 5, error: { code: -32800, message: "elicitation/create was cancelled" } });
  expect(cancelled).toEqual(["elicitation/create"]);
  // a late settle after the answer sends nothing more; the agent never saw the request or the cancel
  held.get("elicitation/create")!({ result: {} });
  client.send({ jsonrpc: "2.0", id: 6, method: "_ping", params: {} });
  const ping = await agent.next();
  expect(ping).toMatchObject({ method: "_ping" });
  agent.send({ jsonrpc: "2.0", id: ping.id, result: {} });
  expect(await client.next()).toEqual({ jsonrpc: "2.0", id: 6, result: {} });
  expect(client.inbox).toEqual([]);
});

test("a request the agent edge took inside a batch is answered inside that batch's answer", async () => {
  const { client, agent, held } = edgeChain();
  client.raw(
    JSON.stringify([
      { jsonrpc: "2.0", id: 1, method: "mcp/message", params: { connectionId: "c", method: "roots/list" } },
      { jsonrpc: "2.0", id: 2, method: "_ping", params: {} },
    ]) + "\n",
  );
  // the one entry for the agent reaches it as itself, not as a batch of one
  const atAgent = await agent.next();
  expect(atAgent).toEqual({ jsonrpc: "2.0", id: expect.any(Number), method: "_ping", params: {} });
  agent.send({ jsonrpc: "2.0", id: atAgent.id, result: { pong: true } });
  held.get("roots/list")!({ result: { roots: [] } });
  // one batch with both answers (JSON-RPC leaves their order open)
  const answers = await client.next();
  expect(Array.isArray(answers)).toBe(true);
  expect([...answers].sort((a: { id: number }, b: { id: number }) => a.id - b.id)).toEqual([
    { jsonrpc: "2.0", id: 1, result: { roots: [] } },
    { jsonrpc: "2.0", id: 2, result: { pong: true } },
  ]);
  expect(client.inbox).toEqual([]);
});

test("B3: a client's answer to an agent's question sent inside a batch reaches the agent unbatched; two entries for one hop stay a batch", async () => {
  const { client, comps } = chain(1);
  const agent = comps[0]!;
  agent.send({ jsonrpc: "2.0", id: 9, method: "session/request_permission", params: { sessionId: "s", options: [] } });
  const asked = await client.next();
  expect(asked).toMatchObject({ method: "session/request_permission" });
  client.raw(JSON.stringify([{ jsonrpc: "2.0", id: asked.id, result: { outcome: { outcome: "selected", optionId: "allow" } } }]) + "\n");
  expect(await agent.next()).toEqual({ jsonrpc: "2.0", id: 9, result: { outcome: { outcome: "selected", optionId: "allow" } } });
  // Two entries for the agent: one batch, as the client sent them.
  agent.send({ jsonrpc: "2.0", id: 10, method: "session/request_permission", params: { sessionId: "s", options: [] } });
  const again = await client.next();
  client.raw(JSON.stringify([{ jsonrpc: "2.0", id: again.id, result: { outcome: { outcome: "cancelled" } } }, { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } }]) + "\n");
  expect(await agent.next()).toEqual([
    { jsonrpc: "2.0", id: 10, result: { outcome: { outcome: "cancelled" } } },
    { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } },
  ]);
});
