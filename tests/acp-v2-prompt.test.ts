// `tendril prompt` offers ACP v2 and falls back to v1, through the built binary against `tendril agent`
// and the fake LLM; the wire between them is copied with `tee` so the version each spoke is seen:
// v2 with an agent that answers 2 (same output as over v1: answer, tool calls, --approve, usage),
// v1 with an agent that answers 1, and v2 through `tendril conductor`, which routes the version its
// components agree on.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN } from "./binary.ts";
import { type FakeLlm, startFakeLlm } from "./fake-llm.ts";

let fake: FakeLlm;
let work: string;
let counter = 0;

beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-v2-prompt-"));
});
afterAll(async () => {
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = join(work, `ws-${++counter}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

function prompt(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    XDG_CONFIG_HOME: join(work, "config"),
    XDG_STATE_HOME: join(work, "state"),
    XDG_CACHE_HOME: join(work, "cache"),
    TENDRIL_LOG: "warn",
    TENDRIL_PROVIDER: "anthropic",
    TENDRIL_MODEL: "fake-model",
    ANTHROPIC_API_KEY: "test-key",
    ANTHROPIC_BASE_URL: fake.anthropicBaseUrl,
  };
  const child = spawn(BIN, ["prompt", ...args], { env, cwd: work, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
  child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
  const guard = setTimeout(() => child.kill("SIGKILL"), 25_000);
  return new Promise((resolve) => child.on("close", (code) => (clearTimeout(guard), resolve({ code, stdout, stderr }))));
}

/** The JSON lines a `tee` copied. */
const wire = (file: string) =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

test("against an agent that answers v2: the turn runs over v2, with the same output as over v1", async () => {
  const dir = freshDir();
  const sent = join(dir, "..", `sent-${counter}.jsonl`);
  const got = join(dir, "..", `got-${counter}.jsonl`);
  const agent = `sh -c ${q(`tee ${q(sent)} | ${q(BIN)} agent | tee ${q(got)}`)}`;
  fake.script([{ toolCalls: [{ id: "s1", name: "dev__shell", input: { command: "echo from-v2" } }] }, { text: "Ran it over v2." }]);
  const r = await prompt(["--agent", agent, "--cwd", dir, "--approve", "all", "--output", "json", "run it"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const result = JSON.parse(r.stdout);
  expect(result).toMatchObject({ stopReason: "end_turn", text: "Ran it over v2.", numTurns: 2 });
  expect(result.toolCalls.map((c: { id: string; status: string }) => [c.id, c.status])).toEqual([["s1", "completed"]]);
  expect(result.usage.outputTokens).toBeGreaterThan(0);
  const out = wire(sent);
  const back = wire(got);
  expect(out[0]).toMatchObject({ method: "initialize", params: { protocolVersion: 2 } });
  expect(back[0].result.protocolVersion).toBe(2);
  // v2's turn: the prompt acknowledged with a messageId, its end an idle state
  const promptId = out.find((m) => m.method === "session/prompt").id;
  expect(back.find((m) => m.id === promptId).result).toEqual({ messageId: expect.any(String) });
  expect(back.some((m) => m.params?.update?.sessionUpdate === "state_update" && m.params.update.stopReason === "end_turn")).toBe(true);
  // the permission question in v2's shape, answered
  expect(back.find((m) => m.method === "session/request_permission").params.subject.toolCall.toolCallId).toBe("s1");
});

test("against an agent that answers v1 (the offer rewritten on its way): v1 as before", async () => {
  const dir = freshDir();
  const got = join(dir, "..", `got-${counter}.jsonl`);
  const agent = `sh -c ${q(`sed -u 's/"protocolVersion":2/"protocolVersion":1/' | ${q(BIN)} agent | tee ${q(got)}`)}`;
  fake.script([{ text: "Plain v1." }]);
  const r = await prompt(["--agent", agent, "--cwd", dir, "hello"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toBe("Plain v1.\n");
  const back = wire(got);
  expect(back[0].result.protocolVersion).toBe(1);
  expect(back.some((m) => m.result?.stopReason === "end_turn")).toBe(true);
});

test("through tendril conductor: the chain answers v2 and the run works", async () => {
  const dir = freshDir();
  const got = join(dir, "..", `got-${counter}.jsonl`);
  const agent = `sh -c ${q(`${q(BIN)} conductor agent ${q(`${q(BIN)} agent`)} | tee ${q(got)}`)}`;
  fake.script([{ text: "Through the chain." }]);
  const r = await prompt(["--agent", agent, "--cwd", dir, "hello"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toBe("Through the chain.\n");
  expect(wire(got)[0].result.protocolVersion).toBe(2);
});
