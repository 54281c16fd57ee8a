// End-to-end tests of `tendril prompt`'s CI flags through the built binary (issue 25): --max-turns,
// --model/--mode, --system-prompt/--append-system-prompt, -o FILE, the json result's run fields and
// bad input, against Tendril's own agent with the loopback fake LLM and a third-party echo agent.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, type RunResult, runBinAsync } from "./binary.ts";
import { type FakeLlm, startFakeLlm } from "./fake-llm.ts";

const ECHO = `'${process.execPath}' '${join(ROOT, "tests", "fixtures", "echo-agent.ts")}'`;
let work: string;
let counter = 0;
let fake: FakeLlm;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "tendril-prompt-ci-"));
  fake = await startFakeLlm();
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

const llmEnv = () => ({
  TENDRIL_PROVIDER: "anthropic",
  TENDRIL_MODEL: "fake-model",
  ANTHROPIC_API_KEY: "test-key",
  ANTHROPIC_BASE_URL: fake.anthropicBaseUrl,
});

/** `tendril prompt ARGS` without blocking this process (the fake LLM answers from here). */
function prompt(args: string[], extraEnv: Record<string, string> = {}): Promise<RunResult> {
  const env = {
    ...(process.env as Record<string, string>),
    XDG_CONFIG_HOME: join(work, "config"),
    XDG_STATE_HOME: join(work, "state"),
    XDG_CACHE_HOME: join(work, "cache"),
    TENDRIL_LOG: "warn",
    ...llmEnv(),
    ...extraEnv,
  };
  return runBinAsync(["prompt", ...args], { env, cwd: work, timeoutMs: 25_000 });
}

const shell = (command: string) => ({ name: "dev__shell", input: { command } });
const lastSystem = () => JSON.stringify(fake.requests.at(-1)?.body?.system ?? "");

