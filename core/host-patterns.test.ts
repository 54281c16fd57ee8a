// sandbox_allow_domains patterns against the Public Suffix List (core/host-patterns.ts, through tldts):
// which wildcards are refused because anyone can register a name under them, and which one owner's
// names stay allowed. The config's wiring and message are core/config.test.ts's.
import { beforeAll, expect, test } from "bun:test";
import { getPublicSuffix } from "tldts";
import { loadPublicSuffixes, parseHostPattern, SUFFIX_PARENTS } from "./host-patterns.ts";

beforeAll(() => loadPublicSuffixes(["*.example.com"]));

/** "refused", or the pattern as read. */
const read = (pattern: string) => {
  const p = parseHostPattern(pattern);
  return typeof p === "string" ? (p.includes("covers a public suffix") ? "refused" : p) : `${p.wildcard ? "*." : ""}${p.host}`;
};

test("regression: a wildcard over a private public suffix is refused (the whole Public Suffix List); one owner's names under it stay allowed", () => {
  const table: [pattern: string, want: string][] = [
    // private section: buckets, tunnels, shared hosting
    ["*.s3.amazonaws.com", "refused"],
    ["*.r2.dev", "refused"],
    ["*.trycloudflare.com", "refused"],
    ["*.ngrok.app", "refused"],
    ["*.github.io", "refused"],
    ["*.githubusercontent.com", "refused"],
    ["*.blob.core.windows.net", "refused"],
    // ICANN section, one label and two
    ["*.com", "refused"],
    ["*.co.uk", "refused"],
    ["*.kawasaki.jp", "refused"],
    // no suffix themselves, but holding some below them
    ["*.amazonaws.com", "refused"],
    ["*.windows.net", "refused"],
    // one owner's names
    ["*.example.com", "*.example.com"],
    ["*.api.github.com", "*.api.github.com"],
    ["*.github.com", "*.github.com"],
    ["*.mybucket.s3.amazonaws.com", "*.mybucket.s3.amazonaws.com"],
    ["*.me.github.io", "*.me.github.io"],
    ["*.corp.co.uk", "*.corp.co.uk"],
    ["api.r2.dev", "api.r2.dev"],
  ];
  expect(table.map(([pattern]) => [pattern, read(pattern)])).toEqual(table);
  expect(parseHostPattern("*.r2.dev")).toBe("*.r2.dev covers a public suffix, under which anyone can register a name: name the hosts (or *.their-domain.r2.dev)");
});

test("each domain named as holding public suffixes is no suffix itself, and holds one", () => {
  const below: Record<string, string> = {
    "amazonaws.com": "s3.amazonaws.com",
    "amazonaws.com.cn": "s3.cn-north-1.amazonaws.com.cn",
    "windows.net": "blob.core.windows.net",
    "core.windows.net": "blob.core.windows.net",
    "fastly.net": "freetls.fastly.net",
  };
  const suffix = (host: string) => getPublicSuffix(`name.${host}`, { allowPrivateDomains: true });
  expect([...SUFFIX_PARENTS].map((p) => [p, suffix(p) === p, below[p] !== undefined && suffix(below[p]) === below[p]])).toEqual([...SUFFIX_PARENTS].map((p) => [p, false, true]));
});
