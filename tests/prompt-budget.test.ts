// End-to-end tests of `tendril prompt --max-budget-usd` and `--no-session-persistence` through the built
// binary (SPEC §9): exit 6 naming what was spent with no LLM request past the budget, exit 2 before
// anything is sent when the built-in agent has no price, exit 2 when another agent reports no cost,
// `usage` and `cost` in the json result, and the bad inputs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, type RunResult, runBinAsync } from "./binary.ts";
import { agentEnv } from "./agent-env.ts";
import { type FakeLlm, startFakeLlm } from "./fake-llm.ts";

const ECHO = `'${process.execPath}' '${join(ROOT, "tests", "fixtures", "echo-agent.ts")}'`;
const SDK_AGENT = `'${process.execPath}' '${join(ROOT, "tests", "fixtures", "sdk-agent.ts")}'`;
let work: string;
let counter = 0;
let fake: FakeLlm;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "tendril-prompt-budget-"));
  fake = await startFakeLlm();
  mkdirSync(join(work, "config", "tendril"), { recursive: true });
  // $1000 a million tokens in and out: a response of a thousand input tokens costs $1.
  writeFileSync(join(work, "config", "tendril", "config.toml"), '[prices."priced-model"]\ninput = 1000\noutput = 1000\ncache_write = 1250\ncache_read = 100\n');
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

function prompt(args: string[], env: Record<string, string> = {}): Promise<RunResult> {
  return runBinAsync(["prompt", ...args], {
    env: {
      ...(process.env as Record<string, string>),
      ...agentEnv(fake, work),
      TENDRIL_MODEL: "priced-model",
      SDK_AGENT_STATE: join(work, "sdk-agent-state"),
      ...env,
    },
    cwd: work,
    timeoutMs: 25_000,
  });
}

const shell = (command: string) => ({ name: "dev__shell", input: { command } });
const thousand = { input: 1000, output: 0 };

describe("--max-budget-usd against tendril agent", () => {
  test("the response whose cost reaches the budget ends the run: exit 6 naming the spend, no request past it", async () => {
    const dir = freshDir();
    const before = fake.requests.length;
    fake.script([
      { toolCalls: [shell("touch one")], usage: thousand },
      { toolCalls: [shell("touch two")], usage: thousand },
    ]);
    const r = await prompt(["--cwd", dir, "--approve", "all", "--max-budget-usd", "1.5", "--output", "json", "work"]);
    expect(r.stderr).toBe("tendril prompt: spent $2 in this run ($2 in the session so far, as the agent reported), which reaches --max-budget-usd 1.5: the turn was cancelled\n");
    expect(r.code).toBe(6);
    expect(fake.requests.length - before).toBe(2);
    expect(existsSync(join(dir, "one"))).toBe(true);
    expect(existsSync(join(dir, "two"))).toBe(false);
    const obj = JSON.parse(r.stdout);
    expect(obj.cost).toEqual({ amount: 2, currency: "USD" });
    expect(obj.sessionCost).toEqual({ amount: 2, currency: "USD" });
    expect(obj.usage).toMatchObject({ inputTokens: 2000, outputTokens: 0, cachedReadTokens: 0, cachedWriteTokens: 0 });
  });

  test("within the budget the run ends normally; the json result has ACP's usage names and the cost", async () => {
    fake.script([{ text: "Done.", usage: { input: 1, output: 2 } }]);
    const r = await prompt(["--cwd", freshDir(), "--max-budget-usd", "5", "--output", "json", "hi"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const obj = JSON.parse(r.stdout);
    expect(obj.usage).toMatchObject({ inputTokens: 1, outputTokens: 2, cachedReadTokens: 0, cachedWriteTokens: 0 });
    expect(obj.cost).toEqual({ amount: 0.003, currency: "USD" });
  });

  test("a model it has no price for: exit 2 before anything is sent, saying how to add one", async () => {
    const before = fake.requests.length;
    const r = await prompt(["--cwd", freshDir(), "--max-budget-usd", "1", "hi"], { TENDRIL_MODEL: "mystery-model" });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `tendril prompt: --max-budget-usd cannot be kept: the built-in agent has no price for model mystery-model; add [prices."mystery-model"] (input, output, cache_write, cache_read in USD per million tokens) to ${join(work, "config", "tendril", "config.toml")}\n`,
    );
    expect(fake.requests.length).toBe(before);
  });

  test("a subagent's spend counts while it runs: the response that reaches the budget stops it, no request past it", async () => {
    const dir = freshDir();
    const before = fake.requests.length;
    fake.script([
      { toolCalls: [{ name: "agent__task", input: { description: "touch files", prompt: "touch the files" } }], usage: { input: 1, output: 0 } },
      { toolCalls: [shell("touch one")], usage: thousand },
      { toolCalls: [shell("touch two")], usage: thousand },
    ]);
    const r = await prompt(["--cwd", dir, "--approve", "all", "--max-budget-usd", "1.5", "--output", "json", "work"]);
    expect(r.code).toBe(6);
    expect(r.stderr).toBe("tendril prompt: spent $2.001 in this run ($2.001 in the session so far, as the agent reported), which reaches --max-budget-usd 1.5: the turn was cancelled\n");
    expect(fake.requests.length - before).toBe(3);
    expect(existsSync(join(dir, "one"))).toBe(true);
    expect(existsSync(join(dir, "two"))).toBe(false);
    expect(fake.remaining()).toBe(0);
  });

  test("a cost that stops being reported (a subagent on a model without a price) ends the run: exit 2, the budget cannot be kept", async () => {
    const dir = freshDir();
    const before = fake.requests.length;
    fake.script([
      { toolCalls: [{ name: "agent__task", input: { description: "touch files", prompt: "touch the files", model: "mystery-model" } }], usage: { input: 1, output: 0 } },
      { toolCalls: [shell("touch one")], usage: thousand },
    ]);
    const config = join(work, "config-two-models");
    mkdirSync(join(config, "tendril"), { recursive: true });
    writeFileSync(join(config, "tendril", "config.toml"), 'models = ["priced-model", "mystery-model"]\n[prices."priced-model"]\ninput = 1000\noutput = 1000\ncache_write = 1250\ncache_read = 100\n');
    const r = await prompt(["--cwd", dir, "--approve", "all", "--max-budget-usd", "1.5", "--output", "json", "work"], { XDG_CONFIG_HOME: config });
    expect(r.code).toBe(2);
    expect(r.stderr).toEndWith("tendril prompt: --max-budget-usd 1.5 cannot be kept: the agent stopped reporting its cost (usage_update.cost); the turn was cancelled\n");
    expect(fake.requests.length - before).toBe(2);
    expect(existsSync(join(dir, "one"))).toBe(false);
    expect(fake.remaining()).toBe(0);
  });

  test("--continue counts this run only: earlier runs' spend does not stop a nightly job; the json result gives this run's cost and the session's", async () => {
    const dir = freshDir();
    fake.script([{ text: "First.", usage: thousand }]);
    const first = await prompt(["--cwd", dir, "--max-budget-usd", "1.5", "--output", "json", "first"]);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout).cost).toEqual({ amount: 1, currency: "USD" });
    // The session has spent $1; this run spends $1 more: within 1.5 for the run, over it for the session.
    fake.script([{ text: "Second.", usage: thousand }]);
    const second = await prompt(["--cwd", dir, "--continue", "--max-budget-usd", "1.5", "--output", "json", "second"]);
    expect(second.stderr).toBe("");
    expect(second.code).toBe(0);
    const obj = JSON.parse(second.stdout);
    expect(obj.text).toBe("Second.");
    expect(obj.cost).toEqual({ amount: 1, currency: "USD" });
    expect(obj.sessionCost).toEqual({ amount: 2, currency: "USD" });
    // and a run that does reach the budget is stopped at this run's spend
    fake.script([{ toolCalls: [shell("true")], usage: thousand }, { toolCalls: [shell("true")], usage: thousand }]);
    const third = await prompt(["--cwd", dir, "--continue", "--approve", "all", "--max-budget-usd", "1.5", "--output", "json", "third"]);
    expect(third.code).toBe(6);
    expect(third.stderr).toBe("tendril prompt: spent $2 in this run ($4 in the session so far, as the agent reported), which reaches --max-budget-usd 1.5: the turn was cancelled\n");
  });

  for (const bad of ["0", "-1", "abc", "", "Infinity"]) {
    test(`--max-budget-usd ${JSON.stringify(bad)} is a usage error naming it`, async () => {
      const before = fake.requests.length;
      const r = await prompt(["--max-budget-usd", bad, "hi"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`tendril prompt: --max-budget-usd must be a positive number of US dollars, got ${JSON.stringify(bad)}\n`);
      expect(fake.requests.length).toBe(before);
    });
  }
});

