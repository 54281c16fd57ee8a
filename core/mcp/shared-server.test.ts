import { expect, test } from "bun:test";
import { backoffMs } from "./shared-server.ts";

test("restart backoff: immediate, then 0.5 s doubling to a 30 s cap, within ±20%", () => {
  expect(backoffMs(0)).toBe(0);
  expect(backoffMs(1, () => 0.5)).toBe(500);
  expect(backoffMs(2, () => 0.5)).toBe(1000);
  expect(backoffMs(1, () => 0)).toBe(400);
  expect(backoffMs(1, () => 1)).toBe(600);
  expect(backoffMs(20, () => 0.5)).toBe(30_000);
  expect(backoffMs(20, () => 1)).toBe(36_000);
});
