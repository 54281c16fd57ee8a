import { afterAll, describe, expect, test } from "bun:test";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { indexGitlinks, readGitConfig } from "./git-shape.ts";
import { checkGit, GitGuard, snapshotGit } from "./git-watch.ts";
import { FolderEvents } from "./fs-events.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-git-watch-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const HAS_GIT = spawnSync("git", ["--version"]).status === 0;
const WALK = 10_000;

function workspace(name: string): { ws: string; quarantine: string; marker: string } {
  const ws = join(base, name, "ws");
  mkdirSync(ws, { recursive: true });
  execFileSync("git", ["init", "-q", "-b", "main", ws]);
  return { ws, quarantine: join(base, name, "quarantine"), marker: join(base, name, "fsmonitor-ran") };
}

/** The user's next `git status` in `cwd`, with a clean global config: whether the planted program ran. */
function userGitStatus(cwd: string, marker: string): boolean {
  spawnSync("git", ["status"], { cwd, env: { PATH: process.env.PATH, HOME: base, GIT_CONFIG_NOSYSTEM: "1" }, stdio: "ignore" });
  return existsSync(marker);
}

const fsmonitor = (marker: string) => `[core]\n\tfsmonitor = "touch ${marker}; false"\n`;

/** Runs `change` as a command would, between the state before and the check after. */
function asCommand(ws: string, quarantine: string, change: () => void, walk = WALK) {
  const since = Date.now();
  const before = snapshotGit([ws], walk);
  change();
  return checkGit(before, [ws], walk, quarantine, since - 1000);
}

