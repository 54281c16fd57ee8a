// A live terminal's text across updates: a UTF-8 character split between two chunks arrives whole in
// the later update, and a byte-order mark the command printed is shown, not eaten.
import { expect, test } from "bun:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { LiveTerminal } from "./live-terminal.ts";

function terminal(): { term: LiveTerminal; data: () => string[] } {
  const sent: SessionUpdate[] = [];
  const show = { key: "terminal_output" as const, flushMs: 0, maxBytes: 1 << 16, send: (u: SessionUpdate) => void sent.push(u), record: () => {} };
  const term = new LiveTerminal("call-1", show, "/tmp");
  const data = () => sent.map((u) => ((u as { _meta: Record<string, { data: string }> })._meta.terminal_output!.data));
  return { term, data };
}

const tick = () => new Promise((r) => setTimeout(r, 5));
const plain = { sessionUpdate: "tool_call_update", toolCallId: "call-1" } as SessionUpdate;

test("a character split across two output chunks is shown whole, in the later update", async () => {
  const { term, data } = terminal();
  const e = new TextEncoder().encode("é€"); // 2 + 3 bytes
  term.push(e.subarray(0, 1));
  await tick();
  term.push(e.subarray(1, 3));
  await tick();
  term.push(e.subarray(3));
  term.finish(plain, { code: 0, signal: null });
  expect(data()).toEqual(["", "é", "€"]);
});

test("a byte-order mark at the start of the output is shown, not eaten", async () => {
  const { term, data } = terminal();
  term.push(new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69]));
  term.finish(plain, { code: 0, signal: null });
  expect(data()).toEqual(["\ufeffhi"]);
});

test("the terminal's exit carries the signal that ended the command, and null when none did", () => {
  const ended = (signal: string | null) => (terminal().term.finish(plain, { code: signal ? 143 : 0, signal }) as { _meta?: { terminal_exit?: unknown } })._meta?.terminal_exit;
  expect(ended("SIGTERM")).toMatchObject({ exit_code: 143, signal: "SIGTERM" });
  expect(ended(null)).toMatchObject({ exit_code: 0, signal: null });
});
