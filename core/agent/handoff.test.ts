import { expect, test } from "bun:test";
import type { Message, ToolSpec } from "../llm/types.ts";
import { ContextMeter } from "./handoff.ts";

// The size-based floor is (system + JSON of the tools + the history's text) / 4 characters per token;
// each message and schema is measured once, which must not change the figure.
test("the size estimate counts the tools' JSON exactly and each message once, however often it is asked", () => {
  const schema = { type: "object", properties: { command: { type: "string", description: 'a "quoted"\nline' } } };
  const tools: ToolSpec[] = [
    { name: "dev__shell", description: "runs \"bash\"\n\ttabs", inputSchema: schema },
    { name: "é", description: "", inputSchema: {} },
  ];
  const history: Message[] = [
    { role: "user", content: [{ type: "text", text: "hello" }] },
    { role: "assistant", text: "ok", toolCalls: [{ id: "c1", name: "dev__shell", input: { command: "ls" } }] },
    { role: "tool", results: [{ callId: "c1", content: "a\nb", isError: false }] },
  ];
  const historyChars = 5 + 2 + JSON.stringify(history[1]!.role === "assistant" ? history[1]!.toolCalls : []).length + 3 + 40;
  const want = ("sys".length + JSON.stringify(tools).length + historyChars) / 4;
  const meter = new ContextMeter();
  expect(meter.estimate("sys", history, tools)).toBe(want);
  // Fresh tool listings with the same schemas (as every request builds), and a grown history.
  expect(meter.estimate("sys", history, tools.map((t) => ({ ...t })))).toBe(want);
  history.push({ role: "user", content: [{ type: "text", text: "more" }] });
  expect(meter.estimate("sys", history, tools)).toBe(want + 1);
  expect(new ContextMeter().estimate("", [], [])).toBe(2 / 4);
});

// Each tool's description is measured with its schema, once: a tool that changes its description
// (an MCP server's list changed) while keeping its schema object is measured anew.
test("the size estimate follows a tool's new description though its schema object is the same", () => {
  const schema = { type: "object" };
  const sized = (description: string) => new ContextMeter().estimate("", [], [{ name: "t", description, inputSchema: schema }]);
  const exact = (description: string) => JSON.stringify([{ name: "t", description, inputSchema: schema }]).length / 4;
  expect(sized("short")).toBe(exact("short"));
  expect(sized('a much longer "description"\n')).toBe(exact('a much longer "description"\n'));
  expect(sized("short")).toBe(exact("short"));
});
