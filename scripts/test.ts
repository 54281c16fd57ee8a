// Runs the tests (`bun test`, unit tests beside modules and end-to-end tests in tests/) and ends with
// one plain summary line, `tests: N passed, N failed`, that CI logs can be read by. Two suites:
// the default one is every test but the release build's; `--release` runs only that one
// (tests/release.test.ts: a full cross-platform release from a fresh clone, ~35 s of both cores).
import { spawn, spawnSync } from "node:child_process";

const RELEASE_TEST = "tests/release.test.ts";
const release = process.argv.includes("--release");
const rest = process.argv.slice(2).filter((a) => a !== "--release");

// End-to-end tests run the compiled binary: build it first so they never test a stale one
// (the release test builds its own, in its clone).
if (!process.env.TENDRIL_TEST_NO_BUILD && !release) {
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

// Four files at a time: most tests wait on processes they started, not on a core, so four workers
// cut the wall time to well under half on a 2-core machine; every wall-clock bound in the tests
// leaves room for that load (and each file still runs in a fresh global: --parallel isolates).
const args = ["test", "--timeout", "60000", "--parallel=4", ...(release ? [RELEASE_TEST] : [`--path-ignore-patterns=${RELEASE_TEST}`]), ...rest];
const child = spawn(process.execPath, args, { stdio: ["ignore", "inherit", "pipe"], env: process.env });
let tail = "";
child.stderr.on("data", (chunk: Buffer) => {
  process.stderr.write(chunk);
  tail = (tail + chunk.toString("utf8")).slice(-4096);
});
child.on("close", (code, signal) => {
  const num = (re: RegExp) => Number(re.exec(tail)?.[1] ?? 0);
  const passed = num(/^\s*(\d+) pass\b/m);
  const failed = num(/^\s*(\d+) fail\b/m);
  const skipped = num(/^\s*(\d+) skip\b/m);
  process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`);
  if (passed === 0 && failed === 0) process.stdout.write("tests: no test ran\n");
  const status = code ?? (signal ? 1 : 0);
  process.exit(status !== 0 ? status : passed === 0 ? 1 : 0);
});
