// The cost arithmetic against figures worked out by hand, the price lookup (snapshots, overrides) and
// the session totals: unknown prices give no cost, never a guess.
import { expect, test } from "bun:test";
import { addUsage, BUILTIN_PRICES, emptySessionUsage, parseSessionUsage, priceOf, responseCost } from "./prices.ts";

test("one response's cost: input, output, cache writes and cache reads each at its own price", () => {
  // claude-sonnet-5-5: $2 in, $10 out, $2.50 5-minute write, $4 hour write, $0.20 read (per million)
  // 1000×2 + 500×10 + 4000×2.5 + 20000×0.2 = 2000 + 5000 + 10000 + 4000 = 21000 µ$ = $0.021
  const usage = { inputTokens: 1000, outputTokens: 500, cacheWriteTokens: 4000, cacheReadTokens: 20_000 };
  expect(responseCost(usage, priceOf("claude-sonnet-5-5")!)).toBeCloseTo(0.021, 12);
  // the hour-long cache writes at $4: 2000 + 5000 + 16000 + 4000 = $0.027
  expect(responseCost(usage, priceOf("claude-sonnet-5-5")!, true)).toBeCloseTo(0.027, 12);
  // gpt-5.4: $2.50 in, $15 out, $0.25 cached: 3000×2.5 + 200×15 + 9000×0.25 = 7500 + 3000 + 2250 = $0.01275
  expect(responseCost({ inputTokens: 3000, outputTokens: 200, cacheReadTokens: 9000 }, priceOf("gpt-5.4")!)).toBeCloseTo(0.01275, 12);
});

test("regression: TENDRIL_PROMPT_CACHE=1h kept an OpenAI session's cost only until an endpoint reported a cache write; OpenAI's writes cost input, hour or not", () => {
  // gpt-5.4: 1000×2.5 + 100×15 + 2000×2.5 (a write at the input rate) = 2500 + 1500 + 5000 = $0.009
  const usage = { inputTokens: 1000, outputTokens: 100, cacheWriteTokens: 2000 };
  expect(responseCost(usage, priceOf("gpt-5.4")!, true)).toBeCloseTo(0.009, 12);
  expect(responseCost(usage, priceOf("gpt-5.4")!, false)).toBeCloseTo(0.009, 12);
});

test("a snapshot id costs what its family does; the config's entry wins; an unknown model has no price", () => {
  expect(priceOf("claude-sonnet-4-5-20250929")).toEqual(priceOf("claude-sonnet-4-5"));
  expect(priceOf("gpt-5.4-mini-2026-03-17")).toEqual(priceOf("gpt-5.4-mini"));
  expect(priceOf("gpt-5.4", { "gpt-5.4": { input: 1, output: 2, cacheWrite: 1, cacheRead: 0.5 } })!.input).toBe(1);
  expect(priceOf("llama3:8b")).toBeUndefined();
  expect(priceOf("llama3:8b", { "llama3:8b": { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 } })).toEqual({ input: 0, output: 0, cacheWrite: 0, cacheRead: 0 });
});

test("session totals add up; one unpriced response leaves the session without a cost from then on", () => {
  const t = emptySessionUsage();
  addUsage(t, { inputTokens: 1000, outputTokens: 100 }, priceOf("claude-haiku-4-5")); // 1000×1 + 100×5 = $0.0015
  addUsage(t, { inputTokens: 10, outputTokens: 10, cacheReadTokens: 5000, cacheWriteTokens: 1000 }, priceOf("claude-haiku-4-5")); // 10 + 50 + 500 + 1250 = $0.00181
  expect(t.cost!).toBeCloseTo(0.00331, 12);
  expect([t.inputTokens, t.outputTokens, t.cachedReadTokens, t.cachedWriteTokens]).toEqual([1010, 110, 5000, 1000]);
  addUsage(t, { inputTokens: 1, outputTokens: 1 }, undefined);
  expect(t.cost).toBeNull();
  addUsage(t, { inputTokens: 1, outputTokens: 1 }, priceOf("claude-haiku-4-5"));
  expect(t.cost).toBeNull();
  // a price with no hour-long write rate cannot price hour-long writes
  const u = emptySessionUsage();
  addUsage(u, { inputTokens: 1, outputTokens: 1, cacheWriteTokens: 10 }, { input: 1, output: 1, cacheWrite: 1, cacheRead: 1 }, true);
  expect(u.cost).toBeNull();
});

test("saved totals read back; malformed ones are refused", () => {
  const saved = { inputTokens: 1, outputTokens: 2, cachedReadTokens: 3, cachedWriteTokens: 4, cost: 0.5 };
  expect(parseSessionUsage(JSON.parse(JSON.stringify(saved)))).toEqual(saved);
  expect(parseSessionUsage({ ...saved, cost: null })).toEqual({ ...saved, cost: null });
  expect(parseSessionUsage({ ...saved, cost: -1 })).toBeUndefined();
  expect(parseSessionUsage({ ...saved, inputTokens: "1" })).toBeUndefined();
});

test("every built-in price keeps the provider's published ratios to input: Anthropic writes 1.25× (5 min) and 2× (1 h), reads 0.1×; OpenAI writes at input, reads 0.1×", () => {
  const near = (a: number, b: number) => Math.abs(a - b) < 1e-9;
  const off: string[] = [];
  for (const [model, p] of Object.entries(BUILTIN_PRICES)) {
    const anthropic = model.startsWith("claude-");
    const want = anthropic ? { cacheWrite: 1.25, cacheWrite1h: 2, cacheRead: 0.1 } : { cacheWrite: 1, cacheWrite1h: 1, cacheRead: 0.1 };
    for (const [k, ratio] of Object.entries(want)) {
      const got = p[k as keyof typeof want]!;
      if (!near(got, p.input * ratio)) off.push(`${model}: ${k} ${got} is ${got / p.input}× input, not ${ratio}×`);
    }
  }
  expect(off).toEqual([]);
});
