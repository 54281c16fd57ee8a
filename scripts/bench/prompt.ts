// Benchmark: `tendril prompt` end to end (the agent in-process or spawned, initialize, session/new with
// the dev tools, one LLM turn from a zero-latency fake LLM, shutdown) — the floor of a CI step — against
// the process floor (`dist/tendril --version`) and the client alone driving a minimal third-party agent.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startFakeLlm } from "../../tests/fake-llm.ts";
import { agentEnv } from "../../tests/agent-env.ts";
import { BUILT, buildLabel, compareFns, type FnCase, type Row } from "./harness.ts";

const ECHO_AGENT = resolve("tests/fixtures/echo-agent.ts");

/** Runs the binary to completion; a non-zero exit fails the benchmark (a broken run measures nothing). */
function runOnce(bin: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(bin, args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.on("error", fail);
    child.on("close", (code) => (code === 0 ? done() : fail(new Error(`${args.join(" ")}: exit ${code}\n${stderr}`))));
  });
}

/** `tendril --version` against one text-only `tendril prompt` with its agent in-process, interleaved
 *  `runs` times; unless `quick`, also the client driving a bun agent and a spawned `tendril agent`. */
export async function measurePrompt(runs = 15, quick = false, bin = BUILT): Promise<{ version: Row; inProcess: Row }> {
  const fake = await startFakeLlm();
  fake.respond(() => ({ text: "ok", usage: { input: 10, output: 1 } }));
  const home = mkdtempSync(join(tmpdir(), "tendril-bench-prompt-"));
  const env = { ...process.env, HOME: home, ...agentEnv(fake, home), TENDRIL_LOG: "error" };
  const version: FnCase = { name: `${buildLabel(bin)} --version (process floor)`, fn: () => runOnce(bin, ["--version"], env) };
  const inProcess: FnCase = { name: "prompt, its agent in-process + fake LLM", fn: () => runOnce(bin, ["prompt", "--cwd", home, "say ok"], env) };
  const peers: FnCase[] = [
    {
      name: "prompt --agent echo-agent.ts (client + bun agent)",
      fn: () => runOnce(bin, ["prompt", "--cwd", home, "--agent", `'${process.execPath}' '${ECHO_AGENT}'`, "say ok"], env),
    },
    { name: "prompt --agent 'tendril agent' (spawned)", fn: () => runOnce(bin, ["prompt", "--cwd", home, "--agent", `'${bin}' agent`, "say ok"], env) },
  ];
  try {
    const rows = await compareFns("prompt: one CI step end to end (ratio against the process floor)", [version, inProcess, ...(quick ? [] : peers)], runs);
    return { version: rows[0]!, inProcess: rows[1]! };
  } finally {
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  if (!existsSync(BUILT)) {
    console.log("\n## prompt: skipped (run `npm run build` first)");
    return;
  }
  await measurePrompt();
}

if (import.meta.main) await run();
