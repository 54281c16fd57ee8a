import { expect, test } from "bun:test";
import { parseCrateSpec } from "./crate-spec.ts";
import { CrateError } from "./errors.ts";
import { nearestVersions, resolveVersion, type IndexVersion } from "./resolve.ts";

const v = (vers: string, yanked = false): IndexVersion => ({ name: "demo", vers, cksum: "00", yanked });
const VERSIONS = [v("0.9.0"), v("1.0.0"), v("1.2.0"), v("1.3.0", true), v("1.4.0-beta.1"), v("2.0.0-alpha.1")];
const pick = (spec: string, versions = VERSIONS, locked?: string) => resolveVersion(parseCrateSpec(spec), versions, locked).entry.vers;

test("no range: the highest stable non-yanked version", () => {
  expect(pick("demo")).toBe("1.2.0");
});

test("ranges: caret, tilde, comparators, cargo's commas, x-ranges", () => {
  expect(pick("demo@^0.9")).toBe("0.9.0");
  expect(pick("demo@~1.0")).toBe("1.0.0");
  expect(pick("demo@>=1.0, <1.2")).toBe("1.0.0");
  expect(pick("demo@1")).toBe("1.2.0");
  expect(pick("demo@1.x")).toBe("1.2.0");
});

test("yanked versions are skipped by ranges but served when pinned exactly", () => {
  expect(() => pick("demo@~1.3")).toThrow(CrateError);
  const pinned = resolveVersion(parseCrateSpec("demo@=1.3.0"), VERSIONS);
  expect(pinned.entry.vers).toBe("1.3.0");
  expect(pinned.note).toContain("yanked");
  expect(pick("demo@1.3.0")).toBe("1.3.0");
});

test("prereleases only when asked for, or when nothing else matches", () => {
  expect(pick("demo@^1.4.0-beta.1")).toBe("1.4.0-beta.1");
  expect(pick("demo@2")).toBe("2.0.0-alpha.1");
  expect(pick("demo", [v("0.1.0-rc.1"), v("0.1.0-rc.2")])).toBe("0.1.0-rc.2");
});

test("a Cargo.lock pin wins when no range is given, even over newer and yanked", () => {
  expect(pick("demo", VERSIONS, "1.0.0")).toBe("1.0.0");
  expect(pick("demo", VERSIONS, "1.3.0")).toBe("1.3.0");
  expect(pick("demo@0.9", VERSIONS, "1.0.0")).toBe("0.9.0");
  expect(pick("demo@latest", VERSIONS, "1.0.0")).toBe("1.2.0");
});

test("no match names the nearest versions and the range", () => {
  try {
    pick("demo@^3");
    throw new Error("resolved");
  } catch (err) {
    expect(err).toBeInstanceOf(CrateError);
    expect((err as CrateError).kind).toBe("no-match");
    expect((err as Error).message).toContain("no version matches ^3");
    expect((err as Error).message).toContain("1.2.0");
    expect((err as Error).message).toContain("1.3.0 (yanked)");
  }
  expect(() => pick("demo", [v("1.0.0", true)])).toThrow("every version is yanked");
  expect(() => pick("demo", VERSIONS, "7.7.7")).toThrow("locked by Cargo.lock at 7.7.7");
});

test("nearest versions centre on where the range starts", () => {
  const many = Array.from({ length: 20 }, (_, i) => v(`1.${i}.0`));
  expect(nearestVersions(many, "^1.10.5")).toEqual(["1.8.0", "1.9.0", "1.10.0", "1.11.0", "1.12.0"]);
  expect(nearestVersions(many, ">=9")).toEqual(["1.15.0", "1.16.0", "1.17.0", "1.18.0", "1.19.0"]);
});

test("crate specs: names and ranges are checked, bare versions are exact", () => {
  expect(parseCrateSpec("serde")).toEqual({ name: "serde" });
  expect(parseCrateSpec("serde@1.0.200")).toEqual({ name: "serde", range: "1.0.200", exact: "1.0.200" });
  expect(parseCrateSpec("serde@=1.0.200").exact).toBe("1.0.200");
  expect(parseCrateSpec("serde@^1").exact).toBeUndefined();
  expect(parseCrateSpec("serde@latest")).toEqual({ name: "serde", range: "*" });
  for (const bad of ["", "9lives", "a b", "x".repeat(65), "serde@", "serde@not-a-range", "../etc"]) {
    expect(() => parseCrateSpec(bad)).toThrow(CrateError);
  }
});
