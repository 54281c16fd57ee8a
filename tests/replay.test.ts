// Record/replay as a CI user pins an agent run: the shipped demo cassette reproduces its file edits
// through the real tools, a recording replays to the same edits, and a diverging replay fails loudly.
import { afterAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeLlm } from "./fake-llm.ts";
import { ROOT, runBin, runBinAsync } from "./binary.ts";

const tmp = mkdtempSync(join(tmpdir(), "tendril-replay-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const CASSETTE = join(ROOT, "scripts", "demo", "fix-greeting.jsonl");
const PROMPT = "greet.sh prints a misspelled greeting. Fix it and make sure check.sh passes.";

function workspace(name: string): string {
  const dir = join(tmp, name);
  cpSync(join(ROOT, "scripts", "demo", "workspace"), dir, { recursive: true });
  return dir;
}

function baseEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmp, XDG_CACHE_HOME: join(tmp, "cache") };
  return { ...env, ...extra };
}

test("the shipped demo cassette replays offline and reproduces its edit with the real tools", () => {
  const dir = workspace("demo");
  const r = runBin(["prompt", "--cwd", dir, "--approve", "all", PROMPT], {
    env: baseEnv({ TENDRIL_PROVIDER: "replay", TENDRIL_REPLAY: CASSETTE }),
  });
  expect(r.stderr).not.toContain("diverged");
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("now passes");
  expect(readFileSync(join(dir, "greet.sh"), "utf8")).toContain('echo "Hello, ${1:-world}!"');
  expect(r.stderr).toContain("tool dev__str_replace: str_replace greet.sh … completed");
});

test("without approval the replayed run cannot edit: the file is unchanged", () => {
  const dir = workspace("denied");
  const r = runBin(["prompt", "--cwd", dir, PROMPT], {
    env: baseEnv({ TENDRIL_PROVIDER: "replay", TENDRIL_REPLAY: CASSETTE }),
  });
  expect(readFileSync(join(dir, "greet.sh"), "utf8")).toContain('echo "Helo,');
  expect(r.stderr).toContain("denied");
});

test("a run recorded with TENDRIL_RECORD replays to the same file edits", async () => {
  const fake = await startFakeLlm();
  try {
    fake.script([
      { toolCalls: [{ id: "e1", name: "dev__str_replace", input: { path: "greet.sh", old_str: "Helo", new_str: "Hello" } }] },
      { text: "done" },
    ]);
    const record = join(tmp, "recorded.jsonl");
    const first = workspace("record");
    const live = await runBinAsync(["prompt", "--cwd", first, "--approve", "all", "fix it"], {
      env: baseEnv({
        TENDRIL_PROVIDER: "openai",
        OPENAI_BASE_URL: fake.openaiBaseUrl,
        OPENAI_API_KEY: "test",
        TENDRIL_RECORD: record,
      }),
    });
    expect(live.code).toBe(0);
    const second = workspace("replayed");
    const again = runBin(["prompt", "--cwd", second, "--approve", "all", "fix it"], {
      env: baseEnv({ TENDRIL_PROVIDER: "replay", TENDRIL_REPLAY: record }),
    });
    if (again.code !== 0) console.error(again.stderr, readFileSync(record, "utf8").slice(0, 3000));
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("done");
    expect(readFileSync(join(second, "greet.sh"), "utf8")).toBe(readFileSync(join(first, "greet.sh"), "utf8"));
    expect(readFileSync(join(second, "greet.sh"), "utf8")).toContain("Hello,");
  } finally {
    await fake.close();
  }
});

test("a diverging replay fails with exit 1 and a message naming the step", () => {
  const bad = join(tmp, "diverging.jsonl");
  writeFileSync(
    bad,
    '{"v":1,"tools":["agent__task","dev__shell","dev__shell_kill","dev__shell_read","dev__shell_write","dev__str_replace","dev__todo"],"reply":{"toolCalls":[{"id":"a","name":"dev__todo","input":{}}]}}\n' +
      '{"v":1,"tools":["other__tool"],"reply":{"text":"never"}}\n',
  );
  const r = runBin(["prompt", "--cwd", workspace("diverge"), "--approve", "all", "go"], {
    env: baseEnv({ TENDRIL_PROVIDER: "replay", TENDRIL_REPLAY: bad }),
  });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("step 2");
  expect(r.stdout).not.toContain("never");
});

test("a replay that runs out of recorded calls fails naming how many were recorded", () => {
  const short = join(tmp, "short.jsonl");
  writeFileSync(short, '{"v":1,"reply":{"toolCalls":[{"id":"a","name":"dev__todo","input":{}}]}}\n');
  const r = runBin(["prompt", "--cwd", workspace("short"), "--approve", "all", "go"], {
    env: baseEnv({ TENDRIL_PROVIDER: "replay", TENDRIL_REPLAY: short }),
  });
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/replay exhausted.*\(1\)/);
});
