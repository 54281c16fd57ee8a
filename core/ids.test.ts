import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomHex, randomId, sha256, sha256File, sha256Hex } from "./ids.ts";

test("random hex has two lower-case hex digits per byte and differs between calls", () => {
  const a = randomHex(8);
  expect(a).toMatch(/^[0-9a-f]{16}$/);
  expect(randomHex(4)).toMatch(/^[0-9a-f]{8}$/);
  expect(new Set(Array.from({ length: 50 }, () => randomHex(8))).size).toBe(50);
});

test("ids are version-4 UUIDs", () => {
  expect(randomId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(randomId()).not.toBe(randomId());
});

test("sha256Hex is node:crypto's SHA-256 of the UTF-8 text", () => {
  for (const text of ["", "abc", "dev\0shell\0 0", "é✓"]) {
    expect(sha256Hex(text)).toBe(createHash("sha256").update(text).digest("hex"));
  }
  expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});

test("SHA-256 has one owner: text, bytes, a stream and a file give the same known digest", async () => {
  const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  expect(sha256Hex("abc")).toBe(abc);
  expect(sha256Hex(new TextEncoder().encode("abc"))).toBe(abc);
  const h = sha256();
  h.update("a");
  h.update(new TextEncoder().encode("bc"));
  expect(h.hex()).toBe(abc);
  const dir = mkdtempSync(join(tmpdir(), "tendril-ids-"));
  writeFileSync(join(dir, "f"), "abc");
  expect(await sha256File(join(dir, "f"))).toBe(abc);
  await expect(sha256File(join(dir, "missing"))).rejects.toThrow("ENOENT");
  rmSync(dir, { recursive: true });
});
