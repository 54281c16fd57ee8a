// Background shell commands through the built binary (SPEC §3.3): a loopback HTTP server started in
// the background by the model answers a curl in the same turn and in the next one, and ends with the
// session; `tendril prompt` ends every background command at the end of its run and says so on
// stderr. Against the fake LLM; the commands are real.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeLlm, type FakeLlm } from "./fake-llm.ts";
import { agentEnv } from "./agent-env.ts";
import { startAgent, type TestAgent } from "./acp-client.ts";
import { runBinAsync } from "./binary.ts";
import { freePort, pidAlive as alive, waitFor } from "./fake-mcp-helpers.ts";

let fake: FakeLlm;
let work: string;
const agents: TestAgent[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-bg-e2e-"));
});
afterAll(async () => {
  for (const a of agents) await a.close(2000).catch(() => {});
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

const shell = (id: string, input: Record<string, unknown>) => ({ id, name: "dev__shell", input });
const toolText = (a: TestAgent, id: string) => JSON.stringify(a.ofKind("tool_call_update").filter((u) => u.toolCallId === id && u.status === "completed").map((u) => u.content));

test("a loopback HTTP server started in the background answers a curl in the same turn and in the next; it ends with the session", async () => {
  const ws = join(work, "ws-server");
  mkdirSync(ws);
  const port = await freePort();
  const pidFile = join(work, "server.pid");
  const a = startAgent({ env: { ...agentEnv(fake, work), TENDRIL_MODE: "yolo" } });
  agents.push(a);
  await a.initialize();
  const { sessionId } = await a.newSession(ws);
  const curl = `for i in $(seq 1 100); do curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:${port}/ && break; sleep 0.1; done`;
  fake.script([
    { toolCalls: [shell("start", { command: `echo $$ > ${pidFile}; exec python3 -m http.server ${port} --bind 127.0.0.1`, background: true })] },
    { toolCalls: [shell("curl1", { command: curl })] },
    { text: "The server answers." },
  ]);
  expect((await a.prompt(sessionId, "start a server and try it")).stopReason).toBe("end_turn");
  expect(toolText(a, "start")).toContain("bg1");
  expect(toolText(a, "curl1")).toContain("200");
  const pid = Number(readFileSync(pidFile, "utf8"));
  expect(alive(pid)).toBe(true);
  // The next turn: the server still runs.
  fake.script([{ toolCalls: [shell("curl2", { command: curl })] }, { toolCalls: [{ id: "read", name: "dev__shell_read", input: { id: "bg1" } }] }, { text: "Still up." }]);
  expect((await a.prompt(sessionId, "is it still up?")).stopReason).toBe("end_turn");
  expect(toolText(a, "curl2")).toContain("200");
  expect(toolText(a, "read")).toContain("GET / ");
  // Closing the agent ends it.
  await a.close(10_000);
  expect(await waitFor(() => !alive(pid), 10_000)).toBe(true);
});

test("tendril prompt ends every background command at the end of the run and says so on stderr", async () => {
  const ws = join(work, "ws-prompt");
  mkdirSync(ws);
  const pidFile = join(work, "prompt-bg.pid");
  // started in the background, then read until it says it is ready (its pid written)
  fake.script([
    { toolCalls: [shell("bg", { command: `echo $$ > ${pidFile}; echo ready; exec sleep 300`, background: true })] },
    { toolCalls: [{ id: "wait", name: "dev__shell_read", input: { id: "bg1", wait_ms: 20_000 } }] },
    { text: "Left it running." },
  ]);
  const r = await runBinAsync(["prompt", "--cwd", ws, "--approve", "all", "start something"], { env: { ...(process.env as Record<string, string>), ...agentEnv(fake, work) }, cwd: ws, timeoutMs: 25_000 });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("Left it running.");
  expect(r.stderr).toContain("1 background command still running; ended: bg1 (echo $$");
  expect(existsSync(pidFile)).toBe(true);
  const pid = Number(readFileSync(pidFile, "utf8"));
  expect(await waitFor(() => !alive(pid), 5000)).toBe(true);
});
