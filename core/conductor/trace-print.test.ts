import { expect, test } from "bun:test";
import { printTrace } from "./trace-print.ts";
import { stepsOf, summarize } from "./trace-steps.ts";
import type { TraceRecord } from "./trace.ts";

const rec = (t: number, hop: TraceRecord["hop"], dir: TraceRecord["dir"], message: any): TraceRecord => ({ t, hop, dir, message });

const TRACE: TraceRecord[] = [
  rec(1, "client", "in", { jsonrpc: "2.0", id: 5, method: "session/prompt", params: { sessionId: "a", prompt: [{ type: "text", text: "hi there" }] } }),
  rec(1.1, 0, "out", { jsonrpc: "2.0", id: 0, method: "session/prompt", params: { sessionId: "a", prompt: [{ type: "text", text: "hi there" }] } }),
  rec(2, 0, "in", { jsonrpc: "2.0", method: "session/update", params: { sessionId: "a", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "yo" } } } }),
  rec(2.1, "client", "out", { jsonrpc: "2.0", method: "session/update", params: { sessionId: "a", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "yo" } } } }),
  rec(2.5, 0, "in", { jsonrpc: "2.0", method: "session/update", params: { sessionId: "b", update: { sessionUpdate: "plan" } } }),
  rec(2.6, "client", "out", { jsonrpc: "2.0", method: "session/update", params: { sessionId: "b", update: { sessionUpdate: "plan" } } }),
  rec(3, 0, "in", { jsonrpc: "2.0", id: 0, result: { stopReason: "end_turn" } }),
  rec(3.2, "client", "out", { jsonrpc: "2.0", id: 5, result: { stopReason: "end_turn" } }),
];

test("one arrow per routed message, answers named after their request with the time they took", () => {
  const lines = printTrace(TRACE).trimEnd().split("\n");
  expect(lines[0]).toMatch(/t ms\s+client\s+conductor\s+#0/);
  expect(lines).toHaveLength(5);
  expect(lines[1]).toMatch(/1\.00  ●─+▶  session\/prompt #5  "hi there"$/);
  expect(lines[2]).toContain("◀");
  expect(lines[2]).toContain('agent_message_chunk "yo"');
  expect(lines[4]).toContain("↩ session/prompt  stopReason=end_turn  (2.00 ms)");
});

test("lanes carry the components' names when the trace names them, cut to the lane's width", () => {
  const header = printTrace(TRACE, { components: ["a-very-long-proxy-name.ts"] }).split("\n")[0]!;
  expect(header).toMatch(/client\s+conductor\s+#0 a-very-l$/);
  expect(printTrace(TRACE).split("\n")[0]).toMatch(/conductor\s+#0$/);
});

test("filters by session and method glob keep the matching requests' answers; colour only when asked", () => {
  const a = printTrace(TRACE, { session: "a" });
  expect(a).not.toContain("plan");
  expect(a).toContain("↩ session/prompt");
  const m = printTrace(TRACE, { method: "session/update" });
  expect(m).not.toContain("session/prompt");
  expect(m).toContain("plan");
  expect(printTrace(TRACE)).not.toContain("\x1b[");
  expect(printTrace(TRACE, { color: true })).toContain("\x1b[36m");
});

test("summaries are short and say what matters", () => {
  expect(summarize({ id: 1, error: { code: -32603, message: "boom" } })).toBe("-32603 boom");
  expect(summarize({ method: "session/request_permission", params: { toolCall: { title: "rm -rf" } } })).toBe('tool "rm -rf"');
  expect(summarize({ method: "x", params: { text: "y".repeat(500) } }).length).toBeLessThan(80);
});

// What an agent, a model or a tool sent is printed without its terminal controls: a trace is read on a terminal.
test("a trace's escape sequences (title set, clipboard write, cursor moves) never reach the terminal", () => {
  const hostile = "\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[Hok\r\u009b31m";
  const trace: TraceRecord[] = [
    rec(1, 0, "in", { jsonrpc: "2.0", method: "session/update", params: { sessionId: hostile, update: { sessionUpdate: `x${hostile}`, title: hostile } } }),
    rec(1.1, "client", "out", { jsonrpc: "2.0", method: "session/update", params: { sessionId: hostile, update: { sessionUpdate: `x${hostile}`, title: hostile } } }),
    rec(2, 0, "in", { jsonrpc: "2.0", id: 1, error: { code: -32603, message: hostile } }),
    rec(2.1, "client", "out", { jsonrpc: "2.0", id: 1, error: { code: -32603, message: hostile } }),
  ];
  const printed = printTrace(trace, { components: [`agent${hostile}`] });
  expect(printed).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  expect(printed).toContain("ok");
  const coloured = printTrace(trace, { color: true });
  // only the printer's own colours remain
  expect(coloured.replace(/\x1b\[(?:36|32|31|2|0)m/g, "")).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
});

test("a batch in a trace is one arrow, labelled with its size", () => {
  const batch = [
    { jsonrpc: "2.0", id: 1, method: "_x/a" },
    { jsonrpc: "2.0", method: "_x/b" },
  ];
  const out = printTrace([rec(1, "client", "in", batch), rec(2, 0, "out", batch)]);
  expect(out).toContain("batch of 2");
  expect(out.split("\n").filter((l) => l.includes("batch of 2"))).toHaveLength(1);
});

// One owner for pairing: the diagram is drawn from the page's steps, so both read a trace the same way.
test("the printed diagram and the page's steps are the same steps: one line each, same lanes, method, id and time taken", () => {
  const steps = stepsOf(TRACE);
  const lines = printTrace(TRACE).trimEnd().split("\n").slice(1);
  expect(lines).toHaveLength(steps.length);
  const lanes = ["client", "conductor", 0];
  steps.forEach((s, i) => {
    const line = lines[i]!;
    const arrow = line.slice(11, 11 + 2 * 12 + 1);
    expect(arrow.indexOf("●")).toBe(lanes.indexOf(s.from) * 12);
    expect(arrow.search(/[▶◀]/)).toBe(lanes.indexOf(s.to) * 12);
    expect(line).toContain(s.kind === "res" ? `↩ ${s.method}` : `${s.method}${s.id !== undefined ? ` #${s.id}` : ""}`);
    expect(line).toContain(s.summary);
    if (s.took !== undefined) expect(line).toEndWith(`(${s.took.toFixed(2)} ms)`);
  });
  expect(steps.filter((s) => s.took !== undefined)).toHaveLength(1);
});

// A v2 turn ends with a state_update, not a prompt answer: its line must say which state (and why idle).
test("a v2 state_update's line shows its state, and for idle its stop reason or error", () => {
  const su = (update: Record<string, unknown>) => ({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "v2", update: { sessionUpdate: "state_update", ...update } } });
  expect(summarize(su({ state: "running" }))).toBe("state_update running");
  expect(summarize(su({ state: "requires_action" }))).toBe("state_update requires_action");
  expect(summarize(su({ state: "idle", stopReason: "end_turn" }))).toBe("state_update idle (end_turn)");
  expect(summarize(su({ state: "idle" }))).toBe("state_update idle");
  expect(summarize(su({ state: "idle", stopReason: "error", error: { code: -32603, message: "model unreachable" } }))).toBe("state_update idle (error: -32603 model unreachable)");
  const printed = printTrace([rec(1, 0, "in", su({ state: "idle", stopReason: "cancelled" })), rec(1.1, "client", "out", su({ state: "idle", stopReason: "cancelled" }))]);
  expect(printed).toContain("session/update  state_update idle (cancelled)");
});
