// Unit: Rust-regex translation, -w/-F/smart case, line-bounded matching and the scan shortcuts.
import { expect, test } from "bun:test";
import { compilePatterns, hasUppercase, probeBytes, requiredLiteral, requiredRuns, translate } from "./rg-regex.ts";
import { countMatchedLines, matchedLines } from "./rg-search.ts";

function lines(pattern: string, text: string, extra: Partial<Parameters<typeof compilePatterns>[0]> = {}): string[] {
  const pat = compilePatterns({ patterns: [pattern], fixed: false, word: false, caseMode: "sensitive", ...extra });
  if (typeof pat === "string") throw new Error(pat);
  return matchedLines(text, pat, Infinity).map((s) => text.slice(s.start, s.end));
}

test("matches stay within one line, as in ripgrep's line mode", () => {
  expect(lines("a.b", "a\nb\naxb\n")).toEqual(["axb"]);
  expect(lines("a\\sb", "a\nb\n")).toEqual([]);
  expect(lines("x[^y]z", "x\nz\nxqz")).toEqual(["xqz"]);
  expect(lines("^b$", "a\nb\r\nb\n")).toEqual(["b"]);
});

test("Rust syntax that JavaScript lacks is translated", () => {
  expect(lines("(?i)hello", "HeLLo\nbye\n")).toEqual(["HeLLo"]);
  expect(lines("^\\w+$", "grüße\nab-c\n")).toEqual(["grüße"]);
  expect(lines("[[:digit:]]{3}", "ab12\nx123\n")).toEqual(["x123"]);
  expect(lines("(?P<n>ab)c", "abc\n")).toEqual(["abc"]);
  expect(lines("\\bcafé\\b", "un café noir\ncaféine\n")).toEqual(["un café noir"]);
  expect(translate("a\\-b").source).toBe("a\\u{2d}b");
});

test("-w, -F and smart case", () => {
  expect(lines("foo", "foo bar\nfoobar\n_foo\n", { word: true })).toEqual(["foo bar"]);
  expect(lines("a.b(", "a.b(\naxb(\n", { fixed: true })).toEqual(["a.b("]);
  expect(lines("straße", "STRASSE\nStraße\n", { caseMode: "smart" })).toEqual(["Straße"]);
  expect(hasUppercase("\\W\\S\\p{Lu}x")).toBe(false);
  expect(hasUppercase("[A-Z]")).toBe(true);
});

test("the required literal is one every match contains, or none", () => {
  expect(requiredLiteral("fn \\w+_\\d+\\(")).toBe("fn ");
  expect(requiredLiteral("colou?r")).toBe("colo");
  expect(requiredLiteral("\\.config")).toBe(".config");
  expect(requiredLiteral("a|b")).toBeUndefined();
  expect(requiredLiteral("a.*b")).toBeUndefined();
  expect(requiredRuns("[[:digit:]]+x")).toEqual(["x"]);
  expect(requiredRuns("\\u0041bc")).toEqual([]);
});

test("a leading run (`\\w+…`, `.*…`) selects the same lines through the faster scan", () => {
  expect(lines("\\w+_\\d+\\(", "fn handler_12(x)\nhandler_(\n_1(\n")).toEqual(["fn handler_12(x)"]);
  expect(lines(".*again", "say it again\nnot\n")).toEqual(["say it again"]);
  expect(lines("\\s+x", "a\nx\n  x\n")).toEqual(["  x"]);
  const pat = compilePatterns({ patterns: ["\\w+_\\d+"], fixed: false, word: false, caseMode: "sensitive" });
  if (typeof pat === "string") throw new Error(pat);
  expect("go handler_12 now".match(pat.exact)).toEqual(["handler_12"]);
});

