// A byte-stable prefix (SPEC §3.9): over a session with mode switches between prompts, every request's
// tools, system prompt and earlier messages are sent byte-identical to the previous request's (cache
// markers aside), through Anthropic's body builder and OpenAI's Chat body builder alike; the mode and
// the date reach the model only at the end, in the prompt's own message.
import { expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { toAnthropicBody } from "../llm/anthropic.ts";
import { toOpenAiBody } from "../llm/openai.ts";
import type { LlmRequest } from "../llm/types.ts";
import { memoryAgent, type MemoryAgent } from "../../tests/memory-agent.ts";

let nextId = 1;
const req = (a: MemoryAgent, method: string, params: Record<string, unknown>) => {
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method, params });
  return a.response(id);
};

const unmarked = (v: unknown) => JSON.stringify(v, (k, x) => (k === "cache_control" ? undefined : x));

/** What a provider's cache keys on, in order: the tools, the system prompt, then message by message
 *  (Anthropic: block by block, as its cache reads a prefix of blocks). */
function anthropicPrefix(r: LlmRequest): { head: string; items: string[] } {
  const body = toAnthropicBody(r);
  const items = body.messages.flatMap((m) => (m.content as unknown[]).map((b) => `${m.role} ${unmarked(b)}`));
  return { head: unmarked([body.tools, body.system]), items };
}

function openaiPrefix(r: LlmRequest): { head: string; items: string[] } {
  const body = toOpenAiBody(r, true);
  return { head: unmarked(body.tools), items: body.messages.map((m) => unmarked(m)) };
}

function expectStablePrefixes(requests: LlmRequest[], prefix: (r: LlmRequest) => { head: string; items: string[] }): void {
  for (let i = 1; i < requests.length; i++) {
    const before = prefix(requests[i - 1]!);
    const after = prefix(requests[i]!);
    expect([i, after.head]).toEqual([i, before.head]);
    expect(after.items.length).toBeGreaterThan(before.items.length);
    expect([i, after.items.slice(0, before.items.length)]).toEqual([i, before.items]);
  }
}

test("regression: every request resends the previous one's prefix byte-identical, across mode switches between prompts", async () => {
  const a = memoryAgent({ mode: "yolo" });
  const seen: LlmRequest[] = [];
  const inner = a.provider.stream.bind(a.provider);
  a.provider.stream = (r) => (seen.push(structuredClone({ ...r, signal: undefined, onRetry: undefined }) as unknown as LlmRequest), inner(r));
  const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
  const ask = (text: string) => req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text }] });

  a.provider.push({ text: "Echoing.", calls: [{ id: "e1", name: "t__echo", input: { text: "one" } }] }, { text: "Echoed one." });
  await ask("echo one");
  await req(a, "session/set_mode", { sessionId, modeId: "auto-edit" });
  a.provider.push({ text: "Nothing to run." });
  await ask("and now?");
  await req(a, "session/set_mode", { sessionId, modeId: "read-only" });
  a.provider.push({ text: "Trying.", calls: [{ id: "e2", name: "t__echo", input: { text: "two" } }] }, { text: "It was denied." });
  expect((await ask("echo two")).result.stopReason).toBe("end_turn");
  await a.close();

  expect(seen.length).toBe(5);
  expectStablePrefixes(seen, anthropicPrefix);
  expectStablePrefixes(seen, openaiPrefix);
  // The per-turn facts sit at the end of each prompt's own message, and only when they changed.
  const notes = seen.map((r) => {
    const last = r.messages.at(-1)!;
    return last.role === "user" ? last.content.map((p) => (p.type === "text" ? p.text : "")).join(" | ") : last.role;
  });
  expect(notes[0]).toMatch(/^echo one \| \[Session: yolo mode \(every tool call runs without asking\); today is \d{4}-\d{2}-\d{2} \(UTC[+-]\d{2}:\d{2}\)\]$/);
  expect(notes[1]).toBe("tool");
  expect(notes[2]).toMatch(/^and now\? \| \[Session: auto-edit mode \(.*\); today is \d{4}-\d{2}-\d{2} \(UTC[+-]\d{2}:\d{2}\)\]$/);
  expect(notes[3]).toMatch(/^echo two \| \[Session: read-only mode \(tools that may change anything are denied\); today is/);
  expect(seen.every((r) => r.system === seen[0]!.system)).toBe(true);
});

test("the mode is told again only when it changed since the model was last told", async () => {
  const a = memoryAgent({ mode: "yolo" });
  const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
  a.provider.push({ text: "one" }, { text: "two" });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "first" }] });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "second" }] });
  const second = a.provider.requests[1]!.at(-1)!;
  expect(second).toEqual({ role: "user", content: [{ type: "text", text: "second" }] });
  await a.close();
});

test("the date the model is told is the user's own, with its offset from UTC: not a day off in the evening or the morning", async () => {
  const { localDate } = await import("../agent/turn-context.ts");
  const TZ = process.env.TZ;
  try {
    // 23:30 UTC on 3 December is already 4 December in Tokyo and still 3 December in New York.
    const at = new Date("2026-12-03T23:30:00Z");
    process.env.TZ = "Asia/Tokyo";
    expect(localDate(at)).toBe("2026-12-04 (UTC+09:00)");
    process.env.TZ = "America/New_York";
    expect(localDate(at)).toBe("2026-12-03 (UTC-05:00)");
    process.env.TZ = "Asia/Kolkata";
    expect(localDate(at)).toBe("2026-12-04 (UTC+05:30)");
  } finally {
    if (TZ === undefined) delete process.env.TZ;
    else process.env.TZ = TZ;
  }
});
