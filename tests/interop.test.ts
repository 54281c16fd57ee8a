// Tendril's agent driven by a real third-party ACP client, `acpx` (a pinned devDependency, run by
// the bundled Bun since it wants a newer Node than CI has): the oracle for "works with the clients
// people use". The LLM is the loopback fake; nothing leaves the machine.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentEnv } from "./agent-env.ts";
import { BIN, ROOT } from "./binary.ts";
import { startFakeLlm, type FakeLlm } from "./fake-llm.ts";

const ACPX = join(ROOT, "node_modules", "acpx", "dist", "cli.js");
let fake: FakeLlm;
let work: string;

beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-interop-"));
});
afterAll(async () => {
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

function acpx(args: string[], ws: string, extra: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env, ...agentEnv(fake, work), HOME: work, ACPX_HOME: join(work, "acpx"), ...extra };
  const agent = `${BIN} agent`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [ACPX, "--agent", agent, "--cwd", ws, "--timeout", "60", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b));
    child.stderr.on("data", (b: Buffer) => (stderr += b));
    const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("close", (code) => (clearTimeout(guard), resolve({ code, stdout, stderr })));
  });
}

test("acpx runs a one-shot prompt against tendril agent and prints the answer", async () => {
  const ws = join(work, "ws-text");
  mkdirSync(ws, { recursive: true });
  fake.script([{ text: "hello from tendril" }]);
  const r = await acpx(["--format", "quiet", "exec", "say hello"], ws);
  expect(r.stderr.includes("Error") ? r.stderr : "").toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("hello from tendril");
});

test("acpx approves a shell call through its policy naming our tool; the command runs", async () => {
  const ws = join(work, "ws-tool");
  mkdirSync(ws, { recursive: true });
  fake.script([{ toolCalls: [{ id: "s1", name: "dev__shell", input: { command: "echo made > made.txt" } }] }, { text: "done" }]);
  const r = await acpx(["--approve-all", "--format", "quiet", "exec", "make a file"], ws);
  expect(r.code).toBe(0);
  expect(readFileSync(join(ws, "made.txt"), "utf8")).toBe("made\n");
});

test("acpx --model switches the model tendril asks the LLM for", async () => {
  const ws = join(work, "ws-model");
  mkdirSync(ws, { recursive: true });
  fake.script([{ text: "big model here" }]);
  const before = fake.requests.length;
  const r = await acpx(["--model", "fake-model-large", "--format", "quiet", "exec", "which model?"], ws);
  expect(r.code).toBe(0);
  expect(fake.requests.slice(before).map((q) => q.body.model)).toEqual(["fake-model-large"]);
});

test("a failed LLM call answers -32603, which acpx retries; the retried prompt reaches the LLM once", async () => {
  const ws = join(work, "ws-retry");
  mkdirSync(ws, { recursive: true });
  fake.script([{ fault: { status: 503 } }, { text: "second time lucky" }]);
  const before = fake.requests.length;
  const r = await acpx(["--prompt-retries", "1", "--format", "quiet", "exec", "try me"], ws, { TENDRIL_LLM_MAX_RETRIES: "0" });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("second time lucky");
  const last = fake.requests.at(-1)!.body.messages as { role: string }[];
  expect(fake.requests.length - before).toBe(2);
  expect(last.filter((m) => m.role === "user").length).toBe(1);
});
