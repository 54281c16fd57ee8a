// The command line as a user meets it: help, version, usage errors, argv0 dispatch, shim links.
import { afterAll, expect, test } from "bun:test";
import { lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { BIN, runBin } from "./binary.ts";

const tmp = mkdtempSync(join(tmpdir(), "tendril-cli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

test("--help lists the modes and exits 0", () => {
  const r = runBin(["--help"]);
  expect(r.code).toBe(0);
  for (const mode of ["rg", "tree", "shims"]) expect(r.stdout).toMatch(new RegExp(`^\\s+${mode}\\b`, "m"));
  expect(r.stderr).toBe("");
});

test("no arguments shows the help too", () => {
  const r = runBin([]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("Usage: tendril");
});

test("--version prints the package version", () => {
  const r = runBin(["--version"]);
  expect(r.code).toBe(0);
  expect(r.stdout.trim()).toBe(pkg.version);
});

test("help MODE shows that mode's usage", () => {
  const r = runBin(["help", "shims"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("Usage: tendril shims");
});

test("an unknown mode exits 2 with one line naming it and the nearest valid mode", () => {
  const r = runBin(["shimz"]);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe("");
  expect(r.stderr.trim().split("\n").length).toBe(1);
  expect(r.stderr).toContain("'shimz'");
  expect(r.stderr).toContain("did you mean shims?");
});

test("an unknown flag exits 2 with one line naming it and the nearest valid flag", () => {
  const r = runBin(["--verison"]);
  expect(r.code).toBe(2);
  expect(r.stderr.trim().split("\n").length).toBe(1);
  expect(r.stderr).toContain("'--verison'");
  expect(r.stderr).toContain("--version");
});

test("a link named rg dispatches to the rg mode, and tree to the tree mode", () => {
  const dir = join(tmp, "links");
  mkdirSync(dir);
  symlinkSync(BIN, join(dir, "rg"));
  symlinkSync(BIN, join(dir, "tree"));
  const work = join(tmp, "work");
  mkdirSync(work);
  writeFileSync(join(work, "a.txt"), "alpha\nneedle here\n");
  // PATH without a real ripgrep, so the built-in search answers
  const env = { PATH: `${dir}:/usr/bin:/bin`.split(":").filter((p) => !p.includes("rg")).join(":"), TENDRIL_RG_BUILTIN: "1" };
  const rg = runBin(["-n", "needle"], { bin: join(dir, "rg"), cwd: work, env });
  expect(rg.code).toBe(0);
  expect(rg.stdout.trim()).toBe("a.txt:2:needle here");
  const none = runBin(["absent-word"], { bin: join(dir, "rg"), cwd: work, env });
  expect(none.code).toBe(1);
  const tree = runBin([], { bin: join(dir, "tree"), cwd: work, env });
  expect(tree.code).toBe(0);
  expect(tree.stdout).toContain("a.txt");
});

test("`tendril shims DIR` writes rg and tree links to the binary", () => {
  const dir = join(tmp, "shims");
  const r = runBin(["shims", dir]);
  expect(r.code).toBe(0);
  for (const name of ["rg", "tree"]) {
    expect(lstatSync(join(dir, name)).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir, name))).toBe(BIN);
  }
  // running it again replaces the links instead of failing
  expect(runBin(["shims", dir]).code).toBe(0);
  // but a regular file a user put there is never clobbered
  const dir2 = join(tmp, "shims2");
  mkdirSync(dir2);
  writeFileSync(join(dir2, "rg"), "#!/bin/sh\n");
  const clash = runBin(["shims", dir2]);
  expect(clash.code).toBe(1);
  expect(clash.stderr).toContain("not a link");
});

test("a mode name nothing like a real one gets no guess, only the pointer to --help", () => {
  const r = runBin(["qqqqqqq"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("'qqqqqqq'");
  expect(r.stderr).not.toContain("did you mean");
  expect(r.stderr).toContain("tendril --help");
});
