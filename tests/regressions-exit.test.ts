// Regression tests, through the built binary, for what a mode leaves behind or lets through on its
// way out and in: signals (SIGHUP, SIGTERM to a conductor in front of `tendril agent`), shim and bridge
// folders in TMPDIR, the shell environment of `tendril dev-mcp`, the mode of trace and recording
// files, and a bridge started for a server the conductor does not know. Each test has a private TMPDIR.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { agentEnv } from "./agent-env.ts";
import { startAgent, type TestAgent } from "./acp-client.ts";
import { BIN, ROOT } from "./binary.ts";
import { startFakeLlm, type FakeLlm } from "./fake-llm.ts";
import { childrenOf, pidAlive, waitFor } from "./fake-mcp-helpers.ts";
import { type RawAgent, spawnRawMode } from "./raw-harness.ts";

let fake: FakeLlm;
let work: string;
let counter = 0;
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-regressions-exit-"));
});

afterAll(async () => {
  for (const c of cleanups.splice(0)) c();
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

const FIXTURES = join(ROOT, "tests", "fixtures");
const SDK_PROXY = `${process.execPath} ${join(FIXTURES, "sdk-proxy.ts")}`;
const BURST_AGENT = `${process.execPath} ${join(FIXTURES, "burst-agent.ts")}`;
const SECRETS = { ANTHROPIC_API_KEY: "test-key", AWS_SECRET_ACCESS_KEY: "aws-secret-123", GITHUB_TOKEN: "ghp-token-456" };

/** A fresh folder with a workspace `ws` and a private TMPDIR `tmp`. */
function scratch(): { dir: string; ws: string; tmp: string } {
  const dir = join(work, `t${++counter}`);
  const ws = join(dir, "ws");
  const tmp = join(dir, "tmp");
  mkdirSync(ws, { recursive: true });
  mkdirSync(tmp, { recursive: true });
  return { dir, ws, tmp };
}

/** Tendril's folders in `tmp`: shim folders of shells, socket folders of conductor bridges. */
function leftovers(tmp: string): string[] {
  return readdirSync(tmp).filter((n) => n.startsWith("tendril-shims-") || n.startsWith("tendril-mcp-bridge-"));
}

function readPid(file: string): number {
  try {
    return Number(readFileSync(file, "utf8").trim()) || 0;
  } catch {
    return 0;
  }
}

/** An agent (or a chain) under the ACP test client, with the fake LLM and a private TMPDIR. */
function acpAgent(args: string[], dir: string, tmp: string, env: Record<string, string> = {}): TestAgent {
  const a = startAgent({ args, env: { ...agentEnv(fake, dir), TENDRIL_MODE: "yolo", TMPDIR: tmp, ...env } });
  cleanups.push(() => void a.child.kill("SIGKILL"));
  return a;
}

function exitOf(child: { once(event: "exit", f: (code: number | null, sig: string | null) => void): unknown }): Promise<number | string> {
  return new Promise((resolve) => child.once("exit", (code, sig) => resolve(code ?? sig ?? "?")));
}

/** Starts a turn whose shell command runs `sleep 300` (its pid in `pidFile`) and waits until it runs. */
async function sleepInShell(a: TestAgent, ws: string, pidFile: string): Promise<number> {
  await a.initialize();
  const { sessionId } = await a.newSession(ws);
  fake.script([{ toolCalls: [{ id: "s1", name: "dev__shell", input: { command: `sleep 300 & echo $! > ${pidFile}; wait` } }] }]);
  void a.prompt(sessionId, "sleep").catch(() => {});
  expect(await waitFor(() => readPid(pidFile) > 0, 10_000)).toBe(true);
  return readPid(pidFile);
}

// ---- C6: SIGHUP (a closed terminal) takes each mode's exit path, as SIGTERM does ----

test("regression: SIGHUP ended `tendril agent` without its exit path (shim folder left, tool groups to the watchdog); now exit 129 with both gone", async () => {
  const { dir, ws, tmp } = scratch();
  const a = acpAgent(["agent"], dir, tmp);
  const sleeper = await sleepInShell(a, ws, join(ws, "sleep.pid"));
  expect(leftovers(tmp)).toHaveLength(1); // the shell's shim folder exists
  const exited = exitOf(a.child);
  a.child.kill("SIGHUP");
  expect(await exited).toBe(129);
  expect(await waitFor(() => !pidAlive(sleeper), 5000)).toBe(true);
  expect(leftovers(tmp)).toEqual([]);
}, 30_000);

test("regression: SIGHUP ended `tendril conductor` without its exit path (bridge folder left); now exit 129, every component group and folder gone", async () => {
  const { tmp } = scratch();
  const r = spawnRawMode("conductor", { TMPDIR: tmp }, ["agent", SDK_PROXY, BURST_AGENT]);
  cleanups.push(() => r.kill());
  r.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
  await r.nextMessage(10_000);
  const components = childrenOf(r.child.pid!);
  expect(leftovers(tmp).filter((n) => n.startsWith("tendril-mcp-bridge-"))).toHaveLength(1);
  r.child.kill("SIGHUP");
  expect(await r.exited(10_000)).toBe(129);
  expect(await waitFor(() => components.every((p) => !pidAlive(p)), 5000)).toBe(true);
  expect(leftovers(tmp)).toEqual([]);
}, 30_000);

test("regression: SIGHUP ended `tendril prompt` without its exit path; now the run is cancelled, its shell command killed, no shim folder left, exit 129", async () => {
  const { dir, ws, tmp } = scratch();
  const pidFile = join(ws, "sleep.pid");
  fake.script([{ toolCalls: [{ id: "h1", name: "dev__shell", input: { command: `sleep 300 & echo $! > ${pidFile}; wait` } }] }]);
  const child = spawn(BIN, ["prompt", "--cwd", ws, "--approve", "all", "sleep"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, ...agentEnv(fake, dir), TMPDIR: tmp },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(() => void child.kill("SIGKILL"));
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
  child.stdout.resume();
  const exited = exitOf(child);
  expect(await waitFor(() => readPid(pidFile) > 0, 10_000)).toBe(true);
  const sleeper = readPid(pidFile);
  expect(leftovers(tmp)).toHaveLength(1);
  child.kill("SIGHUP");
  expect(await exited).toBe(129);
  expect(stderr).toContain("interrupted; the agent was cancelled and stopped");
  expect(await waitFor(() => !pidAlive(sleeper), 5000)).toBe(true);
  expect(leftovers(tmp)).toEqual([]);
}, 30_000);

test("SIGHUP to `tendril dev-mcp` during a shell command: exit 0 (a server stopped by its client), the command's group and the shim folder gone", async () => {
  const { ws, tmp } = scratch();
  const r = spawnRawMode("dev-mcp", { TMPDIR: tmp, HOME: tmp, XDG_CACHE_HOME: join(tmp, "cache") }, ["--root", ws]);
  cleanups.push(() => r.kill());
  const pidFile = join(ws, "sleep.pid");
  r.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
  await r.response(1, 10_000);
  r.writeLine({ jsonrpc: "2.0", method: "notifications/initialized" });
  r.writeLine({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "shell", arguments: { command: `sleep 300 & echo $! > ${pidFile}; wait` } } });
  expect(await waitFor(() => readPid(pidFile) > 0, 10_000)).toBe(true);
  expect(leftovers(tmp)).toHaveLength(1);
  r.child.kill("SIGHUP");
  expect(await r.exited(10_000)).toBe(0);
  expect(await waitFor(() => !pidAlive(readPid(pidFile)), 5000)).toBe(true);
  expect(leftovers(tmp)).toEqual([]);
}, 30_000);

// ---- C9: a conductor's kill ladder no longer outruns the agent's folder removal ----

for (const signal of ["SIGTERM", "SIGHUP"] as const) {
  test(`regression: ${signal} to a conductor in front of \`tendril agent\` left the agent's shim folder in TMPDIR (SIGKILLed by the conductor's ladder before its own cleanup)`, async () => {
    const { dir, ws, tmp } = scratch();
    // The agent's own ladder for its shell group outlasts the conductor's for the agent (200 ms), as
    // it does whenever the agent's close takes longer than KILL_GRACE_MS.
    const a = acpAgent(["conductor", "agent", `TENDRIL_KILL_GRACE_MS=3000 ${BIN} agent`], dir, tmp);
    await a.initialize();
    const { sessionId } = await a.newSession(ws);
    const pidFile = join(ws, "sleep.pid");
    fake.script([{ toolCalls: [{ id: "c1", name: "dev__shell", input: { command: `trap "" TERM; sleep 300 & echo $! > ${pidFile}; wait` } }] }]);
    void a.prompt(sessionId, "run it").catch(() => {});
    expect(await waitFor(() => readPid(pidFile) > 0, 10_000)).toBe(true);
    expect(leftovers(tmp)).toHaveLength(2); // the agent's shim folder and the conductor's bridge folder
    const exited = exitOf(a.child);
    a.child.kill(signal);
    expect(await exited).toBe(signal === "SIGTERM" ? 143 : 129);
    expect(leftovers(tmp)).toEqual([]);
    expect(await waitFor(() => !pidAlive(readPid(pidFile)), 5000)).toBe(true); // the agent's watchdog killed its group
  }, 30_000);
}

// ---- S3: dev-mcp's shell commands get the whitelist, as the agent's own do ----

async function devMcp(ws: string, tmp: string, args: string[], env: Record<string, string>): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ["dev-mcp", "--root", ws, ...args],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmp, TMPDIR: tmp, XDG_CACHE_HOME: join(tmp, "cache"), XDG_CONFIG_HOME: join(tmp, "config"), ...env },
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (b: Buffer) => (err += b.toString()));
  const client = new Client({ name: "test", version: "1" });
  await client.connect(transport);
  cleanups.push(() => void client.close().catch(() => {}));
  return { client, stderr: () => err };
}

