// The suite's tiers (scripts/test-tiers.ts): the end-to-end list names real test files, no logic-tier
// file starts a process by its own hand, and the guard that `npm test` preloads makes any process
// start in the logic tier fail, naming the call.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { END_TO_END, testFiles, tierOf } from "../scripts/test-tiers.ts";
const ROOT = join(import.meta.dir, "..");

const PROCESS_START = /\bnode:child_process\b|["']child_process["']|\bBun\.spawn(Sync)?\b/;

test("test tiers: every end-to-end entry is a test file, listed once", () => {
  const files = new Set(testFiles(ROOT));
  expect(END_TO_END.filter((f) => !files.has(f))).toEqual([]);
  expect(new Set(END_TO_END).size).toBe(END_TO_END.length);
});

test("test tiers: no logic-tier test file starts a process itself (those are end-to-end)", () => {
  // This file names the calls only to see the guard refuse them.
  const logic = testFiles(ROOT).filter((f) => tierOf(f) === "logic" && f !== "tests/test-tiers.test.ts");
  expect(logic.length).toBeGreaterThan(50);
  expect(logic.filter((f) => PROCESS_START.test(readFileSync(`${ROOT}/${f}`, "utf8")))).toEqual([]);
});

test("regression: the logic tier failed on a fresh clone with nothing built (two files loaded tests/binary.ts, which needs dist/tendril); no logic-tier file loads it", () => {
  const logic = testFiles(ROOT).filter((f) => tierOf(f) === "logic");
  expect(logic.filter((f) => /from ["'](\.\.?\/)+(tests\/)?binary\.ts["']/.test(readFileSync(`${ROOT}/${f}`, "utf8")))).toEqual([]);
});

test("test tiers: the logic tier's guard refuses every way of starting a process, naming it", async () => {
  await import("../scripts/logic-tier-guard.ts");
  const childProcess = await import("node:child_process");
  expect(() => Bun.spawn(["true"])).toThrow(/Bun\.spawn: a logic-tier test started a process/);
  expect(() => Bun.spawnSync(["true"])).toThrow(/Bun\.spawnSync: a logic-tier test/);
  expect(() => childProcess.spawn("true")).toThrow(/logic-tier test started a process/);
  expect(() => childProcess.execFileSync("true")).toThrow(/logic-tier test started a process/);
  expect(() => childProcess.default.exec("true")).toThrow(/child_process\.exec: a logic-tier test/);
});
