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
      for (let i = 0; i < n; i++) c.buf[i] = rand() < 0.2 ? 10 : Math.floor(rand() * 256);
      expect(c.count(n)).toBe(byteCount(c.buf, n));
      c.buf.fill(10, 0, n); // all newlines: the last step's and the tail's bytes all count
      expect(c.count(n)).toBe(n);
      c.buf.fill(11, 0, n); // 0x0b, next to 0x0a: none counts
      expect(c.count(n)).toBe(0);
    }
  }
});

test("the counter's buffer is as large as asked (rounded up to 64 KiB), and bytes past n are not counted", () => {
  const c = newlineCounter(100_000);
  expect(c.buf.length).toBe(131_072);
  c.buf.fill(10);
  expect(c.count(5)).toBe(5);
  expect(c.count(0)).toBe(0);
});