test("probe bytes are ones every match holds: any byte of the literal, or under -i its ASCII non-letters", () => {
  const chars = (bs: number[]) => bs.map((b) => String.fromCharCode(b)).join("");
  expect(chars(probeBytes("needle_value", false))).toHaveLength(2);
  expect(chars(probeBytes("needle_value", true))).toBe("_");
  expect(probeBytes("Straße", true)).toEqual([]); // ẞ folds to ß: no byte of it is certain
  expect(chars(probeBytes("a\nb.c", true))).toBe("."); // a binary file's NULs are read as newlines
  const pat = compilePatterns({ patterns: ["foo", "x_y"], fixed: false, word: false, caseMode: "insensitive" });
  if (typeof pat === "string") throw new Error(pat);
  expect(pat.probes).toBeUndefined(); // `foo` under -i has no certain byte, so no file can be skipped by bytes
  const short = compilePatterns({ patterns: ["\\w+_\\d+\\("], fixed: false, word: false, caseMode: "sensitive" });
  if (typeof short === "string") throw new Error(short);
  expect(short.literals).toBeUndefined(); // no run of two characters...
  expect(chars([...short.probes![0]!].sort())).toBe("(_"); // ...but `_` and `(` are both required
});

test("generated patterns: every text a pattern matches holds its probe bytes and one of its literals", () => {
  let s = 15;
  const rand = () => ((s = (s * 1664525 + 1013904223) >>> 0), s / 2 ** 32);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const atoms = ["a", "b", "_", "(", "\\(", "x", "[ab]", "[[:digit:]]", "[^a]", "\\d", "\\w", ".", "*", "+", "?", "{2}", "\\.", "-",
    "A", "\\b", "^", "$", "(a|b)", "(?:ab)", "\\u0041", "\\x41", "\\pL", "[]a]", "1", " ", "é", "k", "S"];
  const chars = ["a", "b", "_", "(", ")", "x", "1", "-", ".", "A", "B", " ", "é", "k", "K", "\u212a", "S", "\u017f", "\n", "ab", "]"];
  const missed: string[] = [];
  for (let t = 0; t < 3000; t++) {
    const p = Array.from({ length: 1 + Math.floor(rand() * 5) }, () => pick(atoms)).join("");
    const caseMode = pick(["sensitive", "insensitive", "smart"] as const);
    const pat = compilePatterns({ patterns: [p], fixed: rand() < 0.15, word: rand() < 0.2, caseMode });
    if (typeof pat === "string") continue;
    for (let q = 0; q < 30; q++) {
      const text = Array.from({ length: Math.floor(rand() * 8) }, () => pick(chars)).join("");
      pat.exact.lastIndex = 0;
      if (!pat.exact.test(text)) continue;
      const buf = Buffer.from(text);
      const probed = !pat.probes || pat.probes.some((bytes) => bytes.every((b) => buf.includes(b)));
      const literal = !pat.literals || pat.literals.some((l) => buf.includes(l));
      if (!probed || !literal) missed.push(`${caseMode} ${JSON.stringify(p)} matches ${JSON.stringify(text)}`);
    }
  }
  expect(missed).toEqual([]);
});

test("a plain pattern finds by string search the lines the regex finds", () => {
  let s = 7;
  const rand = () => ((s = (s * 1664525 + 1013904223) >>> 0), s / 2 ** 32);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const bits = ["a", "b", "ab", "\n", " ", "é", "😀", "\r\n", "-", "#"];
  for (const [pattern, fixed] of [["ab", false], ["a", false], ["b a", false], ["é😀", false], ["a.b", true], ["#-", false], ["a\r", false]] as const) {
    const pat = compilePatterns({ patterns: [pattern], fixed, word: false, caseMode: "sensitive" });
    if (typeof pat === "string") throw new Error(pat);
    expect(pat.plain).toBe(pattern);
    for (let t = 0; t < 300; t++) {
      const text = Array.from({ length: Math.floor(rand() * 30) }, () => pick(bits)).join("");
      for (const limit of [Infinity, 1, 2]) {
        expect(matchedLines(text, pat, limit)).toEqual(matchedLines(text, { ...pat, plain: undefined }, limit));
        expect(countMatchedLines(text, pat, limit)).toBe(matchedLines(text, pat, limit).length);
      }
    }
  }
  for (const [pattern, fixed, caseMode] of [["a.b", false, "sensitive"], ["ab", false, "insensitive"], ["a\nb", true, "sensitive"]] as const) {
    // A newline in a pattern needs -U (ripgrep refuses it otherwise).
    const pat = compilePatterns({ patterns: [pattern], fixed, word: false, caseMode, multiline: pattern.includes("\n") });
    if (typeof pat === "string") throw new Error(pat);
    expect(pat.plain).toBeUndefined();
  }
});
