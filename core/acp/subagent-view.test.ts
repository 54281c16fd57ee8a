// What a replay sends of a parent's record holding a subagent's updates: the parent's own updates as
// they are, the child's under its id (a client with `subagents`) or as the parent call's progress, and
// a closing update for a child's call (it names no child) still the child's.
import { expect, test } from "bun:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { replayUpdates } from "./subagent-view.ts";

const text = (t: string) => ({ type: "text" as const, text: t });
const record = [
  { sessionUpdate: "agent_message_chunk", content: text("delegating") },
  // The announcement: the parent's own, and the title of the child's progress.
  { sessionUpdate: "subagent_update", sessionId: "c1", title: "scan the tree" },
  { sessionUpdate: "tool_call", toolCallId: "p1", title: "task", status: "pending", _meta: { subagentSessionId: "c1" } },
  { sessionUpdate: "session_message_chunk", content: text("child says hi"), _meta: { "tendril/subagent": "c1" } },
  { sessionUpdate: "tool_call", toolCallId: "k1", title: "ls", status: "pending", _meta: { "tendril/subagent": "c1" } },
  // What a load appends for a call left open: no `_meta`, yet the child's.
  { sessionUpdate: "tool_call_update", toolCallId: "k1", status: "failed", content: [{ type: "content", content: text("interrupted") }] },
  { sessionUpdate: "agent_message_chunk", content: text("done") },
] as SessionUpdate[];

function replayed(subagents: boolean): { sessionId?: string; update: unknown }[] {
  const out: { sessionId?: string; update: unknown }[] = [];
  replayUpdates(record, { notices: false, compaction: false, elicitation: [], subagents }, (update, sessionId) => out.push(sessionId === undefined ? { update } : { sessionId, update }));
  return out;
}

test("replay's shortcut for the parent's own updates: a child's updates, and the closing update of its call, are still the child's (subagents shown)", () => {
  expect(replayed(true)).toEqual([
    { update: record[0] },
    { update: record[1] },
    { update: record[2] },
    { sessionId: "c1", update: { sessionUpdate: "session_message_chunk", content: text("child says hi") } },
    { sessionId: "c1", update: { sessionUpdate: "tool_call", toolCallId: "k1", title: "ls", status: "pending" } },
    { sessionId: "c1", update: record[5] },
    { update: record[6] },
  ]);
});

test("replay's shortcut for the parent's own updates: a child's calls are the parent call's progress, its announcement and messages are not shown (subagents not shown)", () => {
  const progress = (status: string) => ({
    update: { sessionUpdate: "tool_call_update", toolCallId: "p1", status: "in_progress", content: [{ type: "content", content: text(`Subagent: scan the tree\n- ls (${status})`) }] },
  });
  expect(replayed(false)).toEqual([{ update: record[0] }, { update: record[2] }, progress("pending"), progress("failed"), { update: record[6] }]);
});
