// Owns what a model's tokens cost: the built-in price table (dated; docs/cost.md lists it), the lookup with
// config overrides (`[prices."MODEL"]`), and the arithmetic of one response's cost and a session's
// running totals. An unknown price is undefined, never a guess. Does not read config files or usage
// off the wire (config.ts, the provider adapters do).
import type { Usage } from "./types.ts";

/** USD per million tokens. `cacheWrite` is the 5-minute write; `cacheWrite1h` the hour-long one (Anthropic). */
export interface Price {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
  cacheWrite1h?: number;
}

/** The day the built-in table was checked against the providers' published prices. */
export const PRICES_CHECKED = "2026-11-28";

const anthropic = (input: number, output: number, cacheWrite: number, cacheRead: number, cacheWrite1h: number): Price => ({ input, output, cacheWrite, cacheRead, cacheWrite1h });
// OpenAI bills no surcharge for writing its automatic cache on these models: a write is plain input.
// OpenAI's cache is automatic: a write costs what input does, whatever TENDRIL_PROMPT_CACHE asks of
// Anthropic (its `1h` is never sent to OpenAI), so the hour-long write rate is the input rate too.
const openai = (input: number, output: number, cacheRead: number): Price => ({ input, output, cacheWrite: input, cacheRead, cacheWrite1h: input });

/** Published list prices (standard tier, short context). Tiered models (Haiku 5.5) are left out. */
export const BUILTIN_PRICES: Readonly<Record<string, Price>> = {
  "claude-fable-5-1": anthropic(10, 50, 12.5, 1, 20),
  "claude-fable-5": anthropic(10, 50, 12.5, 1, 20),
  "claude-opus-5-5": anthropic(4, 20, 5, 0.4, 8),
  "claude-opus-5": anthropic(5, 25, 6.25, 0.5, 10),
  "claude-sonnet-5-5": anthropic(2, 10, 2.5, 0.2, 4),
  "claude-sonnet-5": anthropic(2, 10, 2.5, 0.2, 4),
  "claude-opus-4-8": anthropic(5, 25, 6.25, 0.5, 10),
  "claude-opus-4-7": anthropic(5, 25, 6.25, 0.5, 10),
  "claude-opus-4-6": anthropic(5, 25, 6.25, 0.5, 10),
  "claude-opus-4-5": anthropic(5, 25, 6.25, 0.5, 10),
  "claude-sonnet-4-6": anthropic(3, 15, 3.75, 0.3, 6),
  "claude-sonnet-4-5": anthropic(3, 15, 3.75, 0.3, 6),
  "claude-haiku-4-5": anthropic(1, 5, 1.25, 0.1, 2),
  "gpt-5.5": openai(5, 30, 0.5),
  "gpt-5.4": openai(2.5, 15, 0.25),
  "gpt-5.4-mini": openai(0.75, 4.5, 0.075),
  "gpt-5.4-nano": openai(0.2, 1.25, 0.02),
};

/** A dated snapshot id (`claude-sonnet-4-5-20250929`, `gpt-5.4-2026-03-05`) costs what its family does. */
const SNAPSHOT = /-(\d{8}|\d{4}-\d{2}-\d{2})$/;

/** The price of `model`: the config's entry, else the built-in one, for the id or its snapshot family. */
export function priceOf(model: string, overrides: Readonly<Record<string, Price>> = {}): Price | undefined {
  const family = model.replace(SNAPSHOT, "");
  return overrides[model] ?? BUILTIN_PRICES[model] ?? overrides[family] ?? BUILTIN_PRICES[family];
}

/** One response's cost in USD; undefined when a price it needs is unknown (the 1-hour write rate). */
export function responseCost(usage: Usage, price: Price, oneHourCache = false): number | undefined {
  const writeRate = oneHourCache ? price.cacheWrite1h : price.cacheWrite;
  const writes = usage.cacheWriteTokens ?? 0;
  if (writeRate === undefined && writes > 0) return undefined;
  const micro = usage.inputTokens * price.input + usage.outputTokens * price.output + writes * (writeRate ?? 0) + (usage.cacheReadTokens ?? 0) * price.cacheRead;
  return micro / 1_000_000;
}

/** A session's running totals, saved with it. `cost` is null once any response could not be priced. */
export interface SessionUsage {
  inputTokens: number;
  outputTokens: number;
  cachedReadTokens: number;
  cachedWriteTokens: number;
  cost: number | null;
}

export function emptySessionUsage(): SessionUsage {
  return { inputTokens: 0, outputTokens: 0, cachedReadTokens: 0, cachedWriteTokens: 0, cost: 0 };
}

/** Adds one response to the totals; its cost counts only when the price is known. */
export function addUsage(totals: SessionUsage, usage: Usage, price: Price | undefined, oneHourCache = false): void {
  totals.inputTokens += usage.inputTokens;
  totals.outputTokens += usage.outputTokens;
  totals.cachedReadTokens += usage.cacheReadTokens ?? 0;
  totals.cachedWriteTokens += usage.cacheWriteTokens ?? 0;
  const cost = price && responseCost(usage, price, oneHourCache);
  totals.cost = totals.cost === null || cost === undefined ? null : totals.cost + cost;
}

/** Saved totals read back: anything malformed is undefined (the session then counts from zero, unpriced). */
export function parseSessionUsage(v: unknown): SessionUsage | undefined {
  if (!v || typeof v !== "object") return undefined;
  const o = v as Record<string, unknown>;
  const count = (x: unknown) => typeof x === "number" && Number.isFinite(x) && x >= 0;
  if (!count(o.inputTokens) || !count(o.outputTokens) || !count(o.cachedReadTokens) || !count(o.cachedWriteTokens)) return undefined;
  if (o.cost !== null && !count(o.cost)) return undefined;
  return { inputTokens: o.inputTokens as number, outputTokens: o.outputTokens as number, cachedReadTokens: o.cachedReadTokens as number, cachedWriteTokens: o.cachedWriteTokens as number, cost: o.cost as number | null };
}
