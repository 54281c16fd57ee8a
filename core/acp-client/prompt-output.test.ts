import { expect, test } from "bun:test";
import type { RunResult, SessionUpdate, ToolCallView } from "./client-runner.ts";
import { createPromptOutput, exitCodeFor, jsonLine, type OutputFormat } from "./prompt-output.ts";

function capture(format: OutputFormat, tty = false) {
  const sink = { out: "", err: "" };
  const output = createPromptOutput(
    format,
    { out: (s) => void (sink.out += s), err: (s) => void (sink.err += s), errIsTty: tty, outIsTty: tty },
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
  ok.output.finish({ ...done, sessionId: "s1", numTurns: 2, durationMs: 40, outcome: { kind: "stopped", stopReason: "end_turn", usage: { inputTokens: 3 } } });
  expect(JSON.parse(ok.sink.out)).toEqual({
    sessionId: "s1",
    numTurns: 2,
    durationMs: 40,
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
  expect(exitCodeFor({ kind: "max-turns", limit: 2 })).toBe(5);
  expect(exitCodeFor({ kind: "setting", message: "x" })).toBe(2);
});

const ESC = "\x1b";
const CLIPBOARD = `${ESC}]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07`; // OSC 52: writes the user's clipboard
const TITLE = `${ESC}]0;pwned${ESC}\\`;

/** Everything a terminal would act on, but newline and tab (our own spinner codes excepted by the caller). */
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

test("regression: prompt --output text wrote model text, tool titles and agent stderr to the terminal unfiltered (OSC 52, title, cursor moves, CR overwrite)", () => {
  const { sink, output } = capture("text", true);
  // A sequence split across chunks, as a stream delivers it.
  output.update(chunk(`Done.${CLIPBOARD.slice(0, 9)}`), undefined);
  output.update(chunk(`${CLIPBOARD.slice(9)}${TITLE} All ${ESC}[2A${ESC}[2Jgood.\rrm -rf ~ `), undefined);
  const hostileCall = { ...call, title: `ls${ESC}]0;x\x07${ESC}[1;1H\u009b2J`, status: "completed" };
  output.update({ sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed" }, hostileCall);
  output.agentStderr(`warn: ${ESC}]52;c;ZXZpbA==`);
  output.agentStderr(`${ESC}\\ok\r\n`);
  output.finish({ outcome: { kind: "agent-error", message: `boom${ESC}[31m red`, step: "session/prompt" }, toolCalls: [hostileCall] });
  expect(sink.out).toBe("Done. All good.rm -rf ~ \n");
  const err = sink.err.replace(/\r\x1b\[2K/g, ""); // the spinner's own clear, drawn only on a terminal
  expect(err).not.toMatch(CONTROLS);
  expect(err).toContain("tool dev__shell: ls … completed\n");
  expect(err).toContain("warn: ok\n");
  expect(err).toContain("the agent failed during session/prompt: boom red");
});

test("off a terminal the text is exact (a pipe or a file gets what the agent sent)", () => {
  const { sink, output } = capture("text", false);
  output.update(chunk(`a${ESC}[1mb\r`), undefined);
  output.finish(done);
  expect(sink.out).toBe(`a${ESC}[1mb\r\n`);
});

test("json lines escape C1 controls too: the same document, nothing raw for a terminal", () => {
  const value = { text: "x\u009b2J\u0085y\x7f", n: 1 };
  const line = jsonLine(value);
  expect(line).not.toMatch(CONTROLS);
  expect(JSON.parse(line)).toEqual(value);
  const { sink, output } = capture("stream-json", true);
  output.update(chunk(`${ESC}]52;c;ZXZpbA==\x07\u009d0;t\u009c`), undefined);
  output.finish(done);
  expect(sink.out).not.toMatch(CONTROLS);
  expect(JSON.parse(sink.out.split("\n")[0]!).update.content.text).toBe(`${ESC}]52;c;ZXZpbA==\x07\u009d0;t\u009c`);
});

// Both streams as one terminal or one CI log shows them, in write order.
function interleaved(color: boolean, tty = color) {
  const sink = { all: "", out: "" };
  const output = createPromptOutput("text", {
    out: (s) => void ((sink.all += s), (sink.out += s)),
    err: (s) => void (sink.all += s),
    errIsTty: false,
    outIsTty: tty,
    color,
  });
  return { sink, output };
}

test("regression: agent text and a tool line ran together on one line (…first.tool dev__shell)", () => {
  const { sink, output } = interleaved(false);
  output.update(chunk("I will run the check first."), undefined);
  output.update(toolUpdate, call);
  output.update(chunk("It failed."), undefined);
  output.finish(done);
  expect(sink.all).toBe("I will run the check first.\ntool dev__shell: npm test … failed\nIt failed.\n");
  expect(sink.out).toBe("I will run the check first.\nIt failed.\n");
});

test("text: tool lines are dimmed only when colour is on; the answer never is", () => {
  const dim = interleaved(true);
  dim.output.update(chunk("Checking."), undefined);
  dim.output.update(toolUpdate, call);
  dim.output.finish(done);
  expect(dim.sink.all).toBe("Checking.\n\x1b[2mtool dev__shell: npm test … failed\x1b[22m\n");
  expect(dim.sink.out).toBe("Checking.\n");
  const plain = interleaved(false, true);
  plain.output.update(toolUpdate, call);
  plain.output.finish(done);
  expect(plain.sink.all).not.toContain("\x1b[");
});

function captureSchema(format: OutputFormat) {
  const sink = { out: "", err: "" };
  const output = createPromptOutput(
    format,
    { out: (s) => void (sink.out += s), err: (s) => void (sink.err += s), errIsTty: false, outIsTty: false },
    { schema: true },
  );
  return { sink, output };
}

test("--output-schema, text: the answer is not streamed; the document alone is printed, and is what -o keeps", () => {
  const { sink, output } = captureSchema("text");
  output.update(chunk('{"verdict": "maybe"}'), undefined);
  output.schemaRetry(['/verdict: must be equal to one of the allowed values: "a"']);
  output.update(chunk('Here:\n```json\n{"verdict": "a"}\n```'), undefined);
  expect(output.finish({ outcome: { kind: "stopped", stopReason: "end_turn" }, toolCalls: [], structured: { verdict: "a" } })).toBe(0);
  expect(sink.out).toBe('{"verdict":"a"}\n');
  expect(sink.err).toBe('tendril prompt: the answer does not satisfy --output-schema; asking once more:\n  /verdict: must be equal to one of the allowed values: "a"\n');
  expect(output.answer).toBe('{"verdict":"a"}');
});

test("--output-schema, json: `structured` and `cost`; a missed schema is exit 4 with its problems, and -o keeps nothing", () => {
  const ok = captureSchema("json");
  ok.output.update(chunk('{"n": 1}'), undefined);
  ok.output.finish({ outcome: { kind: "stopped", stopReason: "end_turn" }, toolCalls: [], structured: { n: 1 }, cost: { amount: 0.5, currency: "USD" } });
  expect(JSON.parse(ok.sink.out)).toMatchObject({ text: '{"n": 1}', structured: { n: 1 }, cost: { amount: 0.5, currency: "USD" } });
  const bad = captureSchema("json");
  bad.output.update(chunk("no"), undefined);
  expect(bad.output.finish({ outcome: { kind: "schema", problems: ["/n: must be integer"] }, toolCalls: [] })).toBe(4);
  const obj = JSON.parse(bad.sink.out);
  expect(obj).toMatchObject({ stopReason: "end_turn", text: "no", error: "the answer does not satisfy --output-schema, asked twice:\n  /n: must be integer" });
  expect(obj.structured).toBeUndefined();
  expect(bad.output.answer).toBe("");
  expect(exitCodeFor({ kind: "session", message: "x" })).toBe(1);
});
