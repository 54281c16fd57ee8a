import { afterAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isStale, withFileLock } from "./lock.ts";
import { HOST } from "./owner.ts";

const tmp = mkdtempSync(join(tmpdir(), "tendril-lock-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

test("one holder works; a concurrent caller waits and takes the holder's result", async () => {
  const path = join(tmp, "a.lock");
  let result: string | undefined;
  let works = 0;
  const work = async () => {
    works++;
    await new Promise((r) => setTimeout(r, 100));
    result = "done";
    return result;
  };
  const both = await Promise.all([0, 1].map(() => withFileLock(path, { staleS: 30, maxWaitS: 10, pollMs: 5 }, async () => result, work)));
  expect(both).toEqual(["done", "done"]);
  expect(works).toBe(1);
  expect(existsSync(path)).toBe(false);
});

test("a lock left by a dead process on this host is taken over at once", async () => {
  const path = join(tmp, "dead.lock");
  const dead = spawnSync("true").pid!;
  writeFileSync(path, `${dead} ${HOST} feedface`);
  const t0 = Date.now();
  expect(await withFileLock(path, { staleS: 30, maxWaitS: 10 }, async () => undefined, async () => "mine")).toBe("mine");
  expect(Date.now() - t0).toBeLessThan(5000);
});

test("a lock nobody refreshed for CRATE_LOCK_STALE_S is taken over; a fresh one is waited for", async () => {
  const path = join(tmp, "old.lock");
  writeFileSync(path, `1 another-host feedface`);
  const old = new Date(Date.now() - 60_000);
  utimesSync(path, old, old);
  expect(await withFileLock(path, { staleS: 30, maxWaitS: 10 }, async () => undefined, async () => "taken")).toBe("taken");

  writeFileSync(path, `1 another-host cafe`);
  const ctl = new AbortController();
  setTimeout(() => ctl.abort(), 200);
  const waited = withFileLock(path, { staleS: 30, maxWaitS: 10, pollMs: 5, signal: ctl.signal }, async () => undefined, async () => "stolen");
  await expect(waited).rejects.toThrow();
  await waited.catch(() => {});
  expect(existsSync(path)).toBe(true);
});

test("the holder's lock is removed even when its work fails", async () => {
  const path = join(tmp, "fail.lock");
  await expect(withFileLock(path, { staleS: 30, maxWaitS: 10 }, async () => undefined, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
  expect(existsSync(path)).toBe(false);
});

test("past maxWaitS a waiter works without the lock, and leaves the holder's lock alone", async () => {
  const path = join(tmp, "busy.lock");
  writeFileSync(path, `1 another-host beef`);
  expect(await withFileLock(path, { staleS: 30, maxWaitS: 0.1, pollMs: 5 }, async () => undefined, async () => "x")).toBe("x");
  expect(existsSync(path)).toBe(true);
});

test("C8: another host's fresh lock is not judged by its pid, which means nothing here", () => {
  const path = join(tmp, "shared.lock");
  const dead = spawnSync("true").pid!;
  writeFileSync(path, `${dead} ${HOST}-elsewhere feedface`);
  expect(isStale(path, `${dead} ${HOST}-elsewhere feedface`, 30)).toBe(false);
  expect(isStale(path, `${dead} ${HOST} feedface`, 30)).toBe(true);
  const old = new Date(Date.now() - 60_000);
  utimesSync(path, old, old);
  expect(isStale(path, `${dead} ${HOST}-elsewhere feedface`, 30)).toBe(true);
});

test("fewer calls: the lock's folder is made when a lock finds it missing, also after it was removed", async () => {
  const dir = join(tmp, "locks-on-demand");
  const path = join(dir, "x.lock");
  const opts = { staleS: 30, maxWaitS: 10, pollMs: 5 };
  expect(await withFileLock(path, opts, async () => undefined, async () => (existsSync(path) ? "held" : "not held"))).toBe("held");
  rmSync(dir, { recursive: true });
  expect(await withFileLock(path, opts, async () => undefined, async () => (existsSync(path) ? "held" : "not held"))).toBe("held");
  expect(existsSync(path)).toBe(false);
});
