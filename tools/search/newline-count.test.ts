// Newline counting for tree's line counts: the 16-byte WebAssembly loop counts what a plain byte count
// finds, at every length around its 16-byte steps and over a whole buffer, newlines at either end included.
import { expect, test } from "bun:test";
import { newlineCounter } from "./newline-count.ts";

function byteCount(buf: Uint8Array, n: number): number {
  let lines = 0;
  for (let i = 0; i < n; i++) if (buf[i] === 10) lines++;
  return lines;
}

test("the SIMD counter and the string search count every newline, at any length and in the last bytes", () => {
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 2 ** 24;
  for (const simd of [true, false]) {
    const c = newlineCounter(1 << 16, simd);
    expect(c.simd).toBe(simd); // Bun has WebAssembly SIMD: the loop itself is under test, not the fallback
    for (const n of [0, 1, 2, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 1000, 4097, 1 << 16]) {
      for (let i = 0; i < n + 16 && i < c.buf.length; i++) c.buf[i] = rand() < 0.2 ? 10 : Math.floor(rand() * 256);
      expect(c.count(n)).toBe(byteCount(c.buf, n)); // newlines just past n are not counted
      c.buf.fill(10, 0, n); // all newlines: the last step's and the tail's bytes all count
      expect(c.count(n)).toBe(n);
      c.buf.fill(11, 0, n); // 0x0b, next to 0x0a: none counts
      expect(c.count(n)).toBe(0);
    }
  }
});

test("the counter's buffer holds at least what was asked, and bytes past n are not counted, even at its end", () => {
  for (const simd of [true, false]) {
    const c = newlineCounter(1 << 16, simd);
    expect(c.buf.length).toBeGreaterThanOrEqual(1 << 16);
    for (const n of [5, 0, c.buf.length, c.buf.length - 1]) {
      c.buf.fill(10);
      expect(c.count(n)).toBe(n);
    }
  }
});

test("a reader counts files of several reads right, each read's count ignoring the bytes the last one left", async () => {
  const { mkdtempSync, rmSync, writeFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { tmpdir } = await import("node:os");
  const { FileReader } = await import("./file-bytes.ts");
  const dir = mkdtempSync(join(tmpdir(), "tendril-count-"));
  try {
    const reader = new FileReader();
    // files of ~1.5 MiB: two reads each, so the 16 bytes past the second count hold the first read's newlines
    for (let f = 0; f < 3; f++) {
      const line = "x".repeat(f + 1) + "\n";
      const text = line.repeat(Math.floor((1.5 * (1 << 20)) / line.length)) + "tail without newline";
      writeFileSync(join(dir, `f${f}`), text);
      const r = reader.countLines(join(dir, `f${f}`), undefined, true);
      expect(r).toEqual({ lines: text.split("\n").length, bytes: text.length, partial: false });
    }
    expect((reader as unknown as { counter: { simd: boolean } }).counter.simd).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a reader finds a NUL in a file's first 8 KiB only, never in the bytes an earlier file left in its buffer", async () => {
  const { mkdtempSync, rmSync, writeFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { tmpdir } = await import("node:os");
  const { FileReader } = await import("./file-bytes.ts");
  const dir = mkdtempSync(join(tmpdir(), "tendril-sniff-"));
  try {
    const reader = new FileReader();
    const file = (name: string, bytes: Buffer) => (writeFileSync(join(dir, name), bytes), join(dir, name));
    const nulAt = (size: number, at: number) => Buffer.alloc(size, 10).fill(0, at, at + 1);
    expect(reader.countLines(file("bin", nulAt(10_000, 5000)), undefined, true)).toBe("binary");
    expect(reader.countLines(file("small", Buffer.from("a\nb\n")), undefined, true)).toEqual({ lines: 2, bytes: 4, partial: false });
    expect(reader.countLines(file("edge", nulAt(8192, 8191)), undefined, true)).toBe("binary");
    expect(reader.countLines(file("past", nulAt(9000, 8192)), undefined, true)).toEqual({ lines: 8999, bytes: 9000, partial: false });
    expect(reader.countLines(file("empty", Buffer.alloc(0)), undefined, true)).toEqual({ lines: 0, bytes: 0, partial: false });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
