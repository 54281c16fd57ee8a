// createProvider: the configuration picks the provider, recording wraps it, replay needs a usable cassette.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeLlm, startFakeLlm } from "../../tests/fake-llm.ts";
import { ConfigError, loadConfig } from "../config.ts";
import { createProvider } from "./provider.ts";
import type { LlmEvent, LlmProvider } from "./types.ts";

let fake: FakeLlm;
let dir: string;
beforeAll(async () => {
  fake = await startFakeLlm();
  dir = await mkdtemp(join(tmpdir(), "tendril-provider-"));
});
afterAll(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

const readFile = (p: string) => (existsSync(p) ? readFileSync(p, "utf8") : undefined);
const config = (env: Record<string, string>) => loadConfig({}, { HOME: dir, ...env }, readFile);

async function ask(p: LlmProvider): Promise<LlmEvent[]> {
  const out: LlmEvent[] = [];
  const req = {
    model: "m",
    system: "",
    messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }],
    tools: [],
    maxTokens: 10,
    signal: new AbortController().signal,
  };
  for await (const ev of p.stream(req)) out.push(ev);
  return out;
}

test("anthropic and openai come from the config's keys and base URLs", async () => {
  fake.script([{ text: "from anthropic" }, { text: "from openai" }]);
  const a = await createProvider(await config({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.anthropicBaseUrl }), readFile);
  expect(a.name).toBe("anthropic");
  expect((await ask(a)).filter((e) => e.type === "text").map((e) => (e as { text: string }).text).join("")).toBe("from anthropic");
  const o = await createProvider(await config({ TENDRIL_PROVIDER: "openai", OPENAI_BASE_URL: fake.openaiBaseUrl }), readFile);
  expect(o.name).toBe("openai");
  expect((await ask(o)).at(-1)).toMatchObject({ type: "done", stopReason: "end_turn" });
  expect(fake.requests.at(-1)!.path).toBe("/v1/chat/completions");
});

test("limits reach the provider: a small MAX_LLM_RESPONSE_BYTES gives too_large", async () => {
  fake.script([{ text: "x".repeat(5000) }]);
  const p = await createProvider(
    await config({ TENDRIL_PROVIDER: "openai", OPENAI_BASE_URL: fake.openaiBaseUrl, TENDRIL_MAX_LLM_RESPONSE_BYTES: "1KiB" }),
    readFile,
  );
  expect((await ask(p)).at(-1)).toMatchObject({ type: "error", error: { kind: "too_large" } });
});

test("TENDRIL_RECORD writes a cassette that TENDRIL_PROVIDER=replay answers from", async () => {
  const cassette = join(dir, "rec.jsonl");
  fake.script([{ text: "recorded answer" }]);
  const rec = await createProvider(
    await config({ TENDRIL_PROVIDER: "openai", OPENAI_BASE_URL: fake.openaiBaseUrl, TENDRIL_RECORD: cassette }),
    readFile,
  );
  const live = await ask(rec);
  const replay = await createProvider(await config({ TENDRIL_PROVIDER: "replay", TENDRIL_REPLAY: cassette }), readFile);
  expect(replay.name).toBe("replay");
  expect(await ask(replay)).toEqual(live);
});

test("replay without a usable cassette is a ConfigError naming what to set", async () => {
  await expect(createProvider(await config({ TENDRIL_PROVIDER: "replay" }), readFile)).rejects.toThrow(/TENDRIL_REPLAY=FILE/);
  const missing = join(dir, "nope.jsonl");
  await expect(createProvider(await config({ TENDRIL_PROVIDER: "replay", TENDRIL_REPLAY: missing }), readFile)).rejects.toThrow(
    `replay file not found: ${missing}`,
  );
  const bad = join(dir, "bad.jsonl");
  await writeFile(bad, "not json\n");
  const err = await createProvider(await config({ TENDRIL_PROVIDER: "replay", TENDRIL_REPLAY: bad }), readFile).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigError);
  expect(String(err)).toContain(`${bad}: replay file line 1: not JSON`);
});

test("the first request loads the adapter and goes out without waiting a timer turn", async () => {
  await import("./anthropic.ts"); // loaded already: what remains is the provider's own scheduling
  const cfg = await config({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.anthropicBaseUrl });
  const p = await createProvider(cfg, readFile);
  const realFetch = globalThis.fetch;
  let timerFired = false;
  let timerFiredAtFetch: boolean | undefined;
  globalThis.fetch = Object.assign(async (...args: Parameters<typeof fetch>) => {
    timerFiredAtFetch ??= timerFired;
    return realFetch(...args);
  }, realFetch);
  try {
    fake.script([{ text: "at once" }]);
    setTimeout(() => (timerFired = true), 0);
    const events = await ask(p);
    expect(events.at(-1)?.type).toBe("done");
    expect(timerFiredAtFetch).toBe(false);
  } finally {
    globalThis.fetch = realFetch;
  }
});
