// README.md and docs/*.md link to each other: every relative link must name a file that exists, and every
// #anchor a heading of that file (GitHub's slugs). README links every docs page.
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = join(import.meta.dir, "..");
const PAGES = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];

/** The lines outside fenced code blocks, with inline code spans blanked (neither holds links or headings). */
function proseLines(text: string): string[] {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of text.split("\n")) {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (m && m[1]![0] === fence[0] && m[1]!.length >= fence.length && line.trim() === m[1]) fence = null;
      out.push("");
    } else if (m) {
      fence = m[1]!;
      out.push("");
    } else out.push(line.replace(/(`+)[\s\S]*?\1/g, (s) => " ".repeat(s.length)));
  }
  return out;
}

/** GitHub's anchor for a heading: lowercase, punctuation removed (hyphens and underscores kept), each space a hyphen. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a page has: its headings' slugs, a repeated one numbered as GitHub numbers it (-1, -2, …). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence: string | null = null;
  for (const line of text.split("\n")) {
    const f = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (f && f[1]![0] === fence[0] && f[1]!.length >= fence.length && line.trim() === f[1]) fence = null;
      continue;
    }
    if (f) {
      fence = f[1]!;
      continue;
    }
    const m = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The link targets of a page's prose: inline links `[text](target)` and reference definitions `[x]: target`. */
function links(text: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  proseLines(text).forEach((line, i) => {
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ line: i + 1, target: m[1]! });
    const def = /^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(\s|$)/.exec(line);
    if (def) out.push({ line: i + 1, target: def[1]! });
  });
  return out;
}

/** What is wrong with one link of `page`, or null when it resolves. */
function broken(page: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto: — not checked here
  const hash = target.indexOf("#");
  const path = hash < 0 ? target : target.slice(0, hash);
  const anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
  const file = path === "" ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), decodeURIComponent(path));
  if (relative(ROOT, file).startsWith("..")) return `${target} leads outside the repository`;
  if (!existsSync(file)) return `${target}: no file ${relative(ROOT, file)}`;
  if (anchor === null) return null;
  if (!file.endsWith(".md")) return `${target}: an anchor into a file that is not markdown`;
  return anchors(readFileSync(file, "utf8")).has(anchor) ? null : `${target}: ${relative(ROOT, file)} has no heading #${anchor}`;
}

test("the slugs follow GitHub's rules", () => {
  expect(slug("Sandbox (`--sandbox`)")).toBe("sandbox---sandbox");
  expect(slug("`tendril prompt` (alias `yopo`): one prompt in CI")).toBe("tendril-prompt-alias-yopo-one-prompt-in-ci");
  expect(slug("Prompt caching, cost and prices")).toBe("prompt-caching-cost-and-prices");
  expect(slug("ACP v2 (Preview)")).toBe("acp-v2-preview");
  expect(slug("MAX_LINE_BYTES and the rest")).toBe("max_line_bytes-and-the-rest");
  expect([...anchors("# A\n## A\n```\n# B\n```\n### A.\n")]).toEqual(["a", "a-1", "a-2"]);
});

test("every relative link and #anchor in README.md and docs/*.md resolves", () => {
  const problems: string[] = [];
  let checked = 0;
  for (const page of PAGES) {
    for (const { line, target } of links(readFileSync(join(ROOT, page), "utf8"))) {
      checked++;
      const why = broken(page, target);
      if (why) problems.push(`${page}:${line}: ${why}`);
    }
  }
  expect(problems).toEqual([]);
  expect(checked).toBeGreaterThan(PAGES.length); // the reader found the links
});

test("README links every docs page", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const linked = new Set(links(readme).map(({ target }) => target.split("#")[0]));
  expect(PAGES.filter((p) => p !== "README.md" && !linked.has(p))).toEqual([]);
});
