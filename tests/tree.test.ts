// End-to-end: the `tree` shim (a link named `tree` to the binary): gitignore-aware drawing with line
// counts and directory totals, -L and -a, the output cap, and a bounded answer for `tree /`.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, runBin } from "./binary.ts";

let base: string;
let root: string;
let tree: string;

function write(rel: string, content: string | Buffer): void {
  mkdirSync(join(root, rel, ".."), { recursive: true });
  writeFileSync(join(root, rel), content);
}

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "tendril-tree-"));
  root = join(base, "proj");
  mkdirSync(join(root, ".git"), { recursive: true });
  write(".git/HEAD", "ref\n");
  write(".gitignore", "ignored/\n*.log\n");
  write("a.txt", "1\n2\n3\n");
  write("b.md", "no newline at the end");
  write("empty.txt", "");
  write("bin.dat", Buffer.from([1, 2, 0, 3, 10]));
  write(".hidden.txt", "h\nh\n");
  write("ignored/x.txt", "x\n");
  write("app.log", "log\n");
  write("src/main.ts", "m\n".repeat(10));
  write("src/util/helpers.ts", "h\n".repeat(5));
  write("src/util/more.ts", "one\n");
  tree = join(base, "tree");
  symlinkSync(BIN, tree);
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

function run(args: string[], env: Record<string, string> = {}) {
  return runBin(args, { bin: tree, cwd: root, env: { PATH: "/usr/bin:/bin", ...env } });
}

test("draws the gitignore-aware tree with line counts and directory totals", () => {
  const r = run([]);
  expect(r.stdout).toBe(
    [
      ". (7 files, 20 lines)",
      "├── a.txt (3 lines)",
      "├── b.md (1 line)",
      "├── bin.dat (binary)",
      "├── empty.txt (0 lines)",
      "└── src/ (3 files, 16 lines)",
      "    ├── main.ts (10 lines)",
      "    └── util/ (2 files, 6 lines)",
      "        ├── helpers.ts (5 lines)",
      "        └── more.ts (1 line)",
      "",
      "2 directories, 7 files, 20 lines",
      "",
    ].join("\n"),
  );
  expect(r.code).toBe(0);
});

test("-L limits the drawing but not the totals; -a adds hidden files but never .git", () => {
  const r = run(["-L", "1", "-a"]);
  expect(r.stdout.split("\n").slice(0, 9)).toEqual([
    ". (9 files, 24 lines)",
    "├── .gitignore (2 lines)",
    "├── .hidden.txt (2 lines)",
    "├── a.txt (3 lines)",
    "├── b.md (1 line)",
    "├── bin.dat (binary)",
    "├── empty.txt (0 lines)",
    "└── src/ (3 files, 16 lines)",
    "",
  ]);
});

test("a DIR argument is drawn under its own name", () => {
  expect(run(["src/util"]).stdout.split("\n")[0]).toBe("src/util (2 files, 6 lines)");
});

test("output stops at the line cap with a marker; the walk stops too, so totals read as partial", () => {
  const r = run([], { TENDRIL_SHIM_OUTPUT_LINES: "3" });
  expect(r.stdout).toBe(
    ". (4+ files, 4+ lines)\n├── a.txt (3 lines)\n├── b.md (1 line)\n[tree: output capped at 3 lines; use -L N or a subdirectory]\n",
  );
});

test("bad arguments exit 2 with a message; a missing DIR exits 1", () => {
  const bad = run(["-x"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("unknown flag -x");
  const missing = run(["nope"]);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain("nope: no such directory");
});

// SPEC §8: tree never hangs on `/`; its walk stops at TREE_TIME_S. Timed with the walk limited to 0.25 s,
// so start-up and drawing on a busy machine have room under the bound: the default 1.2 s walk inside
// a 2 s bound left 0.8 s for them, and a loaded CI run took 2.03 s. The default limit answers too.
test("`tree /` answers within 2 s when its walk may take 0.25 s, drawn with -L 1 as well; with the default limit it answers", () => {
  const header = /^\/ \(\d+\+? files?, \d+\+? lines?\)$/;
  for (const args of [["/"], ["/", "-L", "1"]]) {
    const t0 = performance.now();
    const r = run(args, { TENDRIL_TREE_TIME_S: "0.25" });
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toMatch(header);
  }
  const whole = run(["/"]);
  expect(whole.code).toBe(0);
  expect(whole.stdout.split("\n")[0]).toMatch(header);
});

test("the walk stops at TREE_MAX_ENTRIES and at TREE_TIME_S, and says so", () => {
  const few = run([], { TENDRIL_TREE_MAX_ENTRIES: "3" });
  expect(few.code).toBe(0);
  expect(few.stdout).toContain("3 entries");
  const quick = run([], { TENDRIL_TREE_TIME_S: "0.000001" });
  expect(quick.code).toBe(0);
  expect(quick.stdout).toContain("0.0 s");
});

// TREE_WORKER_PRELOAD=1: the worker gets its first batch before it has started, however quickly this walk ends.
test("counts shared with a worker thread in the compiled binary draw what one thread draws, budgets included", () => {
  const shared = { TENDRIL_TREE_PARALLEL_MIN_FILES: "1", TENDRIL_RG_BATCH_FILES: "2", TENDRIL_TREE_WORKER_PRELOAD: "1" };
  const cases: [string[], Record<string, string>][] = [
    [[], {}], [["-a"], {}], [["-L", "1"], {}], [[], { TENDRIL_TREE_MAX_ENTRIES: "6" }], [[], { TENDRIL_SHIM_OUTPUT_LINES: "5" }],
  ];
  for (const [args, env] of cases) {
    const one = run(args, env);
    const par = run(args, { ...env, ...shared });
    expect(par.stdout).toBe(one.stdout);
    expect(par.stderr).toBe("");
    expect(par.code).toBe(0);
  }
  expect(run([], shared).stdout).toContain("├── bin.dat (binary)\n");
});
