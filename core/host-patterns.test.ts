// sandbox_allow_domains patterns against the Public Suffix List (core/host-patterns.ts, through tldts):
// which wildcards are refused because anyone can register a name under them, and which one owner's
// names stay allowed. The config's wiring and message are core/config.test.ts's.
import { beforeAll, expect, test } from "bun:test";
import { type HostPattern, loadPublicSuffixes, matchHost, parseHostPattern } from "./host-patterns.ts";

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
    // no suffix themselves, but holding some below them: read, and matched only on their own names (next test)
    ["*.amazonaws.com", "*.amazonaws.com"],
    ["*.windows.net", "*.windows.net"],
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

test("regression: *.amazonaws.com or *.windows.net reached names anyone registers below them (a bucket, an API gateway, a blob store); a wildcard now never crosses a public suffix, judged by the list for each host", () => {
  const patterns = ["*.amazonaws.com", "*.windows.net", "*.github.com", "*.fastly.net", "*.example.co.uk"].map((p) => parseHostPattern(p) as HostPattern);
  const table: [host: string, want: string][] = [
    ["sts.amazonaws.com", "allowed"],
    ["bucket.s3.amazonaws.com", "suffix"],
    ["a.b.bucket.s3.amazonaws.com", "suffix"],
    ["x.s3.us-east-1.amazonaws.com", "suffix"],
    ["app.execute-api.us-east-1.amazonaws.com", "suffix"],
    ["store.blob.core.windows.net", "suffix"],
    ["login.windows.net", "allowed"],
    ["mine.freetls.fastly.net", "suffix"],
    ["api.github.com", "allowed"],
    ["a.b.github.com", "allowed"],
    ["www.example.co.uk", "allowed"],
    ["evil.co.uk", "host"],
    ["amazonaws.com", "host"],
    ["BUCKET.S3.AMAZONAWS.COM.", "suffix"],
  ];
  expect(table.map(([host]) => [host, matchHost(host, 443, patterns)])).toEqual(table);
  // an exact name under a suffix is the user's own choice and is kept
  expect(matchHost("mine.s3.amazonaws.com", 443, [parseHostPattern("mine.s3.amazonaws.com") as HostPattern])).toBe("allowed");
});
