// What the recorder writes: each update as the client saw it when it was sent, even when its sender
// changes the object afterwards (a non-chunk update is serialized when recorded, not copied), and
// consecutive text chunks merged into one line.
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { SessionFile } from "../agent/session-store.ts";
import { SessionRecorder } from "./session-recorder.ts";

test("a recorded update is written as it was when sent, though its sender changes it later; chunks still merge", () => {
  const dir = mkdtempSync(join(tmpdir(), "tendril-recorder-"));
  try {
    const file = new SessionFile(join(dir, "s.jsonl"));
    const rec = new SessionRecorder(file, [], true);
    const start = { sessionUpdate: "tool_call", toolCallId: "c1", title: "echo", status: "pending", rawInput: { text: "x" } } as SessionUpdate & { status: string; rawInput: { text: string } };
    rec.update(start);
    start.status = "failed";
    start.rawInput.text = "changed";
    rec.update({ sessionUpdate: "agent_message_chunk", messageId: "m", content: { type: "text", text: "a" } });
    rec.update({ sessionUpdate: "agent_message_chunk", messageId: "m", content: { type: "text", text: "b" } });
    rec.update({ sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed" });
    file.close();
    const updates = readFileSync(join(dir, "s.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l).update);
    expect(updates).toEqual([
      { sessionUpdate: "tool_call", toolCallId: "c1", title: "echo", status: "pending", rawInput: { text: "x" } },
      { sessionUpdate: "agent_message_chunk", messageId: "m", content: { type: "text", text: "ab" } },
      { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed" },
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
