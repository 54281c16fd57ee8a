import { expect, test } from "bun:test";
import { z } from "zod";
import { describeIssue, describeToolArgIssues, issuePath } from "./zod-issue.ts";

const fail = (schema: z.ZodType, value: unknown): z.ZodError => {
  const r = schema.safeParse(value);
  if (r.success) throw new Error("expected a failure");
  return r.error;
};

test("regression: a config error glued the key to the file name (`/m.toml.mcp[0].args`); the place now follows a colon", () => {
  const schema = z.object({ mcp: z.array(z.object({ args: z.array(z.string()) })) });
  expect(describeIssue(fail(schema, { mcp: [{ args: "x" }] }), "/m.toml")).toBe("/m.toml: mcp[0].args: Invalid input: expected array, received string");
});

test("an unknown key is named in the path and reads `unknown key`; a value under a table gets the table's name", () => {
  const schema = z.strictObject({ reply: z.strictObject({ text: z.string().optional() }) });
  expect(describeIssue(fail(schema, { reply: { txet: "hi" } }), "replay file line 1")).toBe("replay file line 1: reply.txet: unknown key");
  expect(describeIssue(fail(z.array(z.object({ decision: z.string() })), [{ decision: 1 }]), "r.toml", "rules")).toMatch(/^r\.toml: rules\[0\]\.decision: /);
  expect(describeIssue(fail(z.string(), 1), "x")).toBe("x: Invalid input: expected string, received number");
  expect(issuePath([])).toBe("");
});

test("tool arguments list every problem in the MCP SDK's words", () => {
  const schema = z.object({ a: z.string(), b: z.object({ c: z.number() }) });
  expect(describeToolArgIssues(fail(schema, { b: { c: "x" } })).split("\n")).toEqual([
    "Invalid input: expected string, received undefined at a",
    "Invalid input: expected number, received string at b.c",
  ]);
});
