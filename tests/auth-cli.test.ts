// `tendril agent login` / `logout` through the built binary (stdin not a terminal: the scriptable
// path), and `tendril prompt` against agents without a key: the in-process tendril agent, and a
// third-party agent that offers only a terminal method.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, ROOT } from "./binary.ts";
import { type FakeLlm, startFakeLlm } from "./fake-llm.ts";

let work: string;
let counter = 0;
let fake: FakeLlm;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "tendril-auth-cli-"));
  fake = await startFakeLlm();
});
afterAll(() => {
  fake.close();
  rmSync(work, { recursive: true, force: true });
});

/** A home of its own: no key in the environment, XDG dirs inside it. */
function home(): { dir: string; env: Record<string, string>; file: string } {
  const dir = join(work, `home-${++counter}`);
  mkdirSync(dir, { recursive: true });
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_STATE_HOME: join(dir, "state"),
    XDG_CACHE_HOME: join(dir, "cache"),
    TENDRIL_LOG: "warn",
  };
  return { dir, env, file: join(dir, "config", "tendril", "credentials.toml") };
}

function run(args: string[], env: Record<string, string>, input = "", cwd = work): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(BIN, args, { env, cwd, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
  child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
  child.stdin.on("error", () => {});
  child.stdin.end(input);
  const guard = setTimeout(() => child.kill("SIGKILL"), 25_000);
  return new Promise((resolve) => {
    child.on("close", (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("tendril agent login / logout (stdin not a terminal)", () => {
  test("the key from one stdin line is stored 0600 under $XDG_CONFIG_HOME/tendril; nothing echoes it", async () => {
    const h = home();
    const r = await run(["agent", "login", "--provider", "anthropic"], h.env, "sk-ant-secret\n");
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(h.file);
    expect(r.stdout + r.stderr).not.toContain("sk-ant-secret");
    expect(statSync(h.file).mode & 0o777).toBe(0o600);
    expect(readFileSync(h.file, "utf8")).toContain('api_key = "sk-ant-secret"');
    const o = await run(["agent", "login", "--provider", "openai", "--base-url", "http://127.0.0.1:11434/v1"], h.env, "sk-o");
    expect(o.code).toBe(0);
    const text = readFileSync(h.file, "utf8");
    expect(text).toContain("sk-ant-secret");
    expect(text).toContain('base_url = "http://127.0.0.1:11434/v1"');
  });

  test("bad input is exit 2 naming what to do: no --provider, an unknown provider, an empty key", async () => {
    const h = home();
    const none = await run(["agent", "login"], h.env, "sk\n");
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--provider is required when stdin is not a terminal");
    const bad = await run(["agent", "login", "--provider", "gemini"], h.env, "sk\n");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("anthropic or openai");
    const empty = await run(["agent", "login", "--provider", "openai"], h.env, "\n");
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("no key given");
    expect(existsSync(h.file)).toBe(false);
  });

  test("a credentials file group or others can read is refused with the chmod fix, and left as it was", async () => {
    const h = home();
    await run(["agent", "login", "--provider", "anthropic"], h.env, "sk-1\n");
    chmodSync(h.file, 0o644);
    const r = await run(["agent", "login", "--provider", "openai"], h.env, "sk-2\n");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`chmod 600 ${h.file}`);
    expect(readFileSync(h.file, "utf8")).not.toContain("sk-2");
  });

  test("bad TOML is named with its file and line; logout without --provider still removes the file", async () => {
    const h = home();
    mkdirSync(join(h.file, ".."), { recursive: true });
    writeFileSync(h.file, '[anthropic]\napi_key = "sk"\n[openai\n', { mode: 0o600 });
    const r = await run(["agent", "logout", "--provider", "openai"], h.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${h.file}:3:`);
    const all = await run(["agent", "logout"], h.env);
    expect(all.code).toBe(0);
    expect(existsSync(h.file)).toBe(false);
  });

  test("logout --provider removes that provider's key only; logout is idempotent", async () => {
    const h = home();
    await run(["agent", "login", "--provider", "anthropic"], h.env, "sk-a\n");
    await run(["agent", "login", "--provider", "openai"], h.env, "sk-o\n");
    const r = await run(["agent", "logout", "--provider", "anthropic"], h.env);
    expect(r.code).toBe(0);
    const text = readFileSync(h.file, "utf8");
    expect(text).not.toContain("sk-a");
    expect(text).toContain("sk-o");
    expect((await run(["agent", "logout"], h.env)).code).toBe(0);
    const again = await run(["agent", "logout"], h.env);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("no stored keys");
  });
});

// util-linux `script` gives the login a terminal; each answer is typed once its question is shown.
const hasScript = spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0;

describe.skipIf(!hasScript)("tendril agent login on a terminal", () => {
  test("asks provider, base URL and key; the key is not echoed, backspace edits it; stored 0600", async () => {
    const h = home();
    const child = spawn("script", ["-qec", `'${BIN}' agent login`, "/dev/null"], { env: { ...h.env, TERM: "dumb" }, stdio: ["pipe", "pipe", "pipe"] });
    let screen = "";
    const answers: [string, string][] = [["Provider", "openai\n"], ["Base URL", "http://127.0.0.1:11434/v1\n"], ["(not shown)", "sk-tty-secrex\u007ft\r"]];
    child.stdout.setEncoding("utf8").on("data", (s: string) => {
      screen += s;
      while (answers.length > 0 && screen.includes(answers[0]![0])) child.stdin.write(answers.shift()![1]);
    });
    const guard = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    clearTimeout(guard);
    expect(code).toBe(0);
    expect(screen).toContain("stored the openai key");
    expect(screen).not.toContain("sk-tty");
    expect(statSync(h.file).mode & 0o777).toBe(0o600);
    const text = readFileSync(h.file, "utf8");
    expect(text).toContain('api_key = "sk-tty-secret"');
    expect(text).toContain('base_url = "http://127.0.0.1:11434/v1"');
  });
});

describe("tendril prompt against an agent without a key", () => {
  test("the in-process agent: exit 1 with one line naming tendril agent login; after a login it answers from the stored key and base URL", async () => {
    const h = home();
    const ws = join(h.dir, "ws");
    mkdirSync(ws);
    const env = { ...h.env, TENDRIL_PROVIDER: "anthropic", TENDRIL_MODEL: "fake-model" };
    const r = await run(["prompt", "--cwd", ws, "hi"], env);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("-32000");
    expect(lines[0]).toContain("tendril agent login");
    const login = await run(["agent", "login", "--provider", "anthropic", "--base-url", fake.anthropicBaseUrl], env, "sk-stored\n");
    expect(login.code).toBe(0);
    fake.script([{ text: "answered with the stored key" }]);
    const ok = await run(["prompt", "--cwd", ws, "hi"], env);
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe("answered with the stored key\n");
  });

  test("an agent offering only a terminal method: exit 1 with one line giving the command to run once", async () => {
    const h = home();
    const agent = `'${process.execPath}' '${join(ROOT, "tests", "fixtures", "terminal-auth-agent.ts")}'`;
    const r = await run(["prompt", "--agent", agent, "hi"], h.env);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`run once in a terminal: SETUP_MODE=1 ${process.execPath} ${join(ROOT, "tests", "fixtures", "terminal-auth-agent.ts")} --setup 'two words'`);
  });

  test("an agent offering an agent method and a terminal one: authenticated through the agent method, the prompt runs", async () => {
    const h = home();
    const agent = `AUTH_AGENT_METHOD=1 '${process.execPath}' '${join(ROOT, "tests", "fixtures", "terminal-auth-agent.ts")}'`;
    const r = await run(["prompt", "--agent", agent, "hi"], h.env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("authenticated with token\n");
  });
});
