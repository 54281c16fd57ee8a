// A session's spend over ACP (SPEC §3.9): usage_update carries the session's cost so far when the model
// has a price (never a guess when it has none), the totals are saved with the session and survive
// load and resume, and every request carries the prompt-cache setting and the session id as its key.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionStore } from "../agent/session-store.ts";
import type { LlmRequest } from "../llm/types.ts";
import { memoryAgent, type MemoryAgent } from "../../tests/memory-agent.ts";

const state = mkdtempSync(join(tmpdir(), "tendril-cost-"));
const ws = mkdtempSync(join(tmpdir(), "tendril-cost-ws-"));
afterAll(() => {
  for (const d of [state, ws]) rmSync(d, { recursive: true, force: true });
});

// $3 in, $15 out, $3.75 write, $0.30 read per million tokens.
const prices = { m: { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 } };
let nextId = 1;
const req = (a: MemoryAgent, method: string, params: Record<string, unknown>) => {
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method, params });
  return a.response(id);
};
const costs = (a: MemoryAgent) => a.out.filter((m) => m.params?.update?.sessionUpdate === "usage_update").map((m) => m.params.update.cost);
const ask = (a: MemoryAgent, sessionId: string, text: string) => req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text }] });

test("usage_update carries the session's cost so far, each token kind at its price; the totals survive load and resume", async () => {
  const a = memoryAgent({ store: new SessionStore(state), prices, promptCache: "on" });
  const seen: LlmRequest[] = [];
  const inner = a.provider.stream.bind(a.provider);
  a.provider.stream = (r) => (seen.push(r), inner(r));
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  // 1000 in, 100 out, 2000 written: 3000 + 1500 + 7500 = 12000 µ$; then 50 in, 10 out, 3000 read: 150 + 150 + 900 = 1200 µ$
  a.provider.push(
    { text: "look", calls: [{ id: "e1", name: "t__echo", input: { text: "x" } }], usage: { input: 1000, output: 100, cacheWrite: 2000 } },
    { text: "done", usage: { input: 50, output: 10, cacheRead: 3000 } },
  );
  const answer = await ask(a, sessionId, "go");
  expect(costs(a)).toEqual([
    { amount: 0.012, currency: "USD" },
    { amount: 0.0132, currency: "USD" },
  ]);
  expect(answer.result.usage).toMatchObject({ inputTokens: 1050, outputTokens: 110, cachedReadTokens: 3000, cachedWriteTokens: 2000 });
  expect(seen.map((r) => [r.promptCache, r.cacheKey])).toEqual([
    ["on", sessionId],
    ["on", sessionId],
  ]);
  await a.close();

  // A restarted agent loads the session: the next response's cost adds to the saved total.
  const b = memoryAgent({ store: new SessionStore(state), prices });
  await req(b, "session/load", { sessionId, cwd: ws, mcpServers: [] });
  b.provider.push({ text: "again", usage: { input: 100, output: 0 } }); // 300 µ$
  await ask(b, sessionId, "more");
  // what the session had spent, reported at the load (before any turn), then the response's addition
  expect(costs(b)).toEqual([{ amount: 0.0132, currency: "USD" }, { amount: 0.0135, currency: "USD" }]);
  await b.close();

  // and resume does the same
  const c = memoryAgent({ store: new SessionStore(state), prices });
  await req(c, "session/resume", { sessionId, cwd: ws, mcpServers: [] });
  c.provider.push({ text: "once more", usage: { input: 0, output: 100 } }); // 1500 µ$
  await ask(c, sessionId, "more");
  expect(costs(c)).toEqual([{ amount: 0.0135, currency: "USD" }, { amount: 0.015, currency: "USD" }]);
  await c.close();
});

test("a model with no price gives no cost, and a session that used one keeps none after switching to a priced model", async () => {
  const a = memoryAgent({ models: ["m", "unpriced"], prices });
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  await req(a, "session/set_config_option", { sessionId, configId: "model", value: "unpriced" });
  a.provider.push({ text: "one" });
  await ask(a, sessionId, "go");
  await req(a, "session/set_config_option", { sessionId, configId: "model", value: "m" });
  a.provider.push({ text: "two" });
  await ask(a, sessionId, "go");
  expect(costs(a)).toEqual([undefined, undefined]);
  await a.close();
});
