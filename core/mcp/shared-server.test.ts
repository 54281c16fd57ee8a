import { expect, test } from "bun:test";
import { DEFAULT_LIMITS } from "../limits.ts";
import { backoffMs } from "./shared-server.ts";

const L = DEFAULT_LIMITS;

test("restart backoff: immediate, then 0.5 s doubling to a 30 s cap, within ±20%", () => {
  expect(backoffMs(0, L)).toBe(0);
  expect(backoffMs(1, L, () => 0.5)).toBe(500);
  expect(backoffMs(2, L, () => 0.5)).toBe(1000);
  expect(backoffMs(1, L, () => 0)).toBe(400);
  expect(backoffMs(1, L, () => 1)).toBe(600);
  expect(backoffMs(20, L, () => 0.5)).toBe(30_000);
  expect(backoffMs(20, L, () => 1)).toBe(36_000);
});
