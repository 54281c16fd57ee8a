import { expect, test } from "bun:test";
import { StderrTail } from "./stderr-tail.ts";

test("stderr is split into lines, each emitted; the tail keeps the last bytes; an endless line is cut", () => {
  const seen: string[] = [];
  const t = new StderrTail(20, (l) => seen.push(l));
  t.push("one\r\ntw");
  t.push("o\nthree\n");
  expect(seen).toEqual(["one", "two", "three"]);
  t.push("x".repeat(30));
  expect(seen.at(-1)).toBe("x".repeat(14) + " […]"); // the marker counts in the bound
  t.push("partial");
  expect(t.lines().at(-1)).toBe("partial");
  expect(t.lines().join("\n").length).toBeLessThan(60);
  t.end();
  expect(seen.at(-1)).toBe("partial");
});
