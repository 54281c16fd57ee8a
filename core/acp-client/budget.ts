// Owns what `tendril prompt --max-budget-usd` reads off the agent's usage_updates: this run's cost (the
// session's reported cost less what it was when the run began) reached the budget, or an update carries
// no cost in USD (the first, or a later one once the agent can no longer price what it spends: the
// budget cannot be kept). Does not cancel anything: the client runner does when this says stop.
import type * as acp from "@agentclientprotocol/sdk";

export type BudgetStop = { kind: "budget" } | { kind: "budget-unknown"; why: string };

/**
 * Where this run's spend is counted from: 0 for a new session; for a resumed or continued one, the
 * session's cost when the run began — the first cost reported in the run (Tendril's agent reports it
 * when a session is loaded or resumed, before any turn), so earlier runs are not counted.
 */
export class RunSpend {
  #start: number | undefined;

  constructor(resumed: boolean) {
    this.#start = resumed ? undefined : 0;
  }

  /** A cost the agent reported (in USD); returns what this run has spent by then. */
  see(sessionUsd: number): number {
    this.#start ??= sessionUsd;
    return Math.round((sessionUsd - this.#start) * 1e9) / 1e9;
  }
}

/** A usage_update's cost in USD, if it has one. */
export function usdOf(u: acp.UsageUpdate | undefined): number | undefined {
  const c = u?.cost;
  return c && typeof c.amount === "number" && c.currency === "USD" ? c.amount : undefined;
}

/** The verdict on one usage_update (`first`: the run's first; `spent`: this run's cost by then); undefined = go on. */
export function budgetVerdict(u: acp.UsageUpdate, first: boolean, limitUsd: number, spent: number): BudgetStop | undefined {
  const cost = u.cost;
  if (!cost || typeof cost.amount !== "number" || cost.currency !== "USD") {
    if (cost) return { kind: "budget-unknown", why: `the agent reports its cost in ${JSON.stringify(cost.currency)}, not USD` };
    return { kind: "budget-unknown", why: first ? "the agent reports no cost (usage_update.cost)" : "the agent stopped reporting its cost (usage_update.cost)" };
  }
  return spent >= limitUsd ? { kind: "budget" } : undefined;
}
