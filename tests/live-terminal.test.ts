// Live shell output (SPEC §3.3) as a v1 client sees it: with `_meta.terminal_output` or
// `_meta.terminal_output_delta` a `liveOutput` call shows a terminal whose output arrives while the
// command runs (each update the bytes since the previous, which the client appends) and whose exit
// ends it; without the flag, text as before. Every message validates against the v1 schemas; the
// coalescing holds a flood to the named bounds.
import { expect, test } from "bun:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { LiveTerminal } from "../core/agent/live-terminal.ts";
import { memoryAgent, type MemoryAgent } from "./memory-agent.ts";
import { liveToolPool } from "./in-memory.ts";
import { schemaFailures } from "./acp-validate.ts";
import { tmpdir } from "node:os";

const CHUNKS = ["one\n", "two\n", "three\n"];

async function runOnce(clientMeta: Record<string, unknown> | undefined): Promise<{ a: MemoryAgent; calls: any[]; asked: Map<unknown, string> }> {
  const a = memoryAgent({ pool: liveToolPool() });
  const asked = new Map<unknown, string>();
  let id = 0;
  const req = async (method: string, params: Record<string, unknown>) => {
    asked.set(++id, method);
    a.send({ jsonrpc: "2.0", id, method, params });
    return a.response(id, 10_000);
  };
  await req("initialize", { protocolVersion: 1, clientCapabilities: clientMeta ? { _meta: clientMeta } : {} });
  const { sessionId } = (await req("session/new", { cwd: tmpdir(), mcpServers: [] })).result;
  a.provider.push({ text: "Running.", calls: [{ id: "r1", name: "t__run", input: { chunks: CHUNKS, gapMs: 250 } }] }, { text: "Done." });
  const answer = await req("session/prompt", { sessionId, prompt: [{ type: "text", text: "run it" }] });
  expect(answer.result.stopReason).toBe("end_turn");
  const calls = a.out.filter((m) => m.method === "session/update" && m.params.update.toolCallId === "r1").map((m) => m.params.update);
  await a.close();
  return { a, calls, asked };
}

test("live terminal, terminal_output: the call shows a terminal, its new output while it runs, then its exit; v1 valid", async () => {
  const { a, calls, asked } = await runOnce({ terminal_output: true });
  const start = calls[0];
  expect(start.sessionUpdate).toBe("tool_call");
  const terminalId = start._meta.terminal_info.terminal_id;
  expect(typeof terminalId).toBe("string");
  expect(start.content).toEqual([{ type: "terminal", terminalId }]);
  const outputs = calls.filter((u) => u._meta?.terminal_output);
  // streamed while running: the first output came before the call ended, holding only the first line;
  // each later one only what came since (a client such as Zed appends them to its terminal)
  expect(outputs.length).toBeGreaterThanOrEqual(2);
  expect(outputs[0]._meta.terminal_output).toEqual({ terminal_id: terminalId, data: "one\n" });
  expect(outputs.map((u) => u._meta.terminal_output.data).join("")).toBe(CHUNKS.join(""));
  const last = calls.at(-1);
  expect(calls.indexOf(outputs[0])).toBeLessThan(calls.indexOf(last));
  expect(last.status).toBe("completed");
  expect(last.content).toEqual([{ type: "terminal", terminalId }]);
  expect(last._meta.terminal_exit).toEqual({ terminal_id: terminalId, exit_code: 0, signal: null });
  expect(calls.some((u) => u._meta?.terminal_output_delta)).toBe(false);
  expect(schemaFailures(a.out, asked, ["v1", "v1u"])).toEqual([]);
});

test("live terminal, deltas: only the new bytes in each update, together the whole output", async () => {
  const { a, calls, asked } = await runOnce({ terminal_output_delta: true });
  const deltas = calls.filter((u) => u._meta?.terminal_output_delta).map((u) => u._meta.terminal_output_delta.data);
  expect(deltas.length).toBeGreaterThanOrEqual(2);
  expect(deltas.join("")).toBe(CHUNKS.join(""));
  expect(calls.some((u) => u._meta?.terminal_output)).toBe(false);
  expect(calls.at(-1)._meta.terminal_exit.exit_code).toBe(0);
  expect(schemaFailures(a.out, asked, ["v1", "v1u"])).toEqual([]);
});

