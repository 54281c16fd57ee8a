// Unit tests of text-bounds: every cut of text mixing 1-, 2-, 3- and 4-byte characters stays within
// its bound, never splits a character, and keeps the most it can; sizes read as people write them.
import { expect, test } from "bun:test";
import { clampBytes, formatBytes, headBytes, middleBytes, tailBytes, utf8Length } from "./text-bounds.ts";

const TEXT = "aé€😀b".repeat(7) + "z"; // 1 + 2 + 3 + 4 + 1 bytes per round
const LEN = utf8Length(TEXT);
const whole = (s: string) => !s.includes("\uFFFD");

const ends = [
  { name: "headBytes", cut: headBytes, keeps: (out: string) => TEXT.startsWith(out), bytes: "é€", max: 4, want: "é" },
  { name: "tailBytes", cut: tailBytes, keeps: (out: string) => TEXT.endsWith(out), bytes: "😀é", max: 5, want: "é" },
];

for (const end of ends) {
  test(`${end.name}: at every bound, within it, whole characters, the right end, and the longest such`, () => {
    for (let max = 0; max <= LEN + 1; max++) {
      const out = end.cut(TEXT, max);
      expect(utf8Length(out)).toBeLessThanOrEqual(max);
      expect(whole(out)).toBe(true);
      expect(end.keeps(out)).toBe(true);
      expect(utf8Length(out)).toBeGreaterThan(max - 4);
    }
    expect(end.cut(new TextEncoder().encode(end.bytes), end.max)).toBe(end.want);
  });
}

test("middleBytes: within the bound with the marker, whole characters, head and tail of the text", () => {
  const marker = "[…cut…]";
  expect(middleBytes(TEXT, LEN, marker)).toBe(TEXT);
  for (let max = utf8Length(marker); max < LEN; max++) {
    const out = middleBytes(TEXT, max, marker);
    expect(utf8Length(out)).toBeLessThanOrEqual(max);
    expect(whole(out)).toBe(true);
    const [head, tail] = out.split(marker) as [string, string];
    expect(TEXT.startsWith(head)).toBe(true);
    expect(TEXT.endsWith(tail)).toBe(true);
    expect(utf8Length(head) + utf8Length(tail)).toBeGreaterThan(max - utf8Length(marker) - 8);
  }
});

test("clampBytes: the head and the marker within the bound; short text unchanged", () => {
  expect(clampBytes("short", 10, " [cut]")).toBe("short");
  for (let max = 6; max < LEN; max++) {
    const out = clampBytes(TEXT, max, " [cut]");
    expect(utf8Length(out)).toBeLessThanOrEqual(max);
    expect(whole(out)).toBe(true);
    expect(out.endsWith(" [cut]")).toBe(true);
  }
});

test("formatBytes: whole KiB and MiB, fractions of MiB, bytes", () => {
  expect(formatBytes(50 * 1024)).toBe("50 KiB");
  expect(formatBytes(4 * 1024 * 1024)).toBe("4 MiB");
  expect(formatBytes(1024)).toBe("1 KiB");
  expect(formatBytes(300)).toBe("300 bytes");
  expect(formatBytes(1500)).toBe("1500 bytes");
  expect(formatBytes(12.5 * 1024 * 1024)).toBe("12.50 MiB");
  expect(formatBytes(0)).toBe("0 bytes");
});