describe("--max-budget-usd against other agents", () => {
  test("an agent that reports its cost: exit 6 once it reaches the budget", async () => {
    const r = await prompt(["--agent", SDK_AGENT, "--cwd", work, "--max-budget-usd", "0.01", "--output", "json", "say hello"]);
    expect(r.code).toBe(6);
    expect(r.stderr).toBe("tendril prompt: spent $0.0125 in this run ($0.0125 in the session so far, as the agent reported), which reaches --max-budget-usd 0.01: the turn was cancelled\n");
    expect(JSON.parse(r.stdout).cost).toEqual({ amount: 0.0125, currency: "USD" });
  });

  test("an agent whose first usage_update has no cost: the turn is cancelled, exit 2 saying the budget cannot be kept", async () => {
    const r = await prompt(["--agent", ECHO, "--cwd", work, "--max-budget-usd", "1", "say hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toEndWith("tendril prompt: --max-budget-usd 1 cannot be kept: the agent reports no cost (usage_update.cost); the turn was cancelled\n");
  });
});

describe("--no-session-persistence", () => {
  const files = () => (existsSync(join(work, "state", "tendril", "sessions")) ? readdirSync(join(work, "state", "tendril", "sessions")) : []);

  test("the built-in agent writes no session file; without the flag it does", async () => {
    fake.script([{ text: "one" }, { text: "two" }]);
    const off = await prompt(["--cwd", freshDir(), "--no-session-persistence", "--output", "json", "hi"]);
    expect(off.code).toBe(0);
    expect(files()).not.toContain(`${JSON.parse(off.stdout).sessionId}.jsonl`);
    const on = await prompt(["--cwd", freshDir(), "--output", "json", "hi"]);
    expect(on.code).toBe(0);
    expect(files()).toContain(`${JSON.parse(on.stdout).sessionId}.jsonl`);
  });

  test("with --agent, or with --resume, it is refused with one line", async () => {
    const other = await prompt(["--agent", ECHO, "--no-session-persistence", "say hi"]);
    expect(other.code).toBe(2);
    expect(other.stderr).toBe("tendril prompt: --no-session-persistence applies to the built-in agent only: with --agent, use that agent's own setting\n");
    const resumed = await prompt(["--no-session-persistence", "--resume", "abc", "hi"]);
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toBe("tendril prompt: --no-session-persistence starts a session that is not saved: it cannot continue one (--resume, --continue)\n");
  });
});
