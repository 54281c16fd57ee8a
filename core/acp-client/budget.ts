// Owns what `tendril prompt --max-budget-usd` reads off the agent's usage_updates: the session's cost
// reached the budget, or an update carries no cost in USD (the first, or a later one once the agent
// can no longer price what it spends: the budget cannot be kept). Does not cancel anything: the
// client runner does when this says stop.
import type * as acp from "@agentclientprotocol/sdk";

export type BudgetStop = { kind: "budget" } | { kind: "budget-unknown"; why: string };

/** The verdict on one usage_update (`first`: the run's first); undefined = go on. */
export function budgetVerdict(u: acp.UsageUpdate, first: boolean, limitUsd: number): BudgetStop | undefined {
  const cost = u.cost;
  if (!cost || typeof cost.amount !== "number" || cost.currency !== "USD") {
    if (cost) return { kind: "budget-unknown", why: `the agent reports its cost in ${JSON.stringify(cost.currency)}, not USD` };
    return { kind: "budget-unknown", why: first ? "the agent reports no cost (usage_update.cost)" : "the agent stopped reporting its cost (usage_update.cost)" };
  }
  return cost.amount >= limitUsd ? { kind: "budget" } : undefined;
}
