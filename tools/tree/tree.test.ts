// Unit: tree's counts shared with worker threads draw exactly what one thread draws, on a generated tree,
// with each budget stopping the walk midway, binary files, a file of several read chunks and an unreadable file.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ShimOutput } from "../search/shim-output.ts";
import { buildTree, buildTreeParallel, renderTree, type TreeOptions, type TreeParallel, type TreeResult } from "./tree.ts";

let base: string;
const ALL: TreeOptions = { maxDepth: undefined, all: false, noIgnore: false, maxEntries: 1e9, budgetMs: 1e9, maxShown: 1e9, maxShownBytes: 1e9 };

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "tendril-tree-unit-"));
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 48271) % 2147483647) % n);
  for (let i = 0; i < 90; i++) {
    const dir = join(base, `d${i % 4}`, i % 3 === 0 ? "" : `s${i % 5}`);
    mkdirSync(dir, { recursive: true });
    const lines = rand(40);
    writeFileSync(join(dir, `f${i}.txt`), "x\n".repeat(lines) + (i % 7 === 0 ? "no newline" : ""));
  }
  writeFileSync(join(base, "d1", "bin.dat"), Buffer.from([1, 0, 2, 10, 10]));
  writeFileSync(join(base, "d2", "empty.txt"), "");
  writeFileSync(join(base, "d2", "big.txt"), "line\n".repeat(500_000)); // 2.5 MB: three read chunks
  mkdirSync(join(base, ".git"));
  writeFileSync(join(base, ".gitignore"), "*.log\n");
  writeFileSync(join(base, "d0", "skip.log"), "ignored\n");
  symlinkSync("d0", join(base, "link"));
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

function draw(t: TreeResult): string {
  let text = "";
  const out = new ShimOutput((c) => (text += c), { maxBytes: Infinity, maxLines: Infinity }, "tree", "");
  renderTree(t, out);
  out.finish();
  return text;
}

/**
 * Shares counts with two workers after 3 files, 2 files a batch, the first batch each sent before its
 * start-up (so each counts one however quickly this thread walks); `asked` counts the workers' start.
 */
function sharing(onStart?: () => void): TreeParallel & { asked: number } {
  const par = {
    asked: 0, minFiles: 3, batchFiles: 2, workerQueue: 2, preload: 1,
    workers: async () => {
      par.asked++;
      onStart?.();
      return 2;
    },
  };
  return par;
}

test("counts shared with workers draw what one thread draws: whole tree, -L 1, -a", async () => {
  for (const o of [ALL, { ...ALL, maxDepth: 1 }, { ...ALL, all: true }]) {
    const one = draw(buildTree(base, ".", base, o));
    const par = sharing();
    expect(draw(await buildTreeParallel(base, ".", base, o, par))).toBe(one);
    expect(par.asked).toBe(1);
  }
  const whole = draw(buildTree(base, ".", base, ALL));
  expect(whole).toContain("├── big.txt (500000 lines)");
  expect(whole).toContain("bin.dat (binary)");
  expect(whole).not.toContain("skip.log");
  expect(whole).toMatch(/\n24 directories, 93 files, \d+ lines\n$/);
});

test("each budget stops the shared walk where it stops one thread's, with the same + marks and note", async () => {
  // A clock that advances once per look stops the walk at the same entry in both (no file here is read
  // in more than one chunk, so only the walk looks at it).
  const ticking = () => {
    let t = 0;
    return () => t++;
  };
  const cases: TreeOptions[] = [
    { ...ALL, maxEntries: 17 },
    { ...ALL, maxShown: 12 },
    { ...ALL, maxShownBytes: 300 },
    { ...ALL, budgetMs: 13, now: ticking() },
  ];
  for (const o of cases) {
    const root = join(base, "d3");
    const one = draw(buildTree(root, "d3", base, o.now ? { ...o, now: ticking() } : o));
    // Each stops inside a subdirectory: it and every directory above it read as partial.
    expect(one.split("\n")[0]).toMatch(/^d3 \(\d+\+ files, \d+\+ lines\)$/);
    expect(one).toMatch(/\n└── s\d\/ \(\d+\+ files?, \d+\+ lines?\)\n/);
    const par = sharing();
    expect(draw(await buildTreeParallel(root, "d3", base, o, par))).toBe(one);
    expect(par.asked).toBe(1);
  }
});

test("a file gone between the listing and its count is noted unreadable by a worker as on one thread", async () => {
  const dir = join(base, "gone");
  mkdirSync(dir);
  for (let i = 0; i < 12; i++) writeFileSync(join(dir, `g${String(i).padStart(2, "0")}.txt`), "a\nb\n");
  try {
    // The workers are asked for after 3 files are counted, when the whole listing is already read; g04 is
    // in the first batch a worker gets.
    const par = sharing(() => unlinkSync(join(dir, "g04.txt")));
    const shared = draw(await buildTreeParallel(dir, "gone", base, ALL, par));
    expect(shared).toContain("├── g04.txt (unreadable: No such file or directory (os error 2))\n");
    expect(shared).toContain("gone (12 files, 22 lines)\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
