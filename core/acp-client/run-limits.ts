// Owns what stops a `tendril prompt` run early, read off the session updates a client sees: what
// --max-turns counts as a model turn, for any ACP agent, and what --max-budget-usd reads off the
// agent's usage_updates (this run's cost, the session's reported cost less what it was when the run
// began, reached the budget; or an update carries no cost in USD, so the budget cannot be kept).
// Does not cancel anything: the client session does when this says stop.
import type * as acp from "@agentclientprotocol/sdk";

/**
 * What counts as a model turn for any ACP agent, from the updates a client sees: a turn begins with
 * the first agent message, thought or tool call of the prompt, and again when such an update follows
 * a finished tool call (the model answering tool results) or when an agent message arrives with a
 * `messageId` other than the previous message's. An agent that runs several tool calls of one answer
 * one after another may be counted a turn per call: the count errs on the side of stopping early.
 */
export class TurnCounter {
  turns = 0;
  private toolFinished = false;
  private lastMessageId: string | undefined;

  /** A new prompt was sent: its first update begins a turn. */
  nextPrompt(): void {
    if (this.turns > 0) this.toolFinished = true;
  }

  /** True when this update begins a new turn (the count is then already raised). */
  see(u: acp.SessionUpdate): boolean {
    const kind = u.sessionUpdate;
    if (kind === "tool_call_update" && (u.status === "completed" || u.status === "failed")) this.toolFinished = true;
    if (kind !== "agent_message_chunk" && kind !== "agent_thought_chunk" && kind !== "tool_call") return false;
    const id = kind === "agent_message_chunk" ? (u as { messageId?: unknown }).messageId : undefined;
    const newMessage = typeof id === "string" && this.lastMessageId !== undefined && id !== this.lastMessageId;
    if (typeof id === "string") this.lastMessageId = id;
    if (this.turns > 0 && !this.toolFinished && !newMessage) return false;
    this.toolFinished = false;
    this.turns++;
    return true;
  }
}

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
