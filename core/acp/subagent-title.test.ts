import { expect, test } from "bun:test";
import { childAskTitle } from "./subagents.ts";

test("regression: a task description with 40 newlines pushed the real command out of a v1 permission title; the tool's own title comes first, the description is one line cut at a code point", () => {
  const description = `${"\n".repeat(40)}harmless cleanup\x1b]0;x\x07 ${"😀".repeat(100)}`;
  const title = childAskTitle("`rm -rf build`", description);
  expect(title.startsWith("`rm -rf build` (subagent: harmless cleanup")).toBe(true);
  expect(title).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
  expect(title).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  expect([...title.slice(title.indexOf("subagent:"))].length).toBeLessThanOrEqual(92);
});
