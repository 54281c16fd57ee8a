// Owns the build and test logs the digest is tested and measured on: what each common tool prints
// (vitest/jest, cargo test, pytest, go test, tsc, eslint, node:test, an npm install with `\r`
// progress and colours), long, with one failure (or a few) in the middle, and the strings a developer
// must see in each: the failure, its message, its location, the totals. Test-only.

const ESC = "\x1b";
const green = (s: string) => `${ESC}[32m${s}${ESC}[39m`;
const red = (s: string) => `${ESC}[31m${s}${ESC}[39m`;
const dim = (s: string) => `${ESC}[2m${s}${ESC}[22m`;

export interface LogSample {
  name: string;
  text: string;
  /** What must stay in view: the failure, its message, its location, the totals. */
  mustSee: string[];
}

function many(n: number, line: (i: number) => string): string[] {
  return Array.from({ length: n }, (_, i) => line(i));
}

export function vitestLog(tests = 900): LogSample {
  const half = Math.floor(tests / 2);
  const lines = [
    `${ESC}[1m RUN ${ESC}[22m v1.6.0 /work/app`,
    "",
    ...many(half, (i) => ` ${green("✓")} src/module-${i % 40}.test.ts ${dim(`> handles case ${i}`)} ${dim(`${i % 9}ms`)}`),
    ` ${red("×")} src/session.test.ts > keeps the limit after a reload`,
    ...many(tests - half - 1, (i) => ` ${green("✓")} src/other-${i % 30}.test.ts ${dim(`> works for input ${i}`)} ${dim(`${i % 7}ms`)}`),
    "",
    `${red("⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯")}`,
    "",
    ` ${red("FAIL")}  src/session.test.ts > keeps the limit after a reload`,
    `${red("AssertionError")}: expected 100 to be 250 // Object.is equality`,
    "",
    `${green("- Expected")}`,
    `${red("+ Received")}`,
    "",
    `${green("- 250")}`,
    `${red("+ 100")}`,
    "",
    ` ❯ src/session.test.ts:42:23`,
    "     40|   await store.reload();",
    "     41|   const s = store.get(id);",
    "     42|   expect(s.limit).toBe(250);",
    "       |                       ^",
    "     43| });",
    "",
    ` Test Files  ${red("1 failed")} | ${green("79 passed")} (80)`,
    `      Tests  ${red("1 failed")} | ${green(`${tests - 1} passed`)} (${tests})`,
    `   Start at  10:42:01`,
    `   Duration  8.31s`,
  ];
  return { name: "vitest", text: `${lines.join("\n")}\n`, mustSee: ["keeps the limit after a reload", "expected 100 to be 250", "src/session.test.ts:42:23", "1 failed", `${tests - 1} passed`] };
}

export function cargoLog(): LogSample {
  const lines = [
    ...many(120, (i) => `   ${green("Compiling")} dep-${i} v0.${i % 10}.${i % 7}`),
    `warning: unused variable: \`tmp\``,
    "  --> src/store.rs:88:9",
    "   |",
    "88 |     let tmp = 3;",
    "   |         ^^^ help: if this is intentional, prefix it with an underscore: `_tmp`",
    "",
    `    ${green("Finished")} test [unoptimized + debuginfo] target(s) in 41.2s`,
    "     Running unittests src/lib.rs (target/debug/deps/app-1f2e3d)",
    "",
    "running 300 tests",
    ...many(150, (i) => `test tests::case_${i} ... ok`),
    "test tests::reload_keeps_limit ... FAILED",
    ...many(149, (i) => `test tests::other_${i} ... ok`),
    "",
    "failures:",
    "",
    "---- tests::reload_keeps_limit stdout ----",
    "thread 'tests::reload_keeps_limit' panicked at src/store.rs:120:9:",
    "assertion `left == right` failed",
    "  left: 100",
    " right: 250",
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
    "",
    "failures:",
    "    tests::reload_keeps_limit",
    "",
    "test result: FAILED. 299 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.31s",
    "",
    "error: test failed, to rerun pass `--lib`",
  ];
  return { name: "cargo", text: `${lines.join("\n")}\n`, mustSee: ["reload_keeps_limit", "panicked at src/store.rs:120:9", "left: 100", "right: 250", "299 passed; 1 failed", "unused variable"] };
}

