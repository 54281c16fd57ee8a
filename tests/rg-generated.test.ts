// Generated (the built-in run in this process, as tests/rg.test.ts's table; its binary wiring is tested there): random trees (ignore files at several depths, hidden and binary files, CRLF,
// UTF-8 edge cases) searched with random combinations of the supported flags, through ripgrep and the
// built-in (`--sort path`, so ripgrep prints in one order); stdout, exit code and stderr's first word must
// agree. Fixed seed, bounded count.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bothInMemory, realRg, shimEnv, writeTree } from "./rg-compare.ts";

const SEED = 15;
const TREES = 4;
const CASES_PER_TREE = 16;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const LINES = ["foo", "Foo bar", "FOO", "a foo b", "foobar", "föö naïve", "bar", "", "  indented foo", "x_1 = f(o)", "日本 foo", "trailing bar", "foo foo foo", "ümlaut Über"];
const NAMES = ["a.txt", "b.rs", "c.md", "x.log", "keep.log", "top.txt", ".hidden", ".env", "ü.txt", "data.bin", "d.py"];
const RULES = ["*.log", "!keep.log", "sub/", "/top.txt", "*.md", "!c.md", "b*", ".hidden", "deep/", "*.py", "!d.py"];
const FLAGS: string[][] = [
  ["-n"], ["-i"], ["-w"], ["-c"], ["-l"], ["-v"], ["-o"], ["-F"], ["-x"], ["--hidden"], ["--no-ignore"], ["-u"], ["-uu"],
  ["-C1"], ["-A1"], ["-B1"], ["-m1"], ["--column"], ["-S"], ["--files-without-match"], ["-g", "*.txt"], ["-g", "!*.rs"],
  ["-t", "rust"], ["-T", "md"], ["--count-matches"], ["--null"], ["-a"], ["--binary"], ["--crlf"], ["--passthru"], ["-r", "X$0"],
  ["--vimgrep"], ["--max-depth", "1"], ["-H"], ["-I"], ["--heading"], ["--include-zero"], ["-M", "12"],
  ["--trim"], ["--no-ignore-vcs"], ["--no-ignore-dot"], ["--iglob", "*.TXT"], ["-U"], ["--json"], ["--stats"], ["-x"], ["-L"],
];
const PATTERNS = ["foo", "fo+", "\\bfoo\\b", "^foo", "bar$", "f.o", "[fF]oo", "foo|bar", "ö", "\\w+_\\d", "(?i)über", "o{2}"];

function pick<T>(rand: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)]!;
}

function fileContent(rand: () => number, name: string): string | Buffer {
  const n = 1 + Math.floor(rand() * 6);
  const lines = Array.from({ length: n }, () => pick(rand, LINES));
  const eol = rand() < 0.2 ? "\r\n" : "\n";
  const text = lines.join(eol) + (rand() < 0.8 ? eol : "");
  if (name === "data.bin" || rand() < 0.05) return Buffer.concat([Buffer.from(text), Buffer.from([0]), Buffer.from("foo after nul\n")]);
  return text;
}

function makeTree(rand: () => number): Record<string, string | Buffer> {
  const files: Record<string, string | Buffer> = {};
  const dirs = ["", "sub", "src", "src/deep", "src/deep/more", ".hdir"];
  if (rand() < 0.75) files[".git/HEAD"] = "ref: refs/heads/main\n";
  for (const dir of dirs) {
    const prefix = dir ? `${dir}/` : "";
    for (const name of NAMES) if (rand() < 0.45) files[prefix + name] = fileContent(rand, name);
    for (const rules of [".gitignore", ".ignore", ".rgignore"]) {
      if (rand() < 0.25) files[prefix + rules] = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => pick(rand, RULES)).join("\n") + "\n";
    }
  }
  return files;
}

function makeArgs(rand: () => number): string[] {
  const args: string[] = [];
  const n = Math.floor(rand() * 4);
  const chosen = new Set<string[]>(); // ripgrep 13 refuses some flags given twice
  for (let i = 0; i < n; i++) chosen.add(pick(rand, FLAGS));
  for (const f of chosen) args.push(...f);
  return [...args, "--sort", "path", pick(rand, PATTERNS)]; // one thread in ripgrep: its exact output, in order
}

let base: string;
let shim: { env: (extra?: Record<string, string>) => NodeJS.ProcessEnv; shim: string };
const rand = rng(SEED);
const trees = Array.from({ length: TREES }, () => ({ files: makeTree(rand), cases: Array.from({ length: CASES_PER_TREE }, () => makeArgs(rand)) }));

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "tendril-rg-gen-"));
  shim = shimEnv(base);
  trees.forEach((t, i) => writeTree(join(base, `t${i}`), t.files));
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe.skipIf(!realRg)(`generated trees (seed ${SEED}) searched alike`, () => {
  trees.forEach((t, i) => {
    for (const args of [...t.cases, ["--files"], ["--files", "--hidden", "--no-ignore"]]) {
      test(`t${i}: rg ${args.join(" ")}`, async () => {
        const { ours, theirs } = await bothInMemory(shim.env(), args, join(base, `t${i}`));
        expect(ours).toEqual(theirs);
      });
    }
  });
});
