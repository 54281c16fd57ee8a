// Unit: the walk keeps and drops what ripgrep does (ignore files, hidden names, .git, links).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rootHandle, walkFiles, type WalkOptions } from "./walk.ts";

let base: string;

function write(rel: string, content = "x\n"): void {
  mkdirSync(join(base, rel, ".."), { recursive: true });
  writeFileSync(join(base, rel), content);
}

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "tendril-walk-"));
  mkdirSync(join(base, "repo", ".git", "info"), { recursive: true });
  write("repo/.git/info/exclude", "excluded\n");
  write("repo/.gitignore", "*.log\n/top-only\nbuild/\n");
  write("repo/.ignore", "!wanted.log\n");
  write("repo/a.log");
  write("repo/wanted.log");
  write("repo/top-only");
  write("repo/excluded");
  write("repo/sub/top-only");
  write("repo/sub/.gitignore", "!again.log\n");
  write("repo/sub/again.log");
  write("repo/build/out");
  write("repo/.hidden");
  write("repo/.hdir/f");
  write("plain/.gitignore", "*.txt\n"); // no .git: ripgrep does not apply it
  write("plain/a.txt");
  write("plain/.ignore", "b.md\n"); // .ignore applies everywhere
  write("plain/b.md");
  mkdirSync(join(base, "outside"));
  write("outside/o.txt");
  symlinkSync(join(base, "outside"), join(base, "repo", "link"));
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

function files(dir: string, opts: Partial<WalkOptions> = {}, display = dir): string[] {
  const o: WalkOptions = { hidden: false, noIgnore: false, ...opts };
  return [...walkFiles(rootHandle(join(base, dir), display, base, o), o)].map((e) => e.display);
}

test("gitignore rules: nested negation, anchored patterns, directories, exclude, and .ignore overriding", () => {
  expect(files("repo")).toEqual(["repo/sub/again.log", "repo/sub/top-only", "repo/wanted.log"]);
});

test("hidden names need --hidden, which lists .git as ripgrep 13 does (tree skips it); links are not followed", () => {
  expect(files("repo", { hidden: true, skipGitDir: true })).not.toContain("repo/.git/info/exclude");
  expect(files("repo", { hidden: true })).toEqual([
    "repo/.git/info/exclude", "repo/.gitignore", "repo/.hdir/f", "repo/.hidden", "repo/.ignore",
    "repo/sub/.gitignore", "repo/sub/again.log", "repo/sub/top-only", "repo/wanted.log",
  ]);
});

test("--no-ignore lists what the rules hid", () => {
  expect(files("repo", { noIgnore: true })).toEqual([
    "repo/a.log", "repo/build/out", "repo/excluded", "repo/sub/again.log", "repo/sub/top-only", "repo/top-only", "repo/wanted.log",
  ]);
});

test("outside a git repository only .ignore files count", () => {
  expect(files("plain")).toEqual(["plain/a.txt"]);
});

test("a worktree's .git file is followed to the main repository's info/exclude", () => {
  mkdirSync(join(base, "main", ".git", "worktrees", "wt"), { recursive: true });
  mkdirSync(join(base, "main", ".git", "info"), { recursive: true });
  write("main/.git/info/exclude", "secret.txt\n");
  write("main/.git/worktrees/wt/commondir", "../..\n");
  write("wt/.git", `gitdir: ${join(base, "main", ".git", "worktrees", "wt")}\n`);
  write("wt/secret.txt");
  write("wt/kept.txt");
  expect(files("wt")).toEqual(["wt/kept.txt"]);
});

test("rules of directories above the walk root still apply", () => {
  mkdirSync(join(base, "repo", "build2"), { recursive: true });
  write("repo/build2/x.log");
  write("repo/build2/y.txt");
  expect(files("repo/build2", {}, "")).toEqual(["y.txt"]);
});
