// Unit: the compiled ignore rules give the verdicts of the `ignore` package (which the rg comparison
// tests checked against ripgrep) on generated rules and paths: globs, `**`, classes, escapes, negation,
// anchoring, directory-only rules and rules that ignore a parent directory.
import { expect, test } from "bun:test";
import ignore from "ignore";
import { RuleSet } from "./ignore-rules.ts";

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

// Escaped slashes and reversed ranges are left out: there the package and git disagree.
const ATOMS = ["a", "b", "c", ".", "x.log", "*", "**", "?", "/", "[ab]", "[!a]", "[a-c]", "\\*", " ", "\\ ", "!", "#", "d", "-",
  "[^b]", "**/", "/**", "/**/", "[[:alpha:]]", "]", "ab", "a/", "/a", "\\", "[", "[]a]", "[!]]", "\\!", "\\#", "a\\", "  ", "[a-]", "***"];
const NAMES = ["a", "b", "c", "ab", "x.log", "a.log", ".a", "d", "*", " ", "a ", "!a", "#a", "a-b", "ba", "abc", "c d", "é"];

test("generated rules and paths get the verdicts the ignore package gives", () => {
  const rand = rng(15);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const differ: string[] = [];
  for (let t = 0; t < 1500; t++) {
    const lines = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => {
      const line = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick(ATOMS)).join("").replaceAll("\\/", "/");
      return rand() < 0.2 ? `!${line}` : line;
    });
    const text = lines.join(rand() < 0.1 ? "\r\n" : "\n") + "\n";
    const theirs = ignore({ ignorecase: false }).add(text);
    const ours = new RuleSet(text);
    for (let q = 0; q < 20; q++) {
      const path = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => pick(NAMES)).join("/");
      const isDir = rand() < 0.3;
      const r = theirs.test(isDir ? `${path}/` : path);
      const want = r.ignored ? "ignore" : r.unignored ? "whitelist" : undefined;
      const got = ours.verdict(path, isDir);
      if (got !== want) differ.push(`${JSON.stringify(text)} on ${path}${isDir ? "/" : ""}: ${got} instead of ${want}`);
    }
  }
  expect(differ).toEqual([]);
});

test("git's shapes: anchored, any depth, directory-only, `**` in each place, and a re-included file", () => {
  const rules = new RuleSet("/top\nlog\nbuild/\na/**/z\nin/**\n**/deep\n*.tmp\n!keep.tmp\n");
  expect(rules.verdict("top", false)).toBe("ignore");
  expect(rules.verdict("sub/top", false)).toBeUndefined();
  expect(rules.verdict("sub/log", false)).toBe("ignore");
  expect(rules.verdict("build", false)).toBeUndefined();
  expect(rules.verdict("x/build", true)).toBe("ignore");
  expect(rules.verdict("x/build/f", false)).toBe("ignore");
  expect(rules.verdict("a/z", false)).toBe("ignore");
  expect(rules.verdict("a/b/c/z", false)).toBe("ignore");
  expect(rules.verdict("in", true)).toBeUndefined();
  expect(rules.verdict("in/f", false)).toBe("ignore");
  expect(rules.verdict("q/r/deep", false)).toBe("ignore");
  expect(rules.verdict("q/r/x.tmp", false)).toBe("ignore");
  expect(rules.verdict("q/keep.tmp", false)).toBe("whitelist");
});