describe("--max-turns", () => {
  test("the (N+1)-th model turn is cancelled: exit 5, one line naming the limit, its tool never runs", async () => {
    const dir = freshDir();
    fake.script([{ toolCalls: [shell("touch one")] }, { toolCalls: [shell("touch two")] }]);
    const r = await prompt(["--cwd", dir, "--approve", "all", "--max-turns", "1", "--output", "json", "work"]);
    expect(r.code).toBe(5);
    expect(r.stderr).toBe("tendril prompt: stopped at --max-turns 1: the agent began another model turn, which was cancelled\n");
    expect(existsSync(join(dir, "one"))).toBe(true);
    expect(existsSync(join(dir, "two"))).toBe(false);
    expect(JSON.parse(r.stdout)).toMatchObject({ stopReason: null, numTurns: 1 });
    expect(fake.remaining()).toBe(0); // the second turn was asked for, then cancelled
  });

  test("a run within the limit ends normally and counts its turns", async () => {
    const dir = freshDir();
    fake.script([{ toolCalls: [shell("touch one")] }, { toolCalls: [shell("touch two")] }, { text: "Done." }]);
    const r = await prompt(["--cwd", dir, "--approve", "all", "--max-turns", "3", "--output", "json", "work"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ stopReason: "end_turn", text: "Done.", numTurns: 3 });
    expect(existsSync(join(dir, "two"))).toBe(true);
  });

  for (const bad of ["0", "1.5", "abc", "-1"]) {
    test(`--max-turns ${bad} is a usage error before any agent starts`, async () => {
      const before = fake.requests.length;
      const r = await prompt(["--max-turns", bad, "hi"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`tendril prompt: --max-turns must be a whole number of turns, 1 or more, got "${bad}"\n`);
      expect(fake.requests.length).toBe(before);
    });
  }
});

describe("the built-in agent's settings", () => {
  const cases: [string, Record<string, string>, string][] = [
    ["TENDRIL_PROMPT_CACHE", { TENDRIL_PROMPT_CACHE: "sometimes" }, 'TENDRIL_PROMPT_CACHE must be one of on, off, 1h, got "sometimes"'],
    ["TENDRIL_OPENAI_API", { TENDRIL_PROVIDER: "openai", OPENAI_API_KEY: "k", OPENAI_BASE_URL: "http://127.0.0.1:9/v1", TENDRIL_OPENAI_API: "soap" }, 'TENDRIL_OPENAI_API must be one of responses, chat, got "soap"'],
  ];
  for (const [name, env, message] of cases) {
    test(`a bad ${name} is the prompt's usage error (exit 2 naming it), before any request`, async () => {
      const before = fake.requests.length;
      const r = await prompt(["--cwd", freshDir(), "hi"], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`tendril prompt: ${message}\n`);
      expect(fake.requests.length).toBe(before);
    });
  }
});

describe("--model and --mode", () => {
  test("an offered mode and model are set; the model reaches the LLM", async () => {
    fake.script([{ text: "ok" }]);
    const r = await prompt(["--cwd", freshDir(), "--mode", "read-only", "--model", "fake-model", "hi"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(fake.requests.at(-1)?.body?.model).toBe("fake-model");
  });

  test("an id the agent does not list is exit 2 naming the choices", async () => {
    const mode = await prompt(["--cwd", freshDir(), "--mode", "turbo", "hi"]);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toBe('tendril prompt: --mode "turbo" is not offered by the agent; it offers: ask, auto-edit, yolo, read-only, plan\n');
    const model = await prompt(["--cwd", freshDir(), "--model", "gpt-9", "hi"]);
    expect(model.code).toBe(2);
    expect(model.stderr).toBe('tendril prompt: --model "gpt-9" is not offered by the agent; it offers: fake-model, fake-model-large\n');
  });

  test("--model with Tendril's own agent: any model the provider lists is taken; a plain run never asks for the list", async () => {
    const listings = fake.modelListings();
    fake.script([{ text: "ok" }]);
    const plain = await prompt(["--cwd", freshDir(), "hi"]);
    expect(plain.code).toBe(0);
    expect(fake.modelListings()).toBe(listings);
    fake.script([{ text: "ok" }]);
    const r = await prompt(["--cwd", freshDir(), "--model", "fake-model-large", "hi"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(fake.requests.at(-1)?.body?.model).toBe("fake-model-large");
    expect(fake.modelListings()).toBe(listings + 1);
  });

  test("/model typed as the prompt switches to a model the provider lists, asking for the list only then", async () => {
    const listings = fake.modelListings();
    const r = await prompt(["--cwd", freshDir(), "--output", "json", "/model fake-model-large"]);
    expect(r.code).toBe(0);
    expect(fake.modelListings()).toBe(listings + 1);
    expect(JSON.parse(r.stdout).text).toContain("fake-model-large");
  });

  test("an agent without modes: --mode is exit 2 saying so", async () => {
    const r = await prompt(["--agent", ECHO, "--mode", "plan", "say hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("tendril prompt: --mode: the agent offers no session modes\n");
  });

  test("an empty --model is a usage error", async () => {
    const r = await prompt(["--model", "", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("tendril prompt: --model must not be empty\n");
  });
});

describe("system prompt", () => {
  test("--system-prompt replaces it; --append-system-prompt adds to it", async () => {
    fake.script([{ text: "ok" }]);
    const replaced = await prompt(["--cwd", freshDir(), "--system-prompt", "You are a terse reviewer.", "hi"]);
    expect(replaced.code).toBe(0);
    const replacedSystem = lastSystem();
    expect(replacedSystem).toContain("You are a terse reviewer.");
    fake.script([{ text: "ok" }]);
    const plain = await prompt(["--cwd", freshDir(), "hi"]);
    expect(plain.code).toBe(0);
    const defaultSystem = lastSystem();
    expect(defaultSystem).not.toContain("terse reviewer");
    fake.script([{ text: "ok" }]);
    const appended = await prompt(["--cwd", freshDir(), "--append-system-prompt", "Always answer in French.", "hi"]);
    expect(appended.code).toBe(0);
    expect(lastSystem()).toContain("Always answer in French.");
    expect(lastSystem().length).toBeGreaterThan(defaultSystem.length);
  });

  test("both at once is a usage error", async () => {
    const r = await prompt(["--system-prompt", "a", "--append-system-prompt", "b", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("tendril prompt: --system-prompt and --append-system-prompt exclude each other: give one\n");
  });
});

describe("-o FILE and the json result", () => {
  test("-o also writes the final answer text to FILE; stdout is unchanged", async () => {
    const file = join(freshDir(), "answer.txt");
    fake.script([{ text: "All good." }]);
    const r = await prompt(["--cwd", work, "-o", file, "check"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("All good.\n");
    expect(readFileSync(file, "utf8")).toBe("All good.\n");
  });

  test("--output json -o FILE: the result object on stdout, with sessionId, numTurns, durationMs and usage; the answer text in FILE", async () => {
    const file = join(freshDir(), "answer.txt");
    fake.script([{ text: "All good." }]);
    const r = await prompt(["--cwd", work, "--output", "json", "--output-file", file, "check"]);
    expect(r.code).toBe(0);
    const obj = JSON.parse(r.stdout);
    expect(obj).toMatchObject({ stopReason: "end_turn", text: "All good.", toolCalls: [], numTurns: 1 });
    expect(typeof obj.sessionId).toBe("string");
    expect(obj.durationMs).toBeGreaterThanOrEqual(0);
    expect(obj.usage).toMatchObject({ inputTokens: expect.any(Number), outputTokens: expect.any(Number) });
    expect(readFileSync(file, "utf8")).toBe("All good.\n");
  });

  test("-o into a missing directory is exit 2 before any agent starts", async () => {
    const before = fake.requests.length;
    const r = await prompt(["-o", join(work, "no", "such", "dir", "x.txt"), "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tendril prompt: -o .*x\.txt: cannot write the file: ENOENT\n$/);
    expect(fake.requests.length).toBe(before);
  });
});
