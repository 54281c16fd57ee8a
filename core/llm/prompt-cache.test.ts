// Anthropic prompt-cache breakpoints (SPEC §3.9) as the request body carries them: where they go, how
// many, the one-hour TTL, none when off, and thinking blocks and tool results left as they were.
import { expect, test } from "bun:test";
import { toAnthropicBody } from "./anthropic.ts";
import type { LlmRequest, Message } from "./types.ts";

const tools = [
  { name: "dev__shell", description: "run a command", inputSchema: { type: "object" } },
  { name: "dev__str_replace", description: "edit a file", inputSchema: { type: "object" } },
];
const history: Message[] = [
  { role: "user", content: [{ type: "text", text: "look" }] },
  { role: "assistant", text: "Checking.", toolCalls: [{ id: "c1", name: "dev__shell", input: { command: "ls" } }], reasoning: [{ text: "ls first", signature: "sig" }] },
  { role: "tool", results: [{ callId: "c1", content: "a.txt", isError: false }] },
];

function request(over: Partial<LlmRequest> = {}): LlmRequest {
  return { model: "m", system: "You are terse.", messages: history, tools, maxTokens: 32_000, signal: new AbortController().signal, ...over };
}

/** Every cache_control in the body, by where it sits. */
function breakpoints(body: unknown): string[] {
  const found: string[] = [];
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if (k === "cache_control") found.push(`${path} ${JSON.stringify(x)}`);
        else walk(x, `${path}.${k}`);
      }
    }
  };
  walk(body, "");
  return found;
}

const E = '{"type":"ephemeral"}';

test("breakpoints: the tool list's end, the system prompt's end, the newest message's last block, and the previous request's", () => {
  const body = toAnthropicBody(request());
  expect(breakpoints(body)).toEqual([`.messages[0].content[0] ${E}`, `.messages[2].content[0] ${E}`, `.system[0] ${E}`, `.tools[1] ${E}`]);
  expect(body.system).toEqual([{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }]);
});

test("at most 4 breakpoints however long the history, each on a block that may carry one", () => {
  const long: Message[] = [];
  for (let i = 0; i < 30; i++) {
    long.push({ role: "user", content: [{ type: "text", text: `q${i}` }] }, { role: "assistant", text: `a${i}`, toolCalls: [] });
  }
  long.push({ role: "user", content: [{ type: "text", text: "last" }] });
  const marks = breakpoints(toAnthropicBody(request({ messages: long })));
  expect(marks.length).toBe(4);
  expect(marks).toContain(`.messages[60].content[0] ${E}`);
  expect(marks).toContain(`.messages[58].content[0] ${E}`);
});

test("TENDRIL_PROMPT_CACHE=1h asks for the one-hour cache at every breakpoint; off sends none", () => {
  const hour = breakpoints(toAnthropicBody(request({ promptCache: "1h" })));
  expect(hour.length).toBe(4);
  for (const m of hour) expect(m).toEndWith('{"type":"ephemeral","ttl":"1h"}');
  const off = toAnthropicBody(request({ promptCache: "off" }));
  expect(breakpoints(off)).toEqual([]);
  expect(off.system).toBe("You are terse.");
});

test("thinking blocks and tool results keep their order and bytes; only the marker is added", () => {
  const on = toAnthropicBody(request({ thoughtLevel: "low" }));
  const off = toAnthropicBody(request({ thoughtLevel: "low", promptCache: "off" }));
  const strip = (v: unknown) => JSON.parse(JSON.stringify(v, (k, x) => (k === "cache_control" ? undefined : x)));
  expect(strip(on.messages)).toEqual(off.messages);
  expect((on.messages[1]!.content as { type: string }[]).map((b) => b.type)).toEqual(["thinking", "text", "tool_use"]);
  expect(JSON.stringify(on.messages[1])).not.toContain("cache_control");
});

test("no tools and no system prompt: the newest message still carries its breakpoint", () => {
  const body = toAnthropicBody(request({ tools: [], system: "", messages: [history[0]!] }));
  expect(breakpoints(body)).toEqual([`.messages[0].content[0] ${E}`]);
  expect(body.system).toBeUndefined();
});
