// The digest of a long command output (SPEC §7), in memory: for each tool's shape every failure, its
// message, its location and the totals stay in view while the rest folds; escapes and redraws are
// resolved as a terminal would; a folded run never hides a line that looks like trouble; bad input
// (binary, invalid UTF-8, one endless line, 200,000 lines) stays bounded in time and size.
import { expect, test } from "bun:test";
import { SAMPLES } from "../../tests/log-samples.ts";
import { DEFAULT_DIGEST, digestLines, digestOutput, readsAFile, screenLines } from "./output-digest.ts";

test("each tool's log: every failure, message, location and total in view; the passing noise folded", () => {
  for (const make of SAMPLES) {
    const s = make();
    const d = digestOutput(s.text);
    expect({ log: s.name, missing: s.mustSee.filter((m) => !d.text.includes(m)) }).toEqual({ log: s.name, missing: [] });
    expect(d.text).not.toContain("\x1b");
    // the big ones shrink to a fraction (pytest's is short already)
    if (s.text.length > 10_000) expect({ log: s.name, ratio: d.text.length / s.text.length < 0.4 }).toEqual({ log: s.name, ratio: true });
  }
});

test("what a terminal shows: colours and cursor codes removed, \\r and erase-line redraws resolved to the last state", () => {
  expect(screenLines("\x1b[32mok\x1b[0m done\n")).toEqual(["ok done"]);
  expect(screenLines("progress 10%\rprogress 100%\n")).toEqual(["progress 100%"]);
  expect(screenLines("abcdef\rxy\n")).toEqual(["xycdef"]);
  expect(screenLines("downloading…\r\x1b[2Kdone\n")).toEqual(["done"]);
  expect(screenLines("abcdef\r\x1b[Kxy\n")).toEqual(["xy"]);
  expect(screenLines("ab\bc\n")).toEqual(["ac"]);
  expect(screenLines("\x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n")).toEqual(["link"]);
  expect(screenLines("a\r\nb\n")).toEqual(["a", "b"]);
});

test("a folded run never hides a line that looks like trouble, wherever it falls among look-alike lines", () => {
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) % n);
  // Each made unique by its id where the shape allows (a stack frame must end with its location).
  const troubles = [
    (id: string) => `Error: boom ${id}`,
    (id: string) => `  ✖ does a thing ${id}`,
    (id: string) => `FAIL src/a.test.ts ${id}`,
    (id: string) => `thread 'main' panicked at src/x${id}.rs:1:2:`,
    (id: string) => `AssertionError: nope ${id}`,
    (id: string) => `    at run${id} (/w/src/x.ts:10:5)`,
    (id: string) => `E       assert 1 == 2 ${id}`,
    (id: string) => `src/x.ts(3,4): error TS1005: ';' expected. ${id}`,
    (id: string) => `src/app${id}.ts:12:5 expected a semicolon`,
  ];
  for (let round = 0; round < 200; round++) {
    const lines = Array.from({ length: 300 + rnd(3000) }, (_, i) => `✓ case ${i} passes (${rnd(9)} ms)`);
    const planted: string[] = [];
    for (let k = 0; k < 1 + rnd(5); k++) {
      const t = troubles[rnd(troubles.length)]!(`_${round}_${k}`);
      lines.splice(rnd(lines.length), 0, t);
      planted.push(t);
    }
    const d = digestLines(lines);
    for (const t of planted) expect({ round, t, shown: d.text.split("\n").includes(t) }).toEqual({ round, t, shown: true });
  }
});

test("bad input stays bounded: binary, invalid UTF-8, a 10 MB line, 200,000 lines; the cut is said", () => {
  const t0 = performance.now();
  const binary = Buffer.from(Array.from({ length: 2_000_000 }, (_, i) => (i * 2654435761) & 0xff)).toString("utf8");
  const bin = digestOutput(binary);
  expect(bin.text.length).toBeLessThan(DEFAULT_DIGEST.maxChars * 2);
  const long = digestOutput(`${"x".repeat(10 * 1024 * 1024)}\n`);
  expect(long.text).toContain("more characters]");
  expect(long.text.length).toBeLessThan(2000);
  const many = digestOutput(Array.from({ length: 200_000 }, (_, i) => `line ${i} of output`).join("\n"));
  expect(many.lines).toBe(200_000);
  expect(many.text).toContain("folded (lines");
  expect(many.text.length).toBeLessThan(DEFAULT_DIGEST.maxChars * 2);
  const endless = digestOutput("no newline ever ".repeat(100_000));
  expect(endless.lines).toBe(1);
  // all of it well within a generous bound on a busy machine (the benchmark measures the real cost)
  expect(performance.now() - t0).toBeLessThan(15_000);
});

test("many trouble lines: the digest stays within its size bound, trouble first", () => {
  const lines = Array.from({ length: 20_000 }, (_, i) => (i % 10 === 0 ? `src/f${i}.ts(1,1): error TS1: bad` : `ok ${i}`));
  const d = digestLines(lines);
  expect(d.text.split("\n").filter((l) => l.includes("error TS1")).length).toBe(2000);
  expect(d.text).not.toContain("\nok 1\n");
});

test("a command that reads a file is not digested: cat, sed -n, head, tail, nl of files; a pipe into another program is", () => {
  for (const c of ["cat src/a.ts", "sed -n '10,80p' big.log", "head -n 200 data.csv", "tail -n 50 out.txt", "nl -ba f.py", "cat 'a b.txt' c.txt"]) expect({ c, read: readsAFile(c) }).toEqual({ c, read: true });
  for (const c of ["npm test", "cat log | grep x", "cargo test; cat x", "cat $(ls)", "make && cat out"]) expect({ c, read: readsAFile(c) }).toEqual({ c, read: false });
});