async function shellOutput(client: Client, command: string): Promise<string> {
  const r = (await client.callTool({ name: "shell", arguments: { command } })) as { content: { text?: string }[] };
  return r.content.map((c) => c.text ?? "").join("");
}

test("regression: `tendril dev-mcp` gave shell commands its whole environment (API keys, cloud secrets); now the agent's whitelist, plus what --pass-env names", async () => {
  const { ws, tmp } = scratch();
  const plain = await devMcp(ws, tmp, [], { ...SECRETS, LANG: "C.UTF-8", TENDRIL_SHELL_TIMEOUT_S: "30" });
  const env = await shellOutput(plain.client, "env");
  expect(env).not.toContain("test-key");
  expect(env).not.toContain("aws-secret-123");
  expect(env).not.toContain("ghp-token-456");
  expect(env).toContain("LANG=C.UTF-8");
  expect(env).toContain("TENDRIL_SHELL_TIMEOUT_S=30"); // the rg and tree shims read their limits there
  await plain.client.close();

  const passing = await devMcp(ws, tmp, ["--pass-env", "GITHUB_TOKEN, NOT_SET"], SECRETS);
  const passed = await shellOutput(passing.client, "env");
  expect(passed).toContain("GITHUB_TOKEN=ghp-token-456");
  expect(passed).not.toContain("aws-secret-123");
  expect(passed).not.toContain("test-key");
  await passing.client.close();

  const byEnv = await devMcp(ws, tmp, [], { ...SECRETS, TENDRIL_PASS_ENV: "AWS_SECRET_ACCESS_KEY" });
  expect(await shellOutput(byEnv.client, "echo \"[$AWS_SECRET_ACCESS_KEY][$GITHUB_TOKEN]\"")).toContain("[aws-secret-123][]");
  await byEnv.client.close();
}, 30_000);

