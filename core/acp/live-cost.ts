// Owns how a live session's cost is wired to the loop: its saved totals, the prices (config over the
// built-in table), the cache's rate, and the recorder that saves the totals. A subagent shares its
// parent's totals object, so what it spends counts to the parent.
import type { SessionCost } from "../agent/session-cost.ts";
import { priceOf } from "../llm/prices.ts";
import type { LiveSession } from "./live-session.ts";
import type { SessionHost } from "./session-host.ts";

/** A live session's spend: its saved totals, the prices, the cache's rate. A child session (a subagent)
 *  shares its parent's totals, so its usage and cost count to the parent. */
export function liveCost(host: SessionHost, s: LiveSession): SessionCost {
  return { totals: s.usage, priceOf: (model) => priceOf(model, host.prices), oneHourCache: host.promptCache === "1h", saved: (t) => s.recorder?.usage(t) };
}
