import { expect, test } from "bun:test";
import { ShimOutput } from "./shim-output.ts";

function capture(maxBytes: number, maxLines = 100) {
  const chunks: string[] = [];
  const out = new ShimOutput((c) => chunks.push(c), { maxBytes, maxLines }, "rg", "narrow it");
  return { out, text: () => chunks.join("") };
}

test("the byte cap counts UTF-8 bytes: a line that would pass it is refused whole, then the marker", () => {
  const { out, text } = capture(12);
  expect(out.line("ééé")).toBe(true); // 6 bytes and the newline
  expect(out.line("abcd")).toBe(true); // 12 bytes in all
  expect(out.written).toBe(12);
  expect(out.line("x")).toBe(false);
  expect(out.capped).toBe(true);
  out.finish();
  expect(text()).toBe("ééé\nabcd\n[rg: output capped at 12 bytes; narrow it]\n");
  expect(out.written).toBe(12);
});

test("far below the cap many lines pass, and the bytes written are exact", () => {
  const { out, text } = capture(1 << 20, 100_000);
  for (let i = 0; i < 50_000; i++) expect(out.line(i % 2 ? "plain" : "ünïcode ✓")).toBe(true);
  out.finish();
  expect(out.written).toBe(Buffer.byteLength(text()));
  expect(out.capped).toBe(false);
});

test("the line cap comes before the byte cap", () => {
  const { out, text } = capture(1000, 2);
  expect(out.line("a")).toBe(true);
  expect(out.line("b")).toBe(true);
  expect(out.line("c")).toBe(false);
  out.finish();
  expect(text()).toBe("a\nb\n[rg: output capped at 2 lines; narrow it]\n");
});
