// Benchmark: `tendril prompt --output-schema` end to end (the schema read and compiled, the agent asked
// for the document, the answer checked) against the same plain prompt, the answer valid on the first
// try, and both against the process floor. Goal: the schema adds ≤ 2 ms; a plain prompt stays ≤ 4×
// start-up. `npm run bench -- prompt-schema`; BENCH_OTHER_BIN=PATH adds the same two runs of another
// build (e.g. the one before a validator change), interleaved with these so noise hits both alike.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startFakeLlm } from "../../tests/fake-llm.ts";
import { agentEnv } from "../../tests/agent-env.ts";
import { compareFns } from "./harness.ts";

const BIN = resolve("dist/tendril");
const ANSWER = '{"verdict": "approve", "reasons": ["the tests pass"]}';

/** Runs the binary to completion; a non-zero exit or an unexpected stdout fails the benchmark. */
function runOnce(args: string[], env: NodeJS.ProcessEnv, expect?: string, bin = BIN): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(bin, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.on("error", fail);
    child.on("close", (code) => {
      if (code !== 0 || (expect !== undefined && stdout !== expect)) fail(new Error(`${args.join(" ")}: exit ${code}\n${stdout}${stderr}`));
      else done();
    });
  });
}

export async function run(): Promise<void> {
  if (!existsSync(BIN)) {
    console.log("\n## prompt-schema: skipped (run `npm run build` first)");
    return;
  }
  const fake = await startFakeLlm();
  fake.respond(() => ({ text: ANSWER, usage: { input: 10, output: 12 } }));
  const home = mkdtempSync(join(tmpdir(), "tendril-bench-schema-"));
  const schema = join(home, "verdict.json");
  writeFileSync(
    schema,
    JSON.stringify({
      type: "object",
      properties: { verdict: { enum: ["approve", "reject"] }, reasons: { type: "array", items: { type: "string" } } },
      required: ["verdict"],
      additionalProperties: false,
    }),
  );
  const env = { ...process.env, HOME: home, ...agentEnv(fake, home), TENDRIL_LOG: "error" };
  const other = process.env.BENCH_OTHER_BIN;
  const plain = ["prompt", "--cwd", home, "review"];
  const withSchema = ["prompt", "--cwd", home, "--output-schema", schema, "review"];
  const printed = '{"verdict":"approve","reasons":["the tests pass"]}\n';
  try {
    await compareFns(
      "prompt --output-schema: the answer valid on the first try (ratio against the process floor)",
      [
        { name: "dist/tendril --version (process floor)", fn: () => runOnce(["--version"], env) },
        { name: "prompt, plain", fn: () => runOnce(plain, env, `${ANSWER}\n`) },
        { name: "prompt --output-schema", fn: () => runOnce(withSchema, env, printed) },
        ...(other
          ? [
              { name: "other build: prompt, plain", fn: () => runOnce(plain, env, `${ANSWER}\n`, other) },
              { name: "other build: prompt --output-schema", fn: () => runOnce(withSchema, env, printed, other) },
            ]
          : []),
      ],
      Number(process.env.BENCH_RUNS ?? 30),
    );
  } finally {
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

if (import.meta.main) await run();
