import { expect, test } from "bun:test";
import { createSemaphore } from "./semaphore.ts";

test("at most N hold; the rest are served in order as slots free", async () => {
  const s = createSemaphore(2);
  const order: number[] = [];
  expect(await s.acquire()).toBe(true);
  expect(await s.acquire()).toBe(true);
  const third = s.acquire().then((ok) => order.push(3) && ok);
  const fourth = s.acquire().then((ok) => order.push(4) && ok);
  expect(s.waiting).toBe(2);
  s.release();
  await third;
  s.release();
  await fourth;
  expect(order).toEqual([3, 4]);
  expect(s.held).toBe(2);
});

test("a waiter whose signal aborts leaves the line and never holds", async () => {
  const s = createSemaphore(1);
  await s.acquire();
  const ac = new AbortController();
  const waiting = s.acquire(ac.signal);
  ac.abort();
  expect(await waiting).toBe(false);
  expect(s.waiting).toBe(0);
  s.release();
  expect(s.held).toBe(0);
  expect(await s.acquire(AbortSignal.abort())).toBe(false);
});
