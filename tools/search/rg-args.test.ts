// Unit: rg argument parsing — ripgrep spellings, which flag wins, and the errors that name the flag.
import { expect, test } from "bun:test";
import { nearestFlag, parseRgArgs } from "./rg-args.ts";

function ok(args: string[]) {
  const r = parseRgArgs(args);
  if (!r.ok) throw new Error(r.message);
  return r.options;
}

test("bundled short flags, attached values and --flag=value read as ripgrep reads them", () => {
  const o = ok(["-inC2", "-A3", "--max-count=4", "-gsrc/**", "pat", "a", "b"]);
  expect([o.caseMode, o.lineNumber, o.before, o.after, o.maxCount]).toEqual(["insensitive", true, 0, 3, 4]); // -A after -C replaces it
  expect(o.globs).toEqual(["src/**"]);
  expect(o.patterns).toEqual(["pat"]);
  expect(o.paths).toEqual(["a", "b"]);
});

test("with -e every positional is a path; after -- flags are text", () => {
  expect(ok(["-e", "x", "-e", "y", "dir"]).paths).toEqual(["dir"]);
  const o = ok(["--", "-n", "file"]);
  expect(o.patterns).toEqual(["-n"]);
  expect(o.lineNumber).toBeUndefined();
});

test("the later of -i/-S/-s wins", () => {
  expect(ok(["-i", "-S", "x"]).caseMode).toBe("smart");
  expect(ok(["-S", "-s", "x"]).caseMode).toBe("sensitive");
});

test("errors name the flag: unknown flags with the nearest one, bad numbers, missing values", () => {
  const r = parseRgArgs(["--word-regex", "x"]);
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.message).toStartWith("rg: unknown flag --word-regex (nearest known flag: --word-regexp)");
  expect(nearestFlag("-Q")).toMatch(/^-/);
  const bad = parseRgArgs(["-A", "two", "x"]);
  expect(!bad.ok && bad.message).toContain("-A expects a non-negative whole number");
  const missing = parseRgArgs(["x", "-g"]);
  expect(!missing.ok && missing.message).toContain("-g needs a GLOB value");
  const none = parseRgArgs([]);
  expect(!none.ok && none.message).toContain("no pattern given");
});

test("-A or -B after -C replaces the context whole, as ripgrep 13's overrides do; -C after them wins", () => {
  const c = (args: string[]) => [ok(args).before, ok(args).after];
  expect(c(["-C1", "-A2", "x"])).toEqual([0, 2]);
  expect(c(["-C3", "-B1", "x"])).toEqual([1, 0]);
  expect(c(["-A2", "-B1", "x"])).toEqual([1, 2]);
  expect(c(["-A2", "-C1", "x"])).toEqual([1, 1]);
});