export function pytestLog(): LogSample {
  const lines = [
    "============================= test session starts ==============================",
    "platform linux -- Python 3.12.1, pytest-8.0.0, pluggy-1.4.0",
    "collected 640 items",
    "",
    ...many(20, (i) => `tests/test_mod${i}.py ${".".repeat(30)}${" ".repeat(10)}[ ${String(i * 5).padStart(3)}%]`),
    "tests/test_store.py ..F.......                                              [ 99%]",
    "tests/test_zzz.py .                                                         [100%]",
    "",
    "=================================== FAILURES ===================================",
    "____________________________ test_reload_keeps_limit ____________________________",
    "",
    "    def test_reload_keeps_limit():",
    "        s = Store()",
    "        s.reload()",
    ">       assert s.limit == 250",
    "E       assert 100 == 250",
    "E        +  where 100 = <app.store.Store object at 0x7f>.limit",
    "",
    "tests/test_store.py:31: AssertionError",
    "=========================== short test summary info ============================",
    "FAILED tests/test_store.py::test_reload_keeps_limit - assert 100 == 250",
    "======================== 1 failed, 639 passed in 12.40s ========================",
  ];
  return { name: "pytest", text: `${lines.join("\n")}\n`, mustSee: ["test_reload_keeps_limit", "assert 100 == 250", "tests/test_store.py:31", "1 failed, 639 passed"] };
}

export function goTestLog(): LogSample {
  const lines = [
    ...many(200, (i) => `=== RUN   TestCase${i}`),
    ...many(200, (i) => `--- PASS: TestCase${i} (0.00s)`),
    "=== RUN   TestReloadKeepsLimit",
    "    store_test.go:57: limit after reload = 100, want 250",
    "--- FAIL: TestReloadKeepsLimit (0.01s)",
    "FAIL",
    "FAIL\texample.com/app/store\t0.412s",
    "ok  \texample.com/app/api\t0.201s",
    "FAIL",
  ];
  return { name: "go test", text: `${lines.join("\n")}\n`, mustSee: ["TestReloadKeepsLimit", "store_test.go:57: limit after reload = 100, want 250", "FAIL\texample.com/app/store"] };
}

export function tscEslintLog(): LogSample {
  const lines = [
    "> app@1.0.0 lint",
    "> tsc --noEmit -p . && eslint .",
    "",
    "src/store.ts(88,7): error TS2322: Type 'string' is not assignable to type 'number'.",
    "src/api.ts(12,3): error TS2554: Expected 2 arguments, but got 1.",
    "",
    ...many(300, (i) => `/work/app/src/file-${i}.ts`),
    "/work/app/src/session-manager.ts",
    "  42:7  error  'limit' is assigned a value but never used  no-unused-vars",
    ...many(60, (i) => `  ${i + 1}:1  warning  Unexpected console statement  no-console`),
    "",
    "✖ 63 problems (1 error, 62 warnings)",
    "",
    "Found 2 errors in 2 files.",
  ];
  return { name: "tsc + eslint", text: `${lines.join("\n")}\n`, mustSee: ["src/store.ts(88,7): error TS2322", "src/api.ts(12,3): error TS2554", "42:7  error  'limit'", "63 problems (1 error, 62 warnings)"] };
}

export function nodeTestLog(): LogSample {
  const lines = [
    "TAP version 13",
    ...many(400, (i) => `ok ${i + 1} - case ${i}\n  ---\n  duration_ms: 0.${i % 9}\n  ...`),
    "not ok 401 - reload keeps the limit",
    "  ---",
    "  duration_ms: 1.2",
    "  location: '/work/app/test/store.test.js:31:3'",
    "  failureType: 'testCodeFailure'",
    "  error: 'Expected values to be strictly equal:\\n\\n100 !== 250\\n'",
    "  code: 'ERR_ASSERTION'",
    "  ...",
    "1..401",
    "# tests 401",
    "# pass 400",
    "# fail 1",
  ];
  return { name: "node:test", text: `${lines.join("\n")}\n`, mustSee: ["not ok 401 - reload keeps the limit", "100 !== 250", "store.test.js:31:3", "# fail 1"] };
}

export function npmInstallLog(): LogSample {
  // progress redrawn with \r and erase-line, a deprecation warning, an error at the end
  const progress = many(400, (i) => `\r${ESC}[2K${dim(`⸩ ░░░░░░░░ idealTree:${"x".repeat(i % 20)} ${i}`)}`).join("");
  const lines = [
    `${progress}\r${ESC}[2Knpm warn deprecated inflight@1.0.6: This module is not supported`,
    ...many(200, (i) => `\r${ESC}[K${dim(`reify:pkg-${i}: timing reifyNode:node_modules/pkg-${i} Completed in ${i}ms`)}`),
    "npm error code ERESOLVE",
    "npm error ERESOLVE unable to resolve dependency tree",
    "npm error Found: react@18.2.0",
    "npm error Could not resolve dependency: peer react@\"^17\" from legacy-lib@2.0.0",
  ];
  return { name: "npm install", text: `${lines.join("\n")}\n`, mustSee: ["npm warn deprecated inflight", "ERESOLVE unable to resolve dependency tree", "peer react@\"^17\" from legacy-lib@2.0.0"] };
}

export const SAMPLES = [vitestLog, cargoLog, pytestLog, goTestLog, tscEslintLog, nodeTestLog, npmInstallLog];
