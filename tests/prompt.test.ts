// End-to-end tests of `tendril prompt` / `yopo` through the built binary: exit codes, output formats,
// permissions, timeouts (the agent's process group is gone), crashes, stdin prompts and --mcp, against
// a third-party ACP agent (tests/fixtures/echo-agent.ts) and, once it exists, `tendril agent` + fake LLM.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, ROOT, runBinAsync, type RunAsyncOptions, type RunResult } from "./binary.ts";
import { type FakeLlm, startFakeLlm } from "./fake-llm.ts";

const ECHO = `'${process.execPath}' '${join(ROOT, "tests", "fixtures", "echo-agent.ts")}'`;
let work: string;
let counter = 0;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "tendril-prompt-e2e-"));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

function freshDir(): string {
  const dir = join(work, `ws-${++counter}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

type Run = RunResult & { ms: number };

type RunOpts = Omit<RunAsyncOptions, "timeoutMs">;

/** The binary with this file's config, state and cache folders and a warn-level log; stdin given (empty
 *  by default). */
async function runAsync(argv: string[], opts: RunOpts = {}): Promise<Run> {
  const env = {
    ...(process.env as Record<string, string>),
    XDG_CONFIG_HOME: join(work, "config"),
    XDG_STATE_HOME: join(work, "state"),
    XDG_CACHE_HOME: join(work, "cache"),
    TENDRIL_LOG: "warn",
    ...opts.env,
  };
  const r = await runBinAsync(argv, { ...opts, env, cwd: opts.cwd ?? work, input: opts.input ?? "", timeoutMs: 25_000 });
  return { ...r, ms: r.ms ?? 0 };
}

const prompt = (args: string[], opts: RunOpts = {}) => runAsync(["prompt", ...args], opts);
const echo = (text: string, ...flags: string[]) => prompt(["--agent", ECHO, ...flags, text]);

/** Gone, or a zombie waiting for init to reap it: either way it runs no more. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) [ZX] /.test(stat);
  } catch {
    return false;
  }
}

/** Resolves once `file` exists and is not empty (5 s bound). */
async function waitForFile(file: string): Promise<void> {
  const end = Date.now() + 5000;
  while (Date.now() < end) {
    if (existsSync(file) && readFileSync(file, "utf8").trim() !== "") return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${file} did not appear`);
}

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!running(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !running(pid);
}

