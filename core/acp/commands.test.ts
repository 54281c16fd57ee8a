// Slash commands through the real ACP surface, in memory: announced after the session's answer, run
// as a turn of their own, and an unknown `/NAME` left to the model.
import { expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { memoryAgent, type MemoryAgent } from "../../tests/memory-agent.ts";
import { commandOf } from "./commands.ts";

let nextId = 1;
const req = (a: MemoryAgent, method: string, params: Record<string, unknown>) => {
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method, params });
  return a.response(id);
};
const say = (a: MemoryAgent, sessionId: string, text: string) => req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text }] });
const updates = (a: MemoryAgent, kind: string) => a.out.filter((m) => m.params?.update?.sessionUpdate === kind).map((m) => m.params.update);
const saidLast = (a: MemoryAgent) => updates(a, "agent_message_chunk").at(-1)?.content.text;

async function open(a: MemoryAgent): Promise<string> {
  const r = await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] });
  await a.until(() => updates(a, "available_commands_update").length > 0, "available_commands_update");
  return r.result.sessionId;
}

test("the commands are announced right after session/new's answer", async () => {
  const a = memoryAgent();
  const id = nextId;
  await open(a);
  const answerAt = a.out.findIndex((m) => m.id === id);
  const announcedAt = a.out.findIndex((m) => m.params?.update?.sessionUpdate === "available_commands_update");
  expect(announcedAt).toBeGreaterThan(answerAt);
  expect(a.out[announcedAt]!.params.update.availableCommands.map((c: { name: string }) => c.name)).toEqual(["compact", "mode", "model", "init"]);
  await a.close();
});

test("/mode and /model switch like their config options, answer in the conversation and never call the model", async () => {
  const a = memoryAgent({ models: ["m", "m-large"] });
  const sessionId = await open(a);
  expect((await say(a, sessionId, "/mode read-only")).result.stopReason).toBe("end_turn");
  expect(updates(a, "current_mode_update").at(-1)).toEqual({ sessionUpdate: "current_mode_update", currentModeId: "read-only" });
  expect(saidLast(a)).toBe("Mode: read-only.");
  expect((await say(a, sessionId, "/mode sideways")).result.stopReason).toBe("end_turn");
  expect(saidLast(a)).toContain('unknown mode: "sideways"');
  expect(updates(a, "current_mode_update").length).toBe(1);
  await say(a, sessionId, "/model m-large");
  expect(saidLast(a)).toBe("Model: m-large.");
  await say(a, sessionId, "/model");
  expect(saidLast(a)).toContain("choose one of: m, m-large");
  expect(a.provider.requests.length).toBe(0);
  // the switch holds for the next real turn
  a.provider.push({ text: "hi" });
  const seen: string[] = [];
  const inner = a.provider.stream.bind(a.provider);
  a.provider.stream = (r) => (seen.push(r.model), inner(r));
  await say(a, sessionId, "hello");
  expect(seen).toEqual(["m-large"]);
  await a.close();
});

test("/compact summarizes the conversation now; the next turn starts from the summary", async () => {
  const a = memoryAgent();
  const sessionId = await open(a);
  expect((await say(a, sessionId, "/compact")).result.stopReason).toBe("end_turn");
  expect(saidLast(a)).toBe("Nothing to compact yet.");
  a.provider.push({ text: "one" }, { text: "two" });
  await say(a, sessionId, "first task");
  await say(a, sessionId, "second question");
  a.provider.push({ text: "SUMMARY: did one and two" });
  expect((await say(a, sessionId, "/compact")).result.stopReason).toBe("end_turn");
  const thought = updates(a, "agent_thought_chunk").at(-1)?.content.text;
  expect(thought).toContain("asked with /compact");
  expect(thought).toContain("summarized the conversation");
  a.provider.push({ text: "three" });
  await say(a, sessionId, "third");
  const last = a.provider.requests.at(-1)!;
  expect(last.length).toBe(2);
  const carried = JSON.stringify(last[0]);
  expect(carried).toContain("Original task:\\nfirst task");
  expect(carried).toContain("SUMMARY: did one and two");
  expect(carried).not.toContain("Latest request");
  await a.close();
});

test("/init asks the model to write AGENTS.md (with the user's words); an unknown /NAME goes to the model as typed", async () => {
  const a = memoryAgent();
  const sessionId = await open(a);
  a.provider.push({ text: "written" }, { text: "ok" });
  await say(a, sessionId, "/init mention the fixtures");
  const asked = JSON.stringify(a.provider.requests[0]);
  expect(asked).toContain("AGENTS.md");
  expect(asked).toContain("Also: mention the fixtures");
  await say(a, sessionId, "/deploy now");
  expect(JSON.stringify(a.provider.requests[1]!.at(-1))).toContain("/deploy now");
  await a.close();
});

test("reading a prompt as a command: the name alone or with a rest; anything else is no command", () => {
  expect(commandOf([{ type: "text", text: "/compact" }])).toEqual({ name: "compact", rest: "" });
  expect(commandOf([{ type: "text", text: "  /mode   yolo \n" }])).toEqual({ name: "mode", rest: "yolo" });
  for (const text of ["/compacted", "compact", "/ mode", "please /compact", "/unknown x"]) expect(commandOf([{ type: "text", text }])).toBeUndefined();
  expect(commandOf([{ type: "image", data: "", mimeType: "image/png" }])).toBeUndefined();
  expect(commandOf([])).toBeUndefined();
});