describe.skipIf(!HAS_GIT)("git directories by shape and content", () => {
  test("regression: a repository-shaped src/ (HEAD, objects, refs, config with core.worktree and core.fsmonitor) ran at git status below src/; it is moved aside", () => {
    const { ws, quarantine, marker } = workspace("shape");
    const src = join(ws, "src");
    const r = asCommand(ws, quarantine, () => {
      mkdirSync(join(src, "objects"), { recursive: true });
      mkdirSync(join(src, "refs", "heads"), { recursive: true });
      writeFileSync(join(src, "HEAD"), "ref: refs/heads/main\n");
      writeFileSync(join(src, "config"), `[core]\n\trepositoryformatversion = 0\n\tworktree = ..\n\tfsmonitor = "touch ${marker}; false"\n`);
    });
    expect(r.moved.map((m) => m.from)).toEqual([src]);
    expect(r.note).toContain(`sandbox: this command wrote ${src}`);
    expect(r.note).toContain("core.fsmonitor");
    expect(existsSync(r.moved[0]!.to)).toBe(true); // moved, not deleted
    mkdirSync(join(ws, "src", "x"), { recursive: true });
    expect(userGitStatus(join(ws, "src", "x"), marker)).toBe(false);
    expect(userGitStatus(ws, marker)).toBe(false);
  });

  test("regression: a git dir replaced at the same path (mv vendor/lib aside, git init vendor/lib, a config line) was never reported; it is compared by identity and moved aside", () => {
    const { ws, quarantine, marker } = workspace("replace");
    const lib = join(ws, "vendor", "lib");
    mkdirSync(lib, { recursive: true });
    execFileSync("git", ["init", "-q", lib]);
    const r = asCommand(ws, quarantine, () => {
      renameSync(lib, join(ws, "vendor", ".lib_old"));
      execFileSync("git", ["init", "-q", lib]);
      writeFileSync(join(lib, ".git", "config"), fsmonitor(marker), { flag: "a" });
    });
    expect(r.moved.map((m) => m.from)).toEqual([join(lib, ".git")]);
    expect(userGitStatus(lib, marker)).toBe(false);
  });

  test("regression: a config with include.path = ../.gitconfig, then the command writes .gitconfig: the include target is moved aside", () => {
    const { ws, quarantine, marker } = workspace("include");
    writeFileSync(join(ws, ".git", "config"), "[include]\n\tpath = ../.gitconfig\n", { flag: "a" });
    const r = asCommand(ws, quarantine, () => writeFileSync(join(ws, ".gitconfig"), fsmonitor(marker)));
    expect(r.moved.map((m) => m.from)).toEqual([join(ws, ".gitconfig")]);
    expect(userGitStatus(ws, marker)).toBe(false);
  });

  test("regression: a new hook file in an existing git dir is moved aside", () => {
    const { ws, quarantine, marker } = workspace("hook");
    const hook = join(ws, ".git", "hooks", "post-index-change");
    const r = asCommand(ws, quarantine, () => writeFileSync(hook, `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 }));
    expect(r.moved.map((m) => m.from)).toEqual([hook]);
  });

  test("regression: a hook changed in place ran at the user's next commit (only new hook names counted); a rewrite with the same bytes, as hook managers do, is no change", () => {
    const { ws, quarantine, marker } = workspace("hook-changed");
    const hook = join(ws, ".git", "hooks", "pre-commit");
    writeFileSync(hook, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    expect(asCommand(ws, quarantine, () => writeFileSync(hook, "#!/bin/sh\nexit 0\n")).moved).toEqual([]);
    const r = asCommand(ws, quarantine, () => writeFileSync(hook, `#!/bin/sh\ntouch ${marker}\n`));
    expect(r.moved.map((m) => m.from)).toEqual([hook]);
    expect(r.note).toContain("hook pre-commit (changed)");
    spawnSync("git", ["commit", "-q", "--allow-empty", "-m", "x"], { cwd: ws, env: { PATH: process.env.PATH, HOME: base, GIT_CONFIG_NOSYSTEM: "1", GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@x", GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@x" } });
    expect(existsSync(marker)).toBe(false);
  });

  test("regression: a hook written into the folder core.hooksPath names (.husky/_) ran at the user's next commit; the user's own hooksPath setting stays", () => {
    const { ws, quarantine, marker } = workspace("hookspath");
    writeFileSync(join(ws, ".git", "config"), "[core]\n\thooksPath = .husky/_\n", { flag: "a" });
    mkdirSync(join(ws, ".husky", "_"), { recursive: true });
    writeFileSync(join(ws, ".husky", "_", "h"), "#!/bin/sh\n");
    const hook = join(ws, ".husky", "_", "pre-commit");
    const r = asCommand(ws, quarantine, () => writeFileSync(hook, `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 }));
    expect(r.moved.map((m) => m.from)).toEqual([hook]);
    spawnSync("git", ["commit", "-q", "--allow-empty", "-m", "x"], { cwd: ws, env: { PATH: process.env.PATH, HOME: base, GIT_CONFIG_NOSYSTEM: "1", GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@x", GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@x" } });
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(ws, ".husky", "_", "h"))).toBe(true);
  });

  test("regression: a .git file pointing to a repository outside the workspace whose config runs a program was named as harmless; the pointer is moved aside", () => {
    const { ws, quarantine, marker } = workspace("outside-pointer");
    const outside = join(base, "outside-pointer", "elsewhere");
    mkdirSync(outside, { recursive: true });
    execFileSync("git", ["init", "-q", outside]);
    writeFileSync(join(outside, ".git", "config"), fsmonitor(marker), { flag: "a" });
    const sub = join(ws, "sub");
    const r = asCommand(ws, quarantine, () => {
      mkdirSync(sub);
      writeFileSync(join(sub, ".git"), `gitdir: ${join(outside, ".git")}\n`);
    });
    expect(r.moved.map((m) => m.from)).toEqual([join(sub, ".git")]);
    expect(r.note).toContain("core.fsmonitor");
    expect(r.note).not.toContain("nothing in it makes git run a program");
    expect(userGitStatus(sub, marker)).toBe(false);
    expect(existsSync(join(outside, ".git", "config"))).toBe(true); // not the command's: left where it is
  });

  test("regression: the walk pushed past its bound by many folders hid a nested repository; what it could not see and the command changed is moved aside", () => {
    const { ws, quarantine, marker } = workspace("bound");
    mkdirSync(join(ws, "old"));
    const r = asCommand(ws, quarantine, () => {
      for (let i = 0; i < 30; i++) mkdirSync(join(ws, ".cache", `d${i}`), { recursive: true });
      const nested = join(ws, ".cache", "d29", "repo");
      mkdirSync(nested);
      execFileSync("git", ["init", "-q", nested]);
      writeFileSync(join(nested, ".git", "config"), fsmonitor(marker), { flag: "a" });
    }, 10);
    expect(r.note).toContain("more folders than SANDBOX_GIT_WALK_DIRS");
    expect(existsSync(join(ws, ".cache", "d29", "repo", ".git"))).toBe(false);
    expect(existsSync(join(ws, "old"))).toBe(true); // unchanged folders stay
  });

  test("regression: past the walk's bound, a nested repository deep in a folder that was there before, registered in the root index as a submodule (mode 160000), ran at a plain git status at the root; gitlinks are followed wherever they are", () => {
    const { ws, quarantine, marker } = workspace("gitlink");
    const deep = join(ws, "lib", "a", "b");
    mkdirSync(deep, { recursive: true });
    for (let i = 0; i < 30; i++) mkdirSync(join(ws, ".cache", `d${i}`), { recursive: true });
    const nested = join(deep, "x");
    Bun.sleepSync(50); // the folders above are older than the command
    const since = Date.now();
    const before = snapshotGit([ws], 10);
    // the command
    mkdirSync(nested);
    execFileSync("git", ["init", "-q", nested]);
    execFileSync("git", ["commit", "-q", "--allow-empty", "-m", "x"], { cwd: nested, env: { PATH: process.env.PATH, HOME: base, GIT_CONFIG_NOSYSTEM: "1", GIT_AUTHOR_NAME: "u", GIT_AUTHOR_EMAIL: "u@x", GIT_COMMITTER_NAME: "u", GIT_COMMITTER_EMAIL: "u@x" } });
    const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: nested, encoding: "utf8" }).trim();
    execFileSync("git", ["update-index", "--add", "--cacheinfo", `160000,${head},lib/a/b/x`], { cwd: ws });
    writeFileSync(join(nested, ".git", "config"), fsmonitor(marker), { flag: "a" });
    const r = checkGit(before, [ws], 10, quarantine, since);
    expect(r.note).toContain("more folders than SANDBOX_GIT_WALK_DIRS");
    expect(r.moved.map((m) => m.from)).toEqual([join(nested, ".git")]);
    expect(userGitStatus(ws, marker)).toBe(false);
  });

  test("a plain git init is named, not moved; the user's own program-running settings from before stay", () => {
    const { ws, quarantine } = workspace("plain");
    writeFileSync(join(ws, ".git", "config"), "[core]\n\thooksPath = .husky/_\n", { flag: "a" });
    const r = asCommand(ws, quarantine, () => {
      mkdirSync(join(ws, "pkg"));
      execFileSync("git", ["init", "-q", join(ws, "pkg")]);
    });
    expect(r.moved).toEqual([]);
    expect(r.note).toContain(`sandbox: this command created ${join(ws, "pkg", ".git")}`);
    expect(existsSync(join(ws, "pkg", ".git"))).toBe(true);
    expect(asCommand(ws, quarantine, () => {}).note).toBeUndefined();
  });
});

// The index reader against git's own listing, in each form git writes an index.
describe.skipIf(!HAS_GIT)("the index reader agrees with git ls-files", () => {
  const forms: [name: string, init: string[], after: string[][]][] = [
    ["version 2", [], []],
    ["version 3 (an intent-to-add entry)", [], [["add", "-N", "later.txt"]]],
    ["version 4 (paths compressed)", [], [["update-index", "--index-version", "4"]]],
    ["split index", [], [["update-index", "--split-index"], ["update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,late/sub"]]],
    ["SHA-256 objects", ["--object-format=sha256"], []],
  ];
  for (const [name, init, after] of forms) {
    test(`index: ${name}`, () => {
      const ws = join(base, `index-${name.replace(/\W+/g, "-")}`);
      mkdirSync(ws, { recursive: true });
      execFileSync("git", ["init", "-q", ...init, ws]);
      const git = (...args: string[]) => execFileSync("git", args, { cwd: ws, encoding: "utf8", env: { PATH: process.env.PATH, HOME: base, GIT_CONFIG_NOSYSTEM: "1" } });
      const zero = init.length > 0 ? "2".repeat(64) : "2".repeat(40);
      for (const f of ["a.txt", "dir/b.txt", "dir/deeper/c.txt", "later.txt"]) {
        mkdirSync(join(ws, f, ".."), { recursive: true });
        writeFileSync(join(ws, f), f);
      }
      git("add", "a.txt", "dir");
      for (const sub of ["vendor/one", "vendor/two", "z-last"]) git("update-index", "--add", "--cacheinfo", `160000,${zero},${sub}`);
      for (const step of after) git(...step);
      const want = git("ls-files", "-s").split("\n").filter((l) => l.startsWith("160000 ")).map((l) => l.split("\t")[1]!);
      expect(want.length).toBeGreaterThanOrEqual(3);
      const got = indexGitlinks(join(ws, ".git"), 1 << 20);
      expect(Array.isArray(got) ? [...got].sort() : got).toEqual([...want].sort());
    });
  }
  test("an index that is not one, or cut short, is named, not misread", () => {
    const dir = join(base, "index-bad");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "index"), "not an index at all");
    expect(indexGitlinks(dir, 1 << 20)).toBe("it is not an index file");
    const good = join(base, "index-version-2", ".git", "index");
    writeFileSync(join(dir, "index"), readFileSync(good).subarray(0, 80));
    expect(indexGitlinks(dir, 1 << 20)).toBe("it ends inside an entry");
    expect(indexGitlinks(join(dir, "none"), 1 << 20)).toBeUndefined();
  });
});

// The reader against git's own: for each config text, whether git would run something from it.
const CONFIGS: [string, string, boolean][] = [
  ["plain section", "[core]\n\tfsmonitor = x\n", true],
  ["case of section and key", "[CoRe]\n\tFSMONITOR = x\n", true],
  ["subsection textconv", '[diff "x"]\n\ttextconv = cat\n', true],
  ["old-style subsection", "[diff.x]\n\ttextconv = cat\n", true],
  ["continuation line", "[core]\n\tfsmon\\\nitor = x\n", false],
  ["continued value", "[core]\n\tpager = le\\\nss\n", true],
  ["alias with !", "[alias]\n\tst = !sh -c x\n", true],
  ["alias without !", "[alias]\n\tst = status\n", false],
  ["fsmonitor false", "[core]\n\tfsmonitor = false\n", false],
  ["comment only", "# [core] fsmonitor = x\n", false],
  ["section and key on one line", "[core] fsmonitor = x\n", true],
  ["credential helper under a url", '[credential "https://x"]\n\thelper = !x\n', true],
];

describe.skipIf(!HAS_GIT)("the config reader agrees with git", () => {
  for (const [name, text, runs] of CONFIGS) {
    test(`config: ${name}`, () => {
      const file = join(base, `cfg-${name.replace(/\W+/g, "-")}`);
      writeFileSync(file, text);
      const listed = spawnSync("git", ["config", "--file", file, "--list"], { encoding: "utf8" }).stdout.toLowerCase();
      const gitSays = /^(core\.(fsmonitor=x|pager=less)|diff\.x\.textconv=|alias\.st=!|credential\.https:\/\/x\.helper=)/m.test(listed);
      expect({ name, git: gitSays }).toEqual({ name, git: runs });
      expect({ name, ours: readGitConfig(text, file).programs.length > 0 }).toEqual({ name, ours: runs });
    });
  }
});

describe.skipIf(!HAS_GIT)("the git check with a memory (GitGuard)", () => {
  test("a command that changed nothing needs no walk; a plant by a command after a quiet one, and one between the state before and the check, are both moved aside", () => {
    const { ws, quarantine, marker } = workspace("guard");
    for (let i = 0; i < 50; i++) mkdirSync(join(ws, `d${i}`, "e"), { recursive: true });
    const guard = new GitGuard([ws], WALK);
    try {
      // quiet commands: the state before is the last walk's, the check finds nothing to do
      const first = guard.before();
      expect(guard.after(first, quarantine, Date.now() - 1000).moved).toEqual([]);
      const second = guard.before();
      if (FolderEvents.available()) expect(second).toBe(first); // no folder read again
      expect(guard.after(second, quarantine, Date.now() - 1000).moved).toEqual([]);
      // a command plants a repository-shaped folder deep down
      const third = guard.before();
      const src = join(ws, "d7", "e", "src");
      mkdirSync(join(src, "objects"), { recursive: true });
      mkdirSync(join(src, "refs", "heads"), { recursive: true });
      writeFileSync(join(src, "HEAD"), "ref: refs/heads/main\n");
      writeFileSync(join(src, "config"), fsmonitor(marker));
      const caught = guard.after(third, quarantine, Date.now() - 1000);
      expect(caught.moved.map((m) => m.from)).toEqual([src]);
      expect(userGitStatus(join(ws, "d7", "e"), marker)).toBe(false);
      // and one that only rewrites an existing config, after a quiet round
      guard.after(guard.before(), quarantine, Date.now() - 1000);
      const fourth = guard.before();
      writeFileSync(join(ws, ".git", "config"), `${fsmonitor(marker)}`, { flag: "a" });
      expect(guard.after(fourth, quarantine, Date.now() - 1000).moved.map((m) => m.from)).toEqual([join(ws, ".git", "config")]);
      expect(userGitStatus(ws, marker)).toBe(false);
    } finally {
      guard.close();
    }
  });

  test("a walk past its bound is never reused: every command walks and checks again", () => {
    const { ws, quarantine } = workspace("guard-bound");
    for (let i = 0; i < 30; i++) mkdirSync(join(ws, `d${i}`), { recursive: true });
    const guard = new GitGuard([ws], 10);
    try {
      const a = guard.before();
      expect(a.state.complete).toBe(false);
      guard.after(a, quarantine, Date.now() - 1000);
      expect(guard.before()).not.toBe(a);
    } finally {
      guard.close();
    }
  });
});