describe("against a third-party ACP agent", () => {
  test("text: the answer on stdout, exit 0", async () => {
    const r = await echo("say hello world");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("hello world \n");
    expect(r.stderr).toBe("");
  });

  test("the yopo alias is the same command", async () => {
    const y = await runAsync(["yopo", "--agent", ECHO, "say via alias"]);
    expect(y.code).toBe(0);
    expect(y.stdout).toBe("via alias \n");
  });

  test("json: one object with stopReason, text, toolCalls and usage", async () => {
    const r = await echo("say one two", "--output", "json");
    expect(r.code).toBe(0);
    const obj = JSON.parse(r.stdout);
    expect(obj).toEqual({
      sessionId: "echo-1",
      stopReason: "end_turn",
      text: "one two ",
      numTurns: 1,
      durationMs: expect.any(Number),
      toolCalls: [],
      usage: { contextUsed: 42, contextSize: 1000 },
    });
  });

  test("stream-json: every update is a JSON line, the result line comes last", async () => {
    const r = await echo("write f.txt x", "--output", "stream-json", "--cwd", freshDir(), "--approve", "all");
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const kinds = lines.map((l) => (l.type === "session_update" ? l.update.sessionUpdate : l.type));
    expect(kinds).toEqual(["tool_call", "permission", "tool_call_update", "agent_message_chunk", "result"]);
    expect(lines.at(-1)).toMatchObject({ type: "result", stopReason: "end_turn", text: "wrote f.txt (yes)" });
    expect(lines.at(-1).toolCalls[0]).toMatchObject({ id: "write-1", kind: "edit", status: "completed" });
  });

  test("default approval denies: the file is not written and stderr says how to allow it", async () => {
    const dir = freshDir();
    const r = await echo("write f.txt secret", "--cwd", dir);
    expect(r.code).toBe(0);
    expect(existsSync(join(dir, "f.txt"))).toBe(false);
    expect(r.stdout).toBe("not written (no)\n");
    expect(r.stderr).toContain("tool echo__write: f.txt … failed (denied: nobody to ask (use --approve all");
  });

  test("--approve all allows once: the file is written", async () => {
    const dir = freshDir();
    const r = await echo("write f.txt hello there", "--cwd", dir, "--approve", "all");
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, "f.txt"), "utf8")).toBe("hello there");
    expect(r.stdout).toBe("wrote f.txt (yes)\n");
    expect(r.stderr).toBe("tool echo__write: f.txt … completed\n");
  });

  test("--approve POLICY.toml: a matching allow rule writes, a deny rule does not", async () => {
    const allow = join(work, "allow.toml");
    writeFileSync(allow, '[[rules]]\ntool = "echo__write"\ndecision = "allow"\nwhen = { arg = "content", prefix = "ok" }\n');
    const dir = freshDir();
    expect((await echo("write a.txt ok fine", "--cwd", dir, "--approve", allow)).code).toBe(0);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("ok fine");
    const denied = await echo("write b.txt not ok", "--cwd", dir, "--approve", allow);
    expect(existsSync(join(dir, "b.txt"))).toBe(false);
    expect(denied.stderr).toContain(`no rule in ${allow} matches`);
  });

  test("a bad --approve file is a usage error (exit 2)", async () => {
    const bad = join(work, "bad.toml");
    writeFileSync(bad, '[[rules]]\ntool = "x"\ndecision = "maybe"\n');
    const r = await echo("say hi", "--approve", bad);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("decision must be allow, deny or ask");
    expect((await echo("say hi", "--approve", join(work, "missing.toml"))).code).toBe(2);
  });

  for (const reason of ["max_tokens", "refusal", "max_turn_requests", "cancelled"]) {
    test(`stop reason ${reason} exits 3 and says so`, async () => {
      const r = await echo(`stop ${reason}`, "--output", "json");
      expect(r.code).toBe(3);
      expect(JSON.parse(r.stdout)).toMatchObject({ stopReason: reason, text: `stopping with ${reason}` });
      expect(r.stderr).toContain(`stopped with ${reason}`);
    });
  }

  test("--timeout: a hung agent is cancelled and its process group killed, exit 124", async () => {
    const dir = freshDir();
    const quick = { TENDRIL_CANCEL_WAIT_S: "0.3", TENDRIL_SHUTDOWN_DEADLINE_S: "0.3" };
    // 2 s: the agent (a script started by Bun) must have written PIDFILE before the timeout, also on a loaded machine.
    const r = await prompt(["--agent", ECHO, "--cwd", dir, "--timeout", "2", "hang"], { env: quick });
    expect(r.code).toBe(124);
    expect(r.stderr).toContain("timed out after 2 s");
    expect(r.ms).toBeLessThan(8000); // 2 s + 2 s for the cancel answer + shutdown
    const pid = Number(readFileSync(join(dir, "PIDFILE"), "utf8"));
    expect(await waitGone(pid, 2000)).toBe(true);
  });

  test("--timeout: an agent that honours session/cancel stops at once, exit 124", async () => {
    const dir = freshDir();
    // A 30 s cancel wait that is never used: the polite agent answers at once, so the run ends long before it.
    const r = await prompt(["--agent", ECHO, "--cwd", dir, "--timeout", "2", "--output", "json", "hang polite"], { env: { TENDRIL_CANCEL_WAIT_S: "30" } });
    expect(r.code).toBe(124);
    expect(r.ms).toBeLessThan(15_000);
    expect(JSON.parse(r.stdout)).toMatchObject({ stopReason: null, text: "hanging" });
    const pid = Number(readFileSync(join(dir, "PIDFILE"), "utf8"));
    expect(await waitGone(pid, 2000)).toBe(true);
  });

  test("Ctrl-C (SIGINT) cancels, kills the agent's process group and exits 130", async () => {
    const dir = freshDir();
    const child = spawn(BIN, ["prompt", "--agent", ECHO, "--cwd", dir, "hang"], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve())); // "hanging"
    child.kill("SIGINT");
    child.kill("SIGINT"); // a second Ctrl-C must not skip the cleanup
    expect(await closed).toBe(130);
    expect(stderr).toContain("interrupted; the agent was cancelled and stopped");
    const pid = Number(readFileSync(join(dir, "PIDFILE"), "utf8"));
    expect(await waitGone(pid, 2000)).toBe(true);
  });

  test("an agent that crashes: exit 1 with its last stderr lines", async () => {
    const r = await echo("crash");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("tendril prompt: the agent exited with code 1 during session/prompt; its last stderr lines:");
    expect(r.stderr).toContain("  echo-agent: boom (simulated)");
  });

  test("an agent error answer (-32000): exit 1 with the agent's message", async () => {
    const r = await echo("fail");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("LLM request failed: 503 upstream overloaded (code -32000)");
  });

  test("an agent command that is not an ACP agent: exit 1 naming the step", async () => {
    const quiet = await prompt(["--agent", "true", "hi"]);
    expect(quiet.code).toBe(1);
    expect(quiet.stderr).toContain("the agent exited with code 0 during initialize and wrote nothing on stderr");
    const echoing = await prompt(["--agent", "cat", "--timeout", "10", "hi"]);
    expect(echoing.code).toBe(1);
    expect(echoing.stderr).toContain("failed during initialize");
    expect(echoing.stderr).toContain("is --agent an ACP agent?");
  });

  test("prompt from stdin with -", async () => {
    const r = await prompt(["--agent", ECHO, "-"], { input: "say from\nstdin\n" });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("from stdin \n");
  });

  test("--mcp NAME=CMD reaches session/new as a stdio server with an absolute command", async () => {
    const r = await echo("mcp", "--mcp", "files=FOO=bar cat -n", "--output", "json");
    expect(r.code).toBe(0);
    const servers = JSON.parse(JSON.parse(r.stdout).text);
    expect(servers).toHaveLength(1);
    expect(servers[0]).toMatchObject({ name: "files", args: ["-n"], env: [{ name: "FOO", value: "bar" }] });
    expect(servers[0].command).toMatch(/^\/.*\/cat$/);
  });

  test("session/update variants the client does not know: quiet in text, passed through as sent in stream-json", async () => {
    const r = await echo("noise");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("after noise\n");
    expect(r.stderr).toBe("");
    const s = await echo("noise", "--output", "stream-json");
    const lines = s.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.some((l) => l.update?.sessionUpdate === "_echo_vendor" && l.update.x === 1)).toBe(true);
  });
});

