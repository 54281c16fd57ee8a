import { expect, test } from "bun:test";
import type { RunResult, SessionUpdate, ToolCallView } from "./client-runner.ts";
import { createPromptOutput, exitCodeFor, type OutputFormat } from "./prompt-output.ts";

function capture(format: OutputFormat) {
  const sink = { out: "", err: "" };
  const output = createPromptOutput(
    format,
    { out: (s) => void (sink.out += s), err: (s) => void (sink.err += s), errIsTty: false, outIsTty: false },
    { timeoutS: 5 },
  );
  return { sink, output };
}

const chunk = (text: string): SessionUpdate => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
const call: ToolCallView = { id: "c1", title: "npm test", kind: "execute", status: "failed", name: "dev__shell", rawInput: { command: "npm test" } };
const toolUpdate: SessionUpdate = { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "failed" };
const done: RunResult = { outcome: { kind: "stopped", stopReason: "end_turn" }, toolCalls: [call] };

test("text: answer on stdout with a paragraph break around tool calls; one tool line on stderr", () => {
  const { sink, output } = capture("text");
  output.update(chunk("Let me run it."), undefined);
  output.permission(call, false, "denied by policy.toml rules[0]");
  output.update(toolUpdate, call);
  output.update(chunk("It failed."), undefined);
  expect(output.finish(done)).toBe(0);
  expect(sink.out).toBe("Let me run it.\nIt failed.\n");
  expect(sink.err).toBe("tool dev__shell: npm test … failed (denied by policy.toml rules[0])\n");
});

test("text: tool calls still open at the end get their line too", () => {
  const { sink, output } = capture("text");
  const open = { ...call, status: "in_progress" };
  output.update({ sessionUpdate: "tool_call", toolCallId: "c1", title: "npm test" }, open);
  expect(output.finish({ outcome: { kind: "timeout" }, toolCalls: [open] })).toBe(124);
  expect(sink.err).toBe("tool dev__shell: npm test … in_progress\ntendril prompt: timed out after 5 s; the agent was cancelled and stopped (raise --timeout to wait longer)\n");
});

test("json: one object; failures carry stopReason null and the error text", () => {
  const ok = capture("json");
  ok.output.update(chunk("hi"), undefined);
  ok.output.finish({ ...done, outcome: { kind: "stopped", stopReason: "end_turn", usage: { inputTokens: 3 } } });
  expect(JSON.parse(ok.sink.out)).toEqual({
    stopReason: "end_turn",
    text: "hi",
    toolCalls: [{ id: "c1", title: "npm test", kind: "execute", status: "failed", rawInput: { command: "npm test" } }],
    usage: { inputTokens: 3 },
  });
  const bad = capture("json");
  expect(bad.output.finish({ outcome: { kind: "died", message: "the agent exited with code 1 before answering", stderrTail: [] }, toolCalls: [] })).toBe(1);
  expect(JSON.parse(bad.sink.out)).toMatchObject({ stopReason: null, text: "", error: expect.stringContaining("wrote nothing on stderr") });
});

test("stream-json: one line per update and permission, result last", () => {
  const { sink, output } = capture("stream-json");
  output.update(chunk("a"), undefined);
  output.permission(call, true, "--approve all");
  output.finish({ outcome: { kind: "stopped", stopReason: "refusal" }, toolCalls: [] });
  const lines = sink.out.trim().split("\n").map((l) => JSON.parse(l));
  expect(lines.map((l) => l.type)).toEqual(["session_update", "permission", "result"]);
  expect(lines[2]).toMatchObject({ stopReason: "refusal", text: "a" });
  expect(sink.err).toContain("stopped with refusal");
});

test("exit codes", () => {
  expect(exitCodeFor({ kind: "stopped", stopReason: "end_turn" })).toBe(0);
  expect(exitCodeFor({ kind: "stopped", stopReason: "max_tokens" })).toBe(3);
  expect(exitCodeFor({ kind: "stopped", stopReason: "cancelled" })).toBe(3);
  expect(exitCodeFor({ kind: "agent-error", message: "x", step: "session/prompt" })).toBe(1);
  expect(exitCodeFor({ kind: "died", message: "x", stderrTail: [] })).toBe(1);
  expect(exitCodeFor({ kind: "timeout" })).toBe(124);
  expect(exitCodeFor({ kind: "interrupted" })).toBe(130);
});
