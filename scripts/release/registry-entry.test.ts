// The registry entry's rules, without a release (the release itself is tests/release.test.ts's).
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { checkAgentEntry, parseBaseUrl } from "./registry-entry.ts";

const VERSION = (JSON.parse(readFileSync(join(import.meta.dir, "..", "..", "package.json"), "utf8")) as { version: string }).version;

describe("the registry entry's rules, without a release", () => {
  test("--base-url takes https, http and file URLs, and refuses other schemes, non-URLs and /latest/", () => {
    expect(parseBaseUrl("https://example.com/tendril/v1.2.3").href).toBe("https://example.com/tendril/v1.2.3/");
    expect(parseBaseUrl("http://127.0.0.1:8000/").protocol).toBe("http:");
    expect(parseBaseUrl("file:///srv/tendril/").protocol).toBe("file:");
    expect(() => parseBaseUrl("ftp://example.com/")).toThrow("unknown scheme ftp:");
    expect(() => parseBaseUrl("dist/release")).toThrow("is not a URL");
    expect(() => parseBaseUrl("https://example.com/latest/")).toThrow("/latest/");
  });

  test("an entry with a platform key the registry does not know, or an unknown field, is refused", () => {
    const target = { archive: `https://example.com/tendril-${VERSION}-linux-x64.tar.gz`, cmd: "./tendril", args: ["agent"] };
    const entry = (binary: Record<string, unknown>) => ({ id: "tendril", name: "Tendril", version: VERSION, description: "d", distribution: { binary } });
    expect(checkAgentEntry(entry({ "linux-x86_64": target })).id).toBe("tendril");
    expect(() => checkAgentEntry(entry({ "linux-x64": target }))).toThrow("does not match the registry's schema");
    expect(() => checkAgentEntry(entry({ "linux-x86_64": { ...target, checksum: "x" } }))).toThrow("does not match the registry's schema");
    expect(() => checkAgentEntry(entry({ "linux-x86_64": { ...target, archive: "https://example.com/tendril.tar.gz" } }))).toThrow(`does not name version ${VERSION}`);
  });
});
