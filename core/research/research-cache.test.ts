import { expect, test } from "bun:test";
import { ResearchCache } from "./research-cache.ts";

test("answers while fresh, forgets after the TTL, drops the oldest beyond the count, stores nothing at 0", () => {
  let t = 0;
  const cache = new ResearchCache<string>(2, 1000, () => t);
  cache.set("a", "A");
  t = 400;
  expect(cache.get("a")).toEqual({ value: "A", ageMs: 400 });
  cache.set("b", "B");
  cache.set("c", "C");
  expect(cache.get("a")).toBeUndefined(); // the oldest went when the third came
  expect(cache.get("b")?.value).toBe("B");
  t = 1400;
  expect(cache.get("b")).toBeUndefined(); // stale
  const none = new ResearchCache<string>(0, 1000, () => t);
  none.set("a", "A");
  expect(none.get("a")).toBeUndefined();
});