test("--pass-env with something that is not a variable name is a usage error (exit 2) in dev-mcp and agent", async () => {
  for (const mode of ["dev-mcp", "agent"]) {
    const child = spawn(BIN, [mode, "--pass-env", "GOOD,not-a-name"], { stdio: ["pipe", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "", HOME: work, ANTHROPIC_API_KEY: "k" } });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    expect(await exitOf(child)).toBe(2);
    expect(stderr).toContain('--pass-env takes variable names separated by commas (letters, digits, _), got "not-a-name"');
  }
});

test("the agent's dev shell gets TENDRIL_PASS_ENV names too, and never the rest of its environment", async () => {
  const { dir, ws, tmp } = scratch();
  const a = acpAgent(["agent"], dir, tmp, { AWS_SECRET_ACCESS_KEY: "aws-secret-123", GITHUB_TOKEN: "ghp-token-456", TENDRIL_PASS_ENV: "GITHUB_TOKEN" });
  await a.initialize();
  const { sessionId } = await a.newSession(ws);
  const before = fake.requests.length;
  fake.script([{ toolCalls: [{ id: "e1", name: "dev__shell", input: { command: "env" } }] }, { text: "ok" }]);
  await a.prompt(sessionId, "show env");
  const seen = JSON.stringify(fake.requests[before + 1]!.body.messages);
  expect(seen).toContain("GITHUB_TOKEN=ghp-token-456");
  expect(seen).not.toContain("aws-secret-123");
  expect(seen).not.toContain("test-key");
  expect(await a.close()).toBe(0);
}, 30_000);

