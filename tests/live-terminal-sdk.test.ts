// Live shell terminals end to end: the ACP SDK's client app against the built binary (real `dev__shell`,
// the fake LLM), with `_meta.terminal_output_delta`, with `_meta.terminal_output` on a 50 MB flood, and
// without either. What the client observes is asserted; the model still gets the output as text, and
// a reload replays the text form.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { agentEnv } from "./agent-env.ts";
import { BIN } from "./binary.ts";
import { startFakeLlm, type FakeLlm } from "./fake-llm.ts";
import { agentProcess } from "./sdk-process.ts";

let fake: FakeLlm;
let work: string;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-live-term-"));
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

interface Seen {
  update: any;
  at: number;
}

/** The SDK's client app on `tendril agent` (or what `args` runs: a conductor chain). */
function client(args = ["agent"]) {
  const proc = agentProcess({ args, home: work, env: agentEnv(fake, work) });
  children.push(proc.child);
  const seen: Seen[] = [];
  const conn = acp
    .client({ name: "live-terminal-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => void seen.push({ update: params.update, at: Date.now() }))
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => ({
      outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind === "allow_once")!.optionId },
    }))
    .connect(proc.stream);
  return {
    agent: conn.agent,
    seen,
    of: (id: string) => seen.filter((s) => s.update.toolCallId === id),
    close: () => proc.close(conn),
  };
}

const init = (c: ReturnType<typeof client>, meta?: Record<string, unknown>) =>
  c.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: meta ? { _meta: meta } : {}, clientInfo: { name: "t", version: "1" } });

function workspace(name: string): string {
  const ws = join(work, name);
  mkdirSync(ws, { recursive: true });
  return ws;
}

const TICKS = "for i in 1 2 3; do echo tick-$i; sleep 0.4; done";

test("with terminal_output_delta: the shell's output arrives while it runs, then its exit; the model gets the text; a reload replays text", async () => {
  const c = client();
  await init(c, { terminal_output_delta: true });
  const cwd = workspace("ws-delta");
  const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  fake.script([{ toolCalls: [{ id: "s1", name: "dev__shell", input: { command: TICKS } }] }, { text: "Ticked." }]);
  expect((await c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "tick" }] })).stopReason).toBe("end_turn");
  const calls = c.of("s1");
  const terminalId = calls[0]!.update._meta.terminal_info.terminal_id;
  expect(calls[0]!.update.content).toEqual([{ type: "terminal", terminalId }]);
  const deltas = calls.filter((s) => s.update._meta?.terminal_output_delta);
  expect(deltas.length).toBeGreaterThanOrEqual(2);
  expect(deltas.map((s) => s.update._meta.terminal_output_delta.data).join("")).toBe("tick-1\ntick-2\ntick-3\n");
  const last = calls.at(-1)!;
  // the first line was shown while the command still ran (it sleeps 0.8 s more after it)
  expect(last.at - deltas[0]!.at).toBeGreaterThanOrEqual(500);
  expect(last.update.status).toBe("completed");
  expect(last.update.content).toEqual([{ type: "terminal", terminalId }]);
  expect(last.update._meta.terminal_exit).toEqual({ terminal_id: terminalId, exit_code: 0, signal: null });
  expect(JSON.stringify(fake.requests.at(-1)?.body.messages.at(-1))).toContain("tick-3");
  await c.close();

  const again = client();
  await init(again, { terminal_output_delta: true });
  await again.agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
  const replayed = again.of("s1").map((s) => s.update);
  expect(JSON.stringify(replayed)).not.toContain("terminal");
  expect(JSON.stringify(replayed.at(-1).content)).toContain("tick-3");
  await again.close();
}, 30_000);

test("with terminal_output: a 50 MB flood is a bounded number of bounded updates, the tail kept", async () => {
  const c = client();
  await init(c, { terminal_output: true });
  const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: workspace("ws-flood"), mcpServers: [] });
  const command = "head -c 50000000 /dev/zero | tr '\\0' x; echo; echo END-MARK";
  fake.script([{ toolCalls: [{ id: "f1", name: "dev__shell", input: { command, timeout_s: 120 } }] }, { text: "Flooded." }]);
  expect((await c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "flood" }] })).stopReason).toBe("end_turn");
  const calls = c.of("f1");
  const outputs = calls.filter((s) => s.update._meta?.terminal_output).map((s) => s.update._meta.terminal_output.data as string);
  const ran = calls.at(-1)!.at - calls[0]!.at;
  // TERMINAL_FLUSH_MS (100 ms) apart at most, and the last one when the command ends
  expect(outputs.length).toBeLessThanOrEqual(Math.ceil(ran / 100) + 2);
  for (const d of outputs) expect(Buffer.byteLength(d)).toBeLessThanOrEqual(16 * 1024); // TERMINAL_OUTPUT_BYTES
  // appended as the client does, the output ends as the command's did
  expect(outputs.join("").endsWith("xxx\nEND-MARK\n")).toBe(true);
  expect(outputs.join("")).toMatch(/\[… \d+ bytes of output not shown …\]/);
  expect(calls.at(-1)!.update._meta.terminal_exit.exit_code).toBe(0);
  await c.close();
}, 60_000);

test("without the flag: no terminal, the output as text when the call ends (as before)", async () => {
  const c = client();
  await init(c);
  const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: workspace("ws-plain"), mcpServers: [] });
  fake.script([{ toolCalls: [{ id: "p1", name: "dev__shell", input: { command: TICKS } }] }, { text: "Ticked." }]);
  await c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "tick" }] });
  const calls = c.of("p1").map((s) => s.update);
  expect(JSON.stringify(calls)).not.toContain("terminal");
  expect(calls.at(-1).content[0].content.text).toContain("tick-3");
  await c.close();
}, 30_000);

test("through `tendril conductor`: the client's terminal_output_delta reaches the agent and the live output comes back", async () => {
  const c = client(["conductor", "agent", `${BIN} agent`]);
  await init(c, { terminal_output_delta: true });
  const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: workspace("ws-chain"), mcpServers: [] });
  fake.script([{ toolCalls: [{ id: "c1", name: "dev__shell", input: { command: TICKS } }] }, { text: "Ticked." }]);
  await c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "tick" }] });
  const deltas = c.of("c1").filter((s) => s.update._meta?.terminal_output_delta);
  expect(deltas.length).toBeGreaterThanOrEqual(2);
  expect(deltas.map((s) => s.update._meta.terminal_output_delta.data).join("")).toBe("tick-1\ntick-2\ntick-3\n");
  expect(c.of("c1").at(-1)!.update._meta.terminal_exit.exit_code).toBe(0);
  await c.close();
}, 30_000);
