// Runs every test (`bun test`, unit tests beside modules and end-to-end tests in tests/) and ends with
// one plain summary line, `tests: N passed, N failed`, that CI logs can be read by.
import { spawn, spawnSync } from "node:child_process";

// End-to-end tests run the compiled binary: build it first so they never test a stale one.
if (!process.env.TENDRIL_TEST_NO_BUILD) {
  const build = spawnSync(process.execPath, ["scripts/build.ts"], { stdio: ["ignore", "ignore", "inherit"] });
  if (build.status !== 0) {
    process.stderr.write("tests: the build failed, see above\n");
    process.exit(1);
  }
}

// Four files at a time: most tests wait on processes they started, not on a core, so four workers
// cut the wall time to well under half on a 2-core machine; every wall-clock bound in the tests
// leaves room for that load (and each file still runs in a fresh global: --parallel isolates).
const args = ["test", "--timeout", "60000", "--parallel=4", ...process.argv.slice(2)];
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
