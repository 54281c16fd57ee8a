// The benchmark guard's goals file and its lines: every row has one goal, a malformed or unknown entry is
// refused by name, and a figure above its goal is marked OVER (one at or below it is not).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { comparedLine, guardArgs, guardLine, GUARD_ROWS, readGoals } from "../scripts/bench-guard.ts";

const GOALS = readFileSync(new URL("../scripts/bench-goals.json", import.meta.url), "utf8");

test("the goals file in the repository names a goal for every row of the guard, and no other", () => {
  const goals = readGoals(GOALS, GUARD_ROWS);
  expect(Object.keys(goals).sort()).toEqual([...GUARD_ROWS].sort());
});

test("a goals file missing a row, naming an unknown row or holding a bad goal is refused by name", () => {
  const raw = JSON.parse(GOALS) as Record<string, Record<string, unknown>>;
  const without = { ...raw };
  delete without.tree;
  expect(() => readGoals(JSON.stringify(without), GUARD_ROWS)).toThrow('no goal for the row "tree"');
  expect(() => readGoals(JSON.stringify({ ...raw, speed: raw.tree }), GUARD_ROWS)).toThrow('"speed" is no row of the guard');
  expect(() => readGoals(JSON.stringify({ ...raw, tree: { ...raw.tree, goal: "fast" } }), GUARD_ROWS)).toThrow('"tree".goal must be a positive number, got "fast"');
  expect(() => readGoals(JSON.stringify({ ...raw, tree: { ...raw.tree, unit: "s" } }), GUARD_ROWS)).toThrow('"tree".unit must be one of x, ms, MiB, got "s"');
});

test("a figure above its goal is marked OVER; one at the goal or below is not", () => {
  const goal = { what: "tree", goal: 0.1, unit: "x" as const };
  expect(guardLine(goal, 0.17)).toMatch(/tree +0\.17× +goal ≤ 0\.10× +OVER$/);
  expect(guardLine(goal, 0.1)).not.toContain("OVER");
  expect(guardLine({ what: "initialize", goal: 2, unit: "ms" }, 1.4)).toMatch(/\+1\.4 ms +goal ≤ \+2\.0 ms$/);
  expect(guardLine({ what: "idle", goal: 44, unit: "MiB" }, 50.3)).toMatch(/50\.3 MiB +goal ≤ 44\.0 MiB +OVER$/);
});

test("--before: this build's line, the other build's figure and the change; SLOWER only past the noise allowance", () => {
  const tree = { what: "tree", goal: 1, unit: "x" as const };
  expect(comparedLine(tree, 0.6, 0.65)).toMatch(/0\.65× +goal ≤ 1\.00× +before 0\.60× \(×1\.08\)$/);
  expect(comparedLine(tree, 0.6, 0.7)).toMatch(/before 0\.60× \(×1\.17\)  SLOWER$/);
  // OVER the goal for both builds alike is the machine: OVER, not SLOWER
  expect(comparedLine(tree, 1.3, 1.32)).toMatch(/1\.32× +goal ≤ 1\.00×  OVER +before 1\.30× \(×1\.02\)$/);
  const init = { what: "initialize", goal: 3.8, unit: "ms" as const };
  expect(comparedLine(init, 3, 3.9)).not.toContain("SLOWER"); // under 1 ms
  expect(comparedLine(init, 3, 4.2)).toMatch(/before \+3\.0 ms \(\+1\.2 ms\)  SLOWER$/);
  expect(comparedLine(init, 20, 21.5)).not.toContain("SLOWER"); // under 10 %
});

test("the guard's arguments: --tables, --before PATH; a missing path or an unknown argument is refused by name", () => {
  expect(guardArgs([])).toEqual({ tables: false });
  expect(guardArgs(["--tables", "--before", "/tmp/old-tendril"])).toEqual({ tables: true, before: "/tmp/old-tendril" });
  expect(() => guardArgs(["--before"])).toThrow("--before needs the path of another tendril binary");
  expect(() => guardArgs(["--before", "--tables"])).toThrow("--before needs the path");
  expect(() => guardArgs(["--fast"])).toThrow("unknown argument --fast");
});

test("bench floor that fails to run fails its benchmark instead of being timed (session load's node read + parse)", async () => {
  const { runFloor } = await import("../scripts/bench/lifecycle.ts");
  expect(() => runFloor("tendril-no-such-command", ["-e", "0"])).toThrow("tendril-no-such-command -e:");
  expect(() => runFloor("sh", ["-c", "exit 3"])).toThrow("sh -c: exit 3");
  expect(() => runFloor("sh", ["-c", "exit 0"])).not.toThrow();
});
