// The fake provider's bill (tests/billing-model.ts) against figures worked out by hand: Anthropic's
// writes, reads, the 20-block lookback and the minimum prefix; OpenAI's 1,024-token floor and 128-token
// steps; and the session floor.
import { expect, test } from "bun:test";
import { billAnthropic, billOpenAi, floorUnits, type PromptBlock } from "./billing-model.ts";

const b = (key: string, tokens: number, breakpoint = false): PromptBlock => ({ key, tokens, breakpoint });

test("anthropic: the first request writes up to its last breakpoint; the next reads it and writes its growth", () => {
  const first = [b("tools", 1000, true), b("system", 500, true), b("u1", 300, true)];
  const second = [b("tools", 1000, true), b("system", 500), b("u1", 300, true), b("a1", 200), b("u2", 100, true)];
  const bill = billAnthropic([first, second]);
  // 1: 1800 written, nothing read, nothing uncached → 1800 × 1.25 = 2250
  // 2: reads 1800 (u1 is a breakpoint), writes 300 (a1 + u2), none uncached → 180 + 375 = 555
  expect(bill.perRequest.map((r) => [r.uncached, r.written, r.read])).toEqual([
    [0, 1800, 0],
    [0, 300, 1800],
  ]);
  expect(bill.units).toBeCloseTo(2250 + 555, 9);
});

test("anthropic: a hit more than 20 blocks before every breakpoint is missed; nearer ones are found", () => {
  const head = [b("sys", 2000, true)];
  const grown = (n: number) => [b("sys", 2000), ...Array.from({ length: n }, (_, i) => b(`x${i}`, 10)), b("end", 10, true)];
  // 21 blocks after the written entry: the lookback from `end` (22 blocks past it) cannot reach it.
  const far = billAnthropic([head, grown(21)]).perRequest[1]!;
  expect([far.read, far.written]).toEqual([0, 2220]);
  const near = billAnthropic([head, grown(19)]).perRequest[1]!;
  expect([near.read, near.written]).toEqual([2000, 200]);
});

test("anthropic: nothing is written below the minimum prefix, and tokens after the last breakpoint are uncached", () => {
  const bill = billAnthropic([[b("s", 500, true), b("tail", 100)]]);
  expect(bill.perRequest[0]).toEqual({ uncached: 600, written: 0, read: 0, units: 600 });
  const unmarked = billAnthropic([[b("s", 5000)], [b("s", 5000), b("u", 10)]]);
  expect(unmarked.units).toBe(10_010);
});

test("openai: the longest earlier prefix, from 1,024 tokens, in 128-token steps, at 0.1×", () => {
  const r1 = [b("tools", 700), b("sys", 500)];
  const r2 = [...r1, b("u", 300)];
  const r3 = [b("tools", 700), b("other", 900)];
  const bill = billOpenAi([r1, r2, r3]);
  // r2 shares 1200 tokens → 1152 cached (9 × 128); r3 shares 700 (< 1024) → none
  expect(bill.read).toBe(1152);
  expect(bill.reusable).toBe(1200 + 700);
  expect(bill.prompt).toBe(1200 + 1500 + 1600);
  expect(bill.units).toBeCloseTo(1200 + (1500 - 1152) + 1152 * 0.1 + 1600, 9);
});

test("the floor: each request's new tokens written once, the rest read", () => {
  // 1000 × 1.25; then 500 × 1.25 + 1000 × 0.1; then 0 new + 1500 × 0.1
  expect(floorUnits([1000, 1500, 1500])).toBeCloseTo(1250 + 725 + 150, 9);
});
