// Steering and subagents through a conductor (SPEC §3.10, §4.1): `_session/steering` is an extension
// method the conductor knows nothing about; it is relayed to the agent as is and its answer comes back,
// so a turn behind a chain is steered like one without; a subagent's updates under its own session id
// (a session the client never opened) reach the client too. The agent is the real ACP surface in
// memory (a scripted provider, stand-in tools), the chain the real router. No processes.
import { expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { Chain } from "../core/conductor/router.ts";
import { serveAgent } from "../core/acp/agent-server.ts";
import { SessionManager } from "../core/acp/session-manager.ts";
import { bytePipe } from "../core/wire/byte-pipe.ts";
import { loadLimits } from "../core/limits.ts";
import { memoryPeer } from "./memory-hop.ts";
import { scriptedProvider, standInPool } from "./in-memory.ts";

/** The real agent behind a one-component chain: the client's end, and what the provider was asked. */
function chained(provider: ReturnType<typeof scriptedProvider>) {
  const limits = loadLimits({});
  const sessions = new SessionManager({ pool: standInPool(), provider, model: "m", maxTokens: 1000, contextWindow: 100_000, mode: "yolo", rules: [], limits });
  const toAgent = bytePipe();
  const fromAgent = bytePipe();
  const agent = serveAgent({ input: toAgent.input, sink: fromAgent.sink, maxLineBytes: limits.MAX_LINE_BYTES }, { version: "t", sessions, mcpCapabilities: { http: false, sse: false }, persistent: false });
  const client = memoryPeer();
  new Chain({ mode: "agent", client: client.io, components: [{ input: fromAgent.input, sink: toAgent.sink }], maxLineBytes: limits.MAX_LINE_BYTES });
  const seen: any[] = [];
  const answer = async (id: number) => {
    for (let i = 0; i < 200; i++) {
      const m = await client.next(5000);
      if (m.id === id && m.method === undefined) return m;
      seen.push(m);
    }
    throw new Error(`no answer to ${id}`);
  };
  const close = async () => {
    await sessions.closeAll();
    agent.close();
    client.close();
  };
  return { client, seen, answer, close };
}

test("a subagent's updates under its own session id pass through the conductor to a client that shows subagents", async () => {
  const provider = scriptedProvider([{ calls: [{ id: "t1", name: "agent__task", input: { description: "d", prompt: "p" } }] }, { text: "child answer" }, { text: "done" }]);
  const { client, seen, answer, close } = chained(provider);
  client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: { subagents: {} } } });
  await answer(1);
  client.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: tmpdir(), mcpServers: [] } });
  const sessionId = (await answer(2)).result.sessionId;
  client.send({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "go" }] } });
  expect((await answer(3)).result.stopReason).toBe("end_turn");
  const announced = seen.find((m) => m.params?.update?.sessionUpdate === "subagent_update");
  const child = announced.params.update.sessionId;
  expect(seen.some((m) => m.params?.sessionId === child && m.params.update.sessionUpdate === "agent_message_chunk" && m.params.update.content.text === "child answer")).toBe(true);
  await close();
});

test("_session/steering is relayed by the conductor: answered at once, heard by the model after the tool result", async () => {
  const provider = scriptedProvider([{ calls: [{ id: "slow", name: "t__sleep", input: { ms: 400 } }] }, { text: "steered" }]);
  const { client, seen, answer, close } = chained(provider);
  client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
  const init = (await answer(1)).result;
  expect(init._meta.steering.supported).toBe(true);
  expect(init.agentCapabilities._meta.steering.supported).toBe(true);
  client.send({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: tmpdir(), mcpServers: [] } });
  const sessionId = (await answer(2)).result.sessionId;
  client.send({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "go" }] } });
  for (let i = 0; i < 50 && !seen.some((m) => m.params?.update?.status === "in_progress"); i++) seen.push(await client.next(5000));
  client.send({ jsonrpc: "2.0", id: 4, method: "_session/steering", params: { sessionId, prompt: [{ type: "text", text: "steer this way" }] } });
  expect((await answer(4)).result).toEqual({ outcome: "injected" });
  expect(provider.requests.length).toBe(1);
  expect((await answer(3)).result.stopReason).toBe("end_turn");
  expect(provider.requests[1]!.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: "steer this way" }] });
  expect(seen.some((m) => m.params?.update?.sessionUpdate === "user_message_chunk" && m.params.update.content.text === "steer this way")).toBe(true);
  // An unknown session's refusal comes back through the chain with its code.
  client.send({ jsonrpc: "2.0", id: 5, method: "_session/steering", params: { sessionId: "nope", prompt: [{ type: "text", text: "x" }] } });
  expect((await answer(5)).error.code).toBe(-32002);
  await close();
});
