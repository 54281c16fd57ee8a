// Owns a session's running spend: each LLM response (answers and handoff summaries alike) added to the
// session's token totals at the model's price, and the `cost` a usage_update carries (the session so
// far, in USD; none once a response could not be priced). Prices and the arithmetic are
// llm/prices.ts's; saving the totals is the recorder's (told through `saved`).
import { addUsage, type Price, type SessionUsage } from "../llm/prices.ts";
import type { Usage } from "../llm/types.ts";

export interface SessionCost {
  /** The session's totals, added to in place (saved with the session, restored on load). */
  totals: SessionUsage;
  /** The model's price, or undefined when neither the config nor the built-in table knows it. */
  priceOf(model: string): Price | undefined;
  /** Writes are billed at the hour-long cache's rate (TENDRIL_PROMPT_CACHE=1h). */
  oneHourCache: boolean;
  /** The totals changed (the recorder saves them). */
  saved?(totals: SessionUsage): void;
}

/** Adds one response by `model` to the session's totals; returns the cost so far, when it is known. */
export function addToCost(c: SessionCost, model: string, usage: Usage): { amount: number; currency: "USD" } | undefined {
  addUsage(c.totals, usage, c.priceOf(model), c.oneHourCache);
  c.saved?.(c.totals);
  return costNow(c.totals);
}

/** The totals' cost as a usage_update carries it (to the nano-dollar: float sums stay readable). */
export function costNow(totals: SessionUsage): { amount: number; currency: "USD" } | undefined {
  return totals.cost === null ? undefined : { amount: Math.round(totals.cost * 1e9) / 1e9, currency: "USD" };
}