test("live terminal: a client without the flag sees the output as text when the call ends, and no terminal", async () => {
  const { calls } = await runOnce(undefined);
  expect(calls.some((u) => u._meta && Object.keys(u._meta).some((k) => k.startsWith("terminal_")))).toBe(false);
  expect(JSON.stringify(calls.map((u) => u.content))).not.toContain('"terminal"');
  expect(calls.at(-1).content[0].content.text).toContain("three");
});

/** Pushes `total` bytes of `x` in 64 KiB chunks over about `ms`, ending with END-MARK; the sent updates. */
async function flood(key: "terminal_output" | "terminal_output_delta", total: number, ms: number) {
  const sent: SessionUpdate[] = [];
  const t = new LiveTerminal("c", { key, flushMs: 100, maxBytes: 4096, send: (u) => void sent.push(u), record: () => {} }, "/");
  const ticks = Math.ceil(ms / 10);
  const perTick = Math.ceil(total / (64 * 1024) / ticks);
  const started = Date.now();
  let letter = "a";
  for (let i = 0; i < ticks; i++) {
    // each chunk its own letter: the kept bytes must be the last ones
    for (let j = 0; j < perTick; j++) {
      letter = String.fromCharCode(97 + ((i * perTick + j) % 26));
      t.push(Buffer.alloc(64 * 1024, letter));
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  t.push(Buffer.from("\nEND-MARK\n"));
  const last = t.finish({ sessionUpdate: "tool_call_update", toolCallId: "c", status: "completed" }, { code: 0, signal: null });
  const elapsed = Date.now() - started;
  const data = sent.map((u) => ((u as any)._meta[key].data as string));
  return { data, elapsed, last, letter };
}

test("live terminal coalescing: a 50 MB flood gives at most one update per TERMINAL_FLUSH_MS, each bounded, the tail kept", async () => {
  for (const key of ["terminal_output_delta", "terminal_output"] as const) {
    const { data, elapsed, letter } = await flood(key, 50 * 1024 * 1024, 600);
    expect(data.length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 2);
    expect(data.length).toBeGreaterThanOrEqual(2);
    for (const d of data) expect(Buffer.byteLength(d)).toBeLessThanOrEqual(4096);
    // appended as the client does, the output ends as the pushed bytes did; what was left out is said, with its size
    expect(data.join("").endsWith(`${letter.repeat(1000)}\nEND-MARK\n`)).toBe(true);
    expect(data.join("")).toMatch(/\[… \d+ bytes of output not shown …\]/);
  }
});

test("live terminal: output after the call ended is not sent, and a call that never ran keeps its text", () => {
  const sent: SessionUpdate[] = [];
  const t = new LiveTerminal("c", { key: "terminal_output_delta", flushMs: 100, maxBytes: 4096, send: (u) => void sent.push(u), record: () => {} }, "/");
  const plain = { sessionUpdate: "tool_call_update", toolCallId: "c", status: "failed", content: [{ type: "content", content: { type: "text", text: "cancelled" } }] } as SessionUpdate;
  const last = t.finish(plain, { code: null, signal: null }) as any;
  t.push(Buffer.from("late"));
  expect(sent).toEqual([]);
  expect(last.content).toEqual((plain as any).content);
  expect(last._meta.terminal_exit).toEqual({ terminal_id: t.id, exit_code: null, signal: null });
});

test("live terminal: a terminal_output flag that is not a boolean is refused at initialize, naming it", async () => {
  const a = memoryAgent({ pool: liveToolPool() });
  a.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: { _meta: { terminal_output: "yes" } } } });
  const answer = await a.response(1);
  expect(answer.error.code).toBe(-32602);
  expect(answer.error.message).toContain("terminal_output");
  await a.close();
});