describe("usage errors exit 2 with one line", () => {
  const cases: [string, string[], RegExp][] = [
    ["empty prompt", ["--agent", ECHO, "  "], /the prompt is empty/],
    ["missing prompt", ["--agent", ECHO], /missing required argument/],
    ["unknown output", ["--output", "xml", "hi"], /xml/],
    ["bad timeout", ["--timeout", "soon", "hi"], /--timeout must be a positive number/],
    ["agent not found", ["--agent", "no-such-agent-cmd --x", "hi"], /agent command not found: no-such-agent-cmd/],
    ["unbalanced quote", ["--agent", "bun 'x", "hi"], /unterminated ' quote/],
    ["bad --mcp", ["--mcp", "nocommand", "hi"], /--mcp must be NAME=CMD/],
    ["bad --cwd", ["--cwd", "/no/such/dir", "hi"], /--cwd must be an existing directory/],
  ];
  for (const [name, args, re] of cases) {
    test(name, async () => {
      const r = await prompt(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(re);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stdout).toBe("");
    });
  }

  test("empty stdin prompt", async () => {
    const r = await prompt(["--agent", ECHO, "-"], { input: "\n" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("the prompt on stdin is empty");
  });
});

// `tendril agent` (the default --agent) against the fake LLM; skipped until the binary has the agent mode.
describe("against tendril agent and the fake LLM", () => {
  let fake: FakeLlm;
  beforeAll(async () => {
    fake = await startFakeLlm();
  });
  afterAll(() => fake.close());
  const llmEnv = () => ({
    TENDRIL_PROVIDER: "anthropic",
    TENDRIL_MODEL: "fake-model",
    ANTHROPIC_API_KEY: "test-key",
    ANTHROPIC_BASE_URL: fake.anthropicBaseUrl,
  });

  test("a text answer exits 0", async () => {
    fake.script([{ text: "All tests pass." }]);
    const r = await prompt(["--cwd", freshDir(), "run the tests"], { env: llmEnv() });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("All tests pass.\n");
  });

  const edit = { name: "dev__str_replace", input: { path: "a.txt", old_str: "hello", new_str: "goodbye" } };

  test("default approval denies dev__str_replace: the file is unchanged", async () => {
    const dir = freshDir();
    writeFileSync(join(dir, "a.txt"), "hello\n");
    fake.script([{ toolCalls: [edit] }, { text: "Could not edit." }]);
    const r = await prompt(["--cwd", dir, "--output", "json", "edit a.txt"], { env: llmEnv() });
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("hello\n");
    const obj = JSON.parse(r.stdout);
    expect(obj.toolCalls).toHaveLength(1);
    expect(obj.toolCalls[0]).toMatchObject({ kind: "edit", status: "failed" });
  });

  test("--approve all lets dev__str_replace change the file", async () => {
    const dir = freshDir();
    writeFileSync(join(dir, "a.txt"), "hello\n");
    fake.script([{ toolCalls: [edit] }, { text: "Edited." }]);
    const r = await prompt(["--cwd", dir, "--approve", "all", "edit a.txt"], { env: llmEnv() });
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("goodbye\n");
    expect(r.stdout).toBe("Edited.\n");
    expect(r.stderr).toMatch(/^tool .*a\.txt … completed\n$/);
  });

  // The default agent runs inside the prompt's process: its tools' process groups must still die on
  // every way out, and the session it saved must load in a separate `tendril agent`.
  const hang = (dir: string) => ({ name: "dev__shell", input: { command: `echo $$ > ${join(dir, "pid")}; exec sleep 300` } });

  test("--timeout: the default agent's hanging shell command is killed, exit 124, within the bound", async () => {
    const dir = freshDir();
    fake.script([{ toolCalls: [hang(dir)] }]);
    // 3 s: the command must have started before the clock runs out (a busy machine took over 1 s to get there).
    const r = await prompt(["--cwd", dir, "--approve", "all", "--timeout", "3", "wait forever"], { env: llmEnv() });
    expect(r.code).toBe(124);
    expect(r.ms).toBeLessThan(15_000);
    const pid = Number(readFileSync(join(dir, "pid"), "utf8"));
    expect(await waitGone(pid, 2000)).toBe(true);
  });

  test("Ctrl-C: the default agent's shell command is killed and the prompt exits 130", async () => {
    const dir = freshDir();
    fake.script([{ toolCalls: [hang(dir)] }]);
    const run = prompt(["--cwd", dir, "--approve", "all", "wait forever"], { env: llmEnv(), onSpawn: (child) => void waitForFile(join(dir, "pid")).then(() => child.kill("SIGINT")) });
    const r = await run;
    expect(r.code).toBe(130);
    const pid = Number(readFileSync(join(dir, "pid"), "utf8"));
    expect(await waitGone(pid, 2000)).toBe(true);
  });

  test("an LLM failure exits 1 with the agent's message", async () => {
    fake.script([{ fault: { status: 401 } }]);
    const r = await prompt(["--cwd", freshDir(), "hi"], { env: llmEnv() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("tendril prompt: the agent failed during session/prompt:");
  });
});

describe("authentication", () => {
  test("regression: tendril prompt never authenticated; an agent requiring it is authenticated with an env_var method whose variable is set", async () => {
    const ok = await prompt(["--agent", `ECHO_REQUIRE_AUTH=ECHO_KEY ECHO_KEY=secret ${ECHO}`, "say authed"]);
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("authed");
    const missing = await prompt(["--agent", `ECHO_REQUIRE_AUTH=ECHO_KEY ${ECHO}`, "say hi"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("api-key (set ECHO_KEY)");
  });
});
