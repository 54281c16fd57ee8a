import { expect, test } from "bun:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { McpCallResult, McpSessionTools, McpToolInfo } from "../mcp/types.ts";
import { createPolicy } from "../policy/policy.ts";
import { type PermissionAnswer, runToolCalls, type ToolRunContext, trimMiddle } from "./tool-calls.ts";

/** A stand-in tool namespace: `t__sleep {ms}` resolves after ms; `t__fail` returns isError; `t___hook` is a hook. */
function standInTools(log: string[] = []): McpSessionTools {
  const info = (tool: string, hook = false): McpToolInfo => ({
    qualifiedName: `t__${tool}`, server: "t", tool, description: tool, inputSchema: { type: "object" }, readOnly: false, hook,
  });
  const text = (t: string, isError = false): McpCallResult => ({ content: [{ type: "text", text: t }], text: t, isError });
  return {
    tools: () => [info("sleep"), info("fail"), info("_hook", true)],
    instructions: () => ({}),
    onToolsChanged: () => {},
    close: async () => {},
    async call(name, args, opts) {
      log.push(`start ${args.ms ?? name}`);
      if (name === "t__fail") return text("boom", true);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Number(args.ms));
        opts?.signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
      });
      return text(`slept ${args.ms}`);
    },
  };
}

function ctx(over: Partial<ToolRunContext> = {}, answers: PermissionAnswer[] = []): ToolRunContext & { updates: SessionUpdate[] } {
  const updates: SessionUpdate[] = [];
  return {
    tools: standInTools(),
    policy: createPolicy({ mode: "yolo", rules: [], workspace: "/w" }),
    cwd: "/w",
    maxParallel: 8,
    maxResultBytes: 1000,
    maxImageBytes: 1000,
    progressPerS: 1000,
    toolTimeoutMs: 10_000,
    signal: new AbortController().signal,
    emit: (u) => updates.push(u),
    askPermission: async () => answers.shift() ?? "allow_once",
    updates,
    ...over,
  };
}

const sleepCall = (id: string, ms: number) => ({ call: { id, name: "t__sleep", input: { ms } } });
const finals = (us: SessionUpdate[]) =>
  us.filter((u) => u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed")).map((u: any) => u.toolCallId);

test("trimMiddle keeps head and tail within the byte bound, marks the cut, and keeps characters whole", () => {
  const text = "é".repeat(3000) + "END";
  const out = trimMiddle(text, 1000);
  expect(Buffer.byteLength(out)).toBeLessThanOrEqual(1000);
  expect(out).toContain("trimmed from the middle");
  expect(out.endsWith("END")).toBe(true);
  expect(out).not.toContain("\uFFFD");
  expect(trimMiddle("short", 1000)).toBe("short");
});

test("calls run concurrently, completions and results come in call order", async () => {
  const log: string[] = [];
  const c = ctx({ tools: standInTools(log) });
  const finished: number[] = [];
  const watched = { ...c, emit: (u: SessionUpdate) => (c.emit(u), u.sessionUpdate === "tool_call_update" && u.status === "completed" && finished.push(log.length)) };
  const results = await runToolCalls([sleepCall("a", 150), sleepCall("b", 10), sleepCall("c", 80)], watched);
  // Concurrent: all three had started before the first one completed (no wall-clock bound needed).
  expect(log).toEqual(["start 150", "start 10", "start 80"]);
  expect(finished[0]).toBe(3);
  expect(results.map((r) => r.content)).toEqual(["slept 150", "slept 10", "slept 80"]);
  expect(finals(c.updates)).toEqual(["a", "b", "c"]);
});

test("MAX_PARALLEL_TOOLS bounds concurrency", async () => {
  const c = ctx({ maxParallel: 1 });
  const t0 = Date.now();
  await runToolCalls([sleepCall("a", 60), sleepCall("b", 60)], c);
  expect(Date.now() - t0).toBeGreaterThanOrEqual(115);
});

test("hooks and unknown names fail as unknown tools; refused calls never run; isError fails", async () => {
  const log: string[] = [];
  const c = ctx({ tools: standInTools(log) });
  const results = await runToolCalls(
    [
      { call: { id: "h", name: "t___hook", input: {} } },
      { call: { id: "u", name: "x__y", input: {} } },
      { call: { id: "r", name: "t__sleep", input: { ms: 1 } }, refusal: "refused: cap" },
      { call: { id: "f", name: "t__fail", input: {} } },
    ],
    c,
  );
  expect(results.map((r) => [r.content, r.isError])).toEqual([
    ["unknown tool: t___hook", true], ["unknown tool: x__y", true], ["refused: cap", true], ["boom", true],
  ]);
  expect(log).toEqual(["start t__fail"]);
});

test("ask mode: reject_once is not executed; allow_always is remembered", async () => {
  const log: string[] = [];
  const c = ctx({ tools: standInTools(log), policy: createPolicy({ mode: "ask", rules: [], workspace: "/w" }) }, ["reject_once", "allow_always"]);
  const r = await runToolCalls([sleepCall("a", 1), sleepCall("b", 2), sleepCall("c", 3)], c);
  expect(r.map((x) => x.content)).toEqual(["rejected by user", "slept 2", "slept 3"]);
  expect(log).toEqual(["start 2", "start 3"]);
});

test("cancellation returns at once with `cancelled` results for unfinished calls", async () => {
  const ac = new AbortController();
  const c = ctx({ signal: ac.signal });
  // Cancelled once a's result is in, while b runs.
  c.emit = (u) => {
    c.updates.push(u);
    if (u.sessionUpdate === "tool_call_update" && u.toolCallId === "a" && u.status === "completed") setImmediate(() => ac.abort());
  };
  const t0 = Date.now();
  const r = await runToolCalls([sleepCall("a", 5), sleepCall("b", 5000)], c);
  expect(Date.now() - t0).toBeLessThan(2500); // not the 5 s the unfinished call would take
  expect(r.map((x) => x.content)).toEqual(["slept 5", "cancelled"]);
});
