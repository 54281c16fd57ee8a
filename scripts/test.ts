// Runs the tests (`bun test`, unit tests beside modules and end-to-end tests in tests/) in tiers
// (scripts/test-tiers.ts) and ends with one plain summary line, `tests: N passed, N failed`, that CI
// logs can be read by. Default (`npm test`): the logic tier, in memory, no process started and no build.
// `--all` (`npm run check`): the logic tier, then the end-to-end tier against a fresh build. `--release`:
// only the release build's test (a full cross-platform release from a fresh clone, ~35 s of both cores).
// Paths or filters given (`npm test -- tests/foo.test.ts`) run just those, after a build.
import { spawn, spawnSync } from "node:child_process";
import { END_TO_END, END_TO_END_TEST_TIMEOUT_MS, LOGIC_TEST_TIMEOUT_MS, LOGIC_TIER_GOAL_S, RELEASE_TEST, testFiles, tierOf } from "./test-tiers.ts";

const release = process.argv.includes("--release");
const all = process.argv.includes("--all");
const rest = process.argv.slice(2).filter((a) => a !== "--release" && a !== "--all");
const filtered = rest.some((a) => !a.startsWith("-"));

interface Run {
  label: string;
  args: string[];
  /** Needs the compiled binary (end-to-end tests drive it). */
  binary: boolean;
}

// Four files at a time: most end-to-end tests wait on processes they started, not on a core, so four
// workers cut the wall time to well under half on a 2-core machine; every wall-clock bound in the
// tests leaves room for that load (and each file still runs in a fresh global: --parallel isolates).
const runs: Run[] = [];
if (release) runs.push({ label: "release test", args: ["--timeout", String(END_TO_END_TEST_TIMEOUT_MS), RELEASE_TEST, ...rest], binary: false });
else if (filtered) runs.push({ label: "chosen files", args: ["--timeout", String(END_TO_END_TEST_TIMEOUT_MS), "--parallel=4", `--path-ignore-patterns=${RELEASE_TEST}`, ...rest], binary: true });
else {
  const files = testFiles();
  const logic = files.filter((f) => tierOf(f) === "logic").map((f) => `./${f}`);
  runs.push({ label: "logic tier", args: ["--timeout", String(LOGIC_TEST_TIMEOUT_MS), "--parallel=4", "--preload", "./scripts/logic-tier-guard.ts", ...rest, ...logic], binary: false });
  if (all) runs.push({ label: "end-to-end tier", args: ["--timeout", String(END_TO_END_TEST_TIMEOUT_MS), "--parallel=4", ...rest, ...END_TO_END.map((f) => `./${f}`)], binary: true });
}

// End-to-end tests run the compiled binary: build it first so they never test a stale one
// (the release test builds its own, in its clone).
if (!process.env.TENDRIL_TEST_NO_BUILD && runs.some((r) => r.binary)) {
  const build = spawnSync(process.execPath, ["scripts/build.ts"], { stdio: ["ignore", "ignore", "inherit"] });
  if (build.status !== 0) {
    process.stderr.write("tests: the build failed, see above\n");
    process.exit(1);
  }
}

// The release test cross-compiles offline, on the target runtimes in npm's cache: put them there first
// (fetched from the npm registry when missing, a quick check when present), so README's test command
// works on a fresh machine with an empty npm cache, not only after .ci/run's own step.
if (release) {
  const fill = spawnSync(process.execPath, ["scripts/release.ts", "--cache-runtimes"], { stdio: ["ignore", "ignore", "inherit"] });
  if (fill.status !== 0) {
    process.stderr.write("tests: could not put the cross-compile runtimes in npm's cache (see above); the release test needs them\n");
    process.exit(1);
  }
}

interface Outcome {
  passed: number;
  failed: number;
  skipped: number;
  status: number;
}

function runTier(run: Run): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, ["test", ...run.args], { stdio: ["ignore", "inherit", "pipe"], env: process.env });
    let tail = "";
    child.stderr.on("data", (chunk: Buffer) => {
      process.stderr.write(chunk);
      tail = (tail + chunk.toString("utf8")).slice(-4096);
    });
    child.on("close", (code, signal) => {
      const num = (re: RegExp) => Number(re.exec(tail)?.[1] ?? 0);
      const seconds = (performance.now() - started) / 1000;
      const goal = run.label === "logic tier" ? ` (goal ≤ ${LOGIC_TIER_GOAL_S} s)` : "";
      process.stdout.write(`tests: the ${run.label} took ${seconds.toFixed(1)} s${goal}\n`);
      resolve({ passed: num(/^\s*(\d+) pass\b/m), failed: num(/^\s*(\d+) fail\b/m), skipped: num(/^\s*(\d+) skip\b/m), status: code ?? (signal ? 1 : 0) });
    });
  });
}

let passed = 0;
let failed = 0;
let skipped = 0;
let status = 0;
for (const run of runs) {
  const o = await runTier(run);
  passed += o.passed;
  failed += o.failed;
  skipped += o.skipped;
  if (o.status !== 0 && status === 0) status = o.status;
}
process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`);
if (passed === 0 && failed === 0) process.stdout.write("tests: no test ran\n");
// A failed test fails the run even when the runner itself exited 0 (bun test --parallel can).
process.exit(status !== 0 ? status : failed > 0 || passed === 0 ? 1 : 0);
