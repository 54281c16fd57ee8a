// Unit: Rust-regex translation, -w/-F/smart case, line-bounded matching and the scan shortcuts.
import { expect, test } from "bun:test";
import { compilePatterns, hasUppercase, probeBytes, requiredLiteral, translate } from "./rg-regex.ts";
import { matchedLines } from "./rg-search.ts";

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
});
