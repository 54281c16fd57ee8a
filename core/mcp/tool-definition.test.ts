import { expect, test } from "bun:test";
import { z } from "zod";
import { defineTool, noInput } from "./tool-definition.ts";
import { callInProcess } from "./tool-serving.ts";
import { lazySchema } from "../zod-issue.ts";

const signal = new AbortController().signal;

test("a tool without arguments runs with {} for any object, and refuses anything else as its schema does", async () => {
  const seen: unknown[] = [];
  const hook = defineTool({ name: "_Stop", description: "hook", inputSchema: noInput, run: async (args) => (seen.push(args), { text: "ok" }) });
  for (const args of [undefined, {}, { extra: 1 }]) expect((await callInProcess(hook, args, signal)).text).toBe("ok");
  expect(seen).toEqual([{}, {}, {}]);
  for (const args of ["x", [1], 7]) {
    const want = z.object({}).safeParse(args).error!.issues.map((i) => i.message).join("\n");
    const r = await callInProcess(hook, args, signal);
    expect(r).toMatchObject({ isError: true, text: `MCP error -32602: Input validation error: Invalid arguments for tool _Stop: ${want}` });
  }
  expect(seen).toHaveLength(3);
});

test("arguments are checked against the tool's schema, built on the first call", async () => {
  let built = 0;
  const schema = lazySchema((zod) => (built++, zod.object({ n: zod.number() })));
  const tool = defineTool({ name: "add", description: "adds", inputSchema: schema, run: async ({ n }) => ({ text: String(n + 1) }) });
  expect(built).toBe(0);
  expect((await callInProcess(tool, { n: 1 }, signal)).text).toBe("2");
  expect(await callInProcess(tool, { n: "1" }, signal)).toMatchObject({ isError: true, text: expect.stringContaining("Invalid arguments for tool add") });
  expect(built).toBe(1);
});
