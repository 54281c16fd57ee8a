// An LLM request the SDK retries after HTTP 429/5xx is observed at our fetch (each attempt passes it):
// reported to the request's onRetry by both adapters, and shown as a `notice` to a client that
// advertised session.notices (the log only, otherwise). A fake LLM server on loopback.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { type FakeLlm, startFakeLlm } from "../../tests/fake-llm.ts";
import { memoryAgent, type MemoryAgent } from "../../tests/memory-agent.ts";
import { anthropicProvider } from "../llm/anthropic.ts";
import { openaiProvider } from "../llm/openai.ts";
import type { LlmProvider } from "../llm/types.ts";

let fake: FakeLlm;
beforeAll(async () => void (fake = await startFakeLlm()));
afterAll(() => fake.close());

const opts = { apiKey: "k", maxResponseBytes: 1 << 20, timeoutS: 10, maxRetries: 3 };
const makers: [string, () => LlmProvider][] = [
  ["anthropic", () => anthropicProvider({ ...opts, baseUrl: fake.anthropicBaseUrl })],
  ["openai", () => openaiProvider({ ...opts, baseUrl: fake.openaiBaseUrl })],
];

for (const [name, make] of makers) {
  test(`${name}: each retry after 429/5xx is reported with the status and the new attempt's number; a first success reports none`, async () => {
    fake.script([{ fault: { status: 429, retryAfterS: 0.01 } }, { fault: { status: 503, retryAfterS: 0.01 } }, { text: "ok now" }, { text: "at once" }]);
    const seen: { status: number; attempt: number }[] = [];
    const run = async () => {
      let text = "";
      const stream = make().stream({ model: "m", system: "s", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], tools: [], maxTokens: 100, signal: new AbortController().signal, onRetry: (r) => seen.push(r) });
      for await (const ev of stream) if (ev.type === "text") text += ev.text;
      return text;
    };
    expect(await run()).toBe("ok now");
    expect(seen).toEqual([{ status: 429, attempt: 2 }, { status: 503, attempt: 3 }]);
    expect(await run()).toBe("at once");
    expect(seen.length).toBe(2);
  });
}

let nextId = 1;
async function req(a: MemoryAgent, method: string, params: Record<string, unknown>) {
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method, params });
  return a.response(id);
}

test("a retried request is a notice for a client with session.notices, and nothing for one without", async () => {
  for (const notices of [true, false]) {
    const a = memoryAgent({ provider: makers[0]![1]() });
    await req(a, "initialize", { protocolVersion: 1, clientCapabilities: { session: notices ? { notices: {} } : {} } });
    const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
    fake.script([{ fault: { status: 529, retryAfterS: 0.01 } }, { text: "answered" }]);
    expect((await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] })).result.stopReason).toBe("end_turn");
    const sent = a.out.filter((m) => m.params?.update?.sessionUpdate === "notice").map((m) => m.params.update);
    if (notices) {
      expect(sent).toEqual([{ sessionUpdate: "notice", severity: "warning", title: "LLM request retried: server error (HTTP 529)", description: "trying again (attempt 2)" }]);
    } else {
      expect(sent).toEqual([]);
    }
    await a.close();
  }
});
