// The session engine's prompt io, which v1 and v2 both map: one permission asker (the question in the
// version's shape, the answer read back, a cancelled turn or tool call answering "cancelled"), and the
// turn's waits reported once per stretch of open questions.
import { expect, test } from "bun:test";
import type { RequestPermissionResponse, SessionUpdate } from "@agentclientprotocol/sdk";
import type { PermissionAsk } from "../agent/permission-ask.ts";
import type { RpcPeer } from "../wire/rpc-peer.ts";
import type { SessionManager } from "./session-manager.ts";
import { ConnectionSessions, type SessionMapping } from "./connection-sessions.ts";

interface Asked {
  method: string;
  params: Record<string, unknown>;
  signal?: AbortSignal;
  answer: (r: RequestPermissionResponse) => void;
}

function engineWith(mapping: Partial<SessionMapping>) {
  const asked: Asked[] = [];
  const emitted: [string, SessionUpdate][] = [];
  const peer = {
    request: (method: string, params: Record<string, unknown>, signal?: AbortSignal) =>
      new Promise<RequestPermissionResponse>((answer, reject) => {
        asked.push({ method, params, signal, answer });
        signal?.addEventListener("abort", () => reject(new Error("withdrawn")), { once: true });
      }),
  } as unknown as RpcPeer;
  const full: SessionMapping = {
    emit: (id, u) => emitted.push([id, u]),
    permissionParams: (sessionId, toolCall, options) => ({ sessionId, toolCall, options }),
    ...mapping,
  };
  const engine = new ConnectionSessions({} as SessionManager, peer, full, undefined, { notices: false, compaction: false, elicitation: [] });
  return { engine, asked, emitted };
}

const ask = (toolCallId: string): PermissionAsk => ({ toolCallId, title: `run ${toolCallId}`, kind: "execute", rawInput: {}, _meta: { toolName: "dev__shell" } });
const selected = (optionId: string): RequestPermissionResponse => ({ outcome: { outcome: "selected", optionId } });

test("session engine: a permission question goes out in the mapping's shape, pending, and its answer reads back", async () => {
  const { engine, asked } = engineWith({ permissionParams: (sessionId, toolCall, options) => ({ sessionId, subject: { toolCall }, options }) });
  const io = engine.promptIo("s1", new AbortController().signal);
  const answer = io.askPermission({ ...ask("c1"), allowAlways: "Always allow dev__shell" }, new AbortController().signal);
  await Bun.sleep(0);
  expect(asked).toHaveLength(1);
  expect(asked[0]!.method).toBe("session/request_permission");
  expect(asked[0]!.params).toEqual({
    sessionId: "s1",
    subject: { toolCall: { ...ask("c1"), status: "pending" } },
    options: [
      { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
      { optionId: "allow_always", name: "Always allow dev__shell", kind: "allow_always" },
      { optionId: "reject_once", name: "Reject", kind: "reject_once" },
      { optionId: "reject_always", name: "Always reject", kind: "reject_always" },
    ],
  });
  asked[0]!.answer(selected("allow_always"));
  expect(await answer).toBe("allow_always");
});

test("session engine: the turn waits on the user from the first open question to the last answered, reported once each way", async () => {
  const waits: boolean[] = [];
  const { engine, asked } = engineWith({ waiting: (_id, w) => waits.push(w) });
  const io = engine.promptIo("s1", new AbortController().signal);
  const turn = new AbortController().signal;
  const one = io.askPermission(ask("c1"), turn);
  const two = io.askPermission(ask("c2"), turn);
  await Bun.sleep(0);
  expect(waits).toEqual([true]);
  asked[0]!.answer(selected("allow_once"));
  expect(await one).toBe("allow_once");
  expect(waits).toEqual([true]);
  asked[1]!.answer(selected("reject_once"));
  expect(await two).toBe("reject_once");
  expect(waits).toEqual([true, false]);
});

test("session engine: a cancelled turn is answered cancelled unasked; a tool call's own cancel withdraws its open question", async () => {
  const calls = new Map<string, AbortController>();
  const { engine, asked } = engineWith({ toolCallSignal: (_id, callId) => (calls.get(callId) ?? calls.set(callId, new AbortController()).get(callId)!).signal });
  const io = engine.promptIo("s1", new AbortController().signal);
  const ended = new AbortController();
  ended.abort();
  expect(await io.askPermission(ask("c0"), ended.signal)).toBe("cancelled");
  expect(asked).toHaveLength(0);
  const open = io.askPermission(ask("c1"), new AbortController().signal);
  await Bun.sleep(0);
  expect(asked).toHaveLength(1);
  calls.get("c1")!.abort();
  expect(await open).toBe("cancelled");
  expect(asked[0]!.signal?.aborted).toBe(true);
});

test("session engine: a subagent's io speaks under the child's id on the same connection", () => {
  const { engine, emitted } = engineWith({});
  const io = engine.promptIo("parent", new AbortController().signal);
  const child = io.forSession!("child");
  child.emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } });
  io.emit({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "yo" } });
  expect(emitted.map(([id]) => id)).toEqual(["child", "parent"]);
});
