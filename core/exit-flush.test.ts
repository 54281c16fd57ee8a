import { expect, test } from "bun:test";
import { EXIT_FLUSH_MS, flushWithin } from "./exit-flush.ts";

test("an exit path's flush ends when the output drained, when it failed, or at the bound when the reader stalls", async () => {
  expect(EXIT_FLUSH_MS).toBe(500);
  let t = performance.now();
  await flushWithin(Promise.resolve(), 60_000);
  await flushWithin(Promise.reject(new Error("EPIPE")), 60_000);
  expect(performance.now() - t).toBeLessThan(5_000);
  t = performance.now();
  await flushWithin(new Promise(() => {}), 20);
  expect(performance.now() - t).toBeGreaterThanOrEqual(15);
});