// ---- S4: traces and recordings hold tokens and conversations: private files ----

test("regression: conductor --trace files were created world-readable (they hold MCP env tokens and whole conversations); now 0600, an existing one tightened", async () => {
  const { dir } = scratch();
  for (const existing of [false, true]) {
    const file = join(dir, `trace-${existing}.jsonl`);
    if (existing) {
      writeFileSync(file, "old\n");
      chmodSync(file, 0o644);
    }
    const r: RawAgent = spawnRawMode("conductor", {}, ["agent", "--trace", file, BURST_AGENT]);
    cleanups.push(() => r.kill());
    r.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    await r.nextMessage(10_000);
    r.child.stdin.end();
    expect(await r.exited(10_000)).toBe(0);
    expect((statSync(file).mode & 0o777).toString(8)).toBe("600");
    expect(readFileSync(file, "utf8")).toContain('"method":"initialize"');
  }
}, 30_000);

test("regression: TENDRIL_RECORD cassettes were created world-readable; now 0600, an existing one tightened", async () => {
  const { dir, ws, tmp } = scratch();
  for (const existing of [false, true]) {
    const file = join(dir, `cassette-${existing}.jsonl`);
    if (existing) {
      writeFileSync(file, "");
      chmodSync(file, 0o644);
    }
    fake.script([{ text: "recorded answer" }]);
    const child = spawn(BIN, ["prompt", "--cwd", ws, "hello"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, ...agentEnv(fake, dir), TMPDIR: tmp, TENDRIL_RECORD: file },
      stdio: ["ignore", "pipe", "pipe"],
    });
    cleanups.push(() => void child.kill("SIGKILL"));
    child.stdout.resume();
    child.stderr.resume();
    expect(await exitOf(child)).toBe(0);
    expect((statSync(file).mode & 0o777).toString(8)).toBe("600");
    expect(readFileSync(file, "utf8")).toContain(`"text":"hello"`);
  }
}, 30_000);

// ---- C10: a bridge for a server the conductor does not know says so ----

test("regression: `conductor mcp-bridge --server ID` with an unknown id exited 0 with no answer and no message; now an MCP error naming it, a stderr line, exit 1", async () => {
  const { tmp } = scratch();
  const r = spawnRawMode("conductor", { TMPDIR: tmp }, ["agent", BURST_AGENT]);
  cleanups.push(() => r.kill());
  r.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
  await r.nextMessage(10_000);
  const [folder] = leftovers(tmp);
  expect(folder).toStartWith("tendril-mcp-bridge-");
  const bridge = spawn(BIN, ["conductor", "mcp-bridge", "--socket", join(tmp, folder!, "s"), "--server", "no-such-server"], { stdio: ["pipe", "pipe", "pipe"] });
  cleanups.push(() => void bridge.kill("SIGKILL"));
  let stdout = "";
  let stderr = "";
  bridge.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
  bridge.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
  const exited = exitOf(bridge);
  const init = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } };
  bridge.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: init }) + "\n");
  expect(await exited).toBe(1);
  const answer = JSON.parse(stdout.trim());
  expect(answer).toMatchObject({ jsonrpc: "2.0", id: 1, error: { message: expect.stringContaining('"no-such-server"') } });
  expect(stderr).toContain('tendril conductor mcp-bridge: the conductor has no MCP-over-ACP server with id "no-such-server"');
  r.child.stdin.end();
  expect(await r.exited(10_000)).toBe(0);
}, 30_000);

test("a bridge whose conductor is gone says so and exits 1", async () => {
  const { tmp } = scratch();
  const child = spawn(BIN, ["conductor", "mcp-bridge", "--socket", join(tmp, "gone", "s"), "--server", "x"], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
  expect(await exitOf(child)).toBe(1);
  expect(stderr).toContain(`tendril conductor mcp-bridge: ${join(tmp, "gone", "s")}:`);
});
