// Owns one prompt turn: LLM response → stream text/thinking → run tool calls → feed results → repeat,
// until the model stops, a cap is hit, or the turn is cancelled. Keeps history valid on every exit
// (each tool call gets a result). Does not know JSON-RPC; LLM failures surface as TurnError.
import type { SessionUpdate, StopReason as AcpStopReason } from "@agentclientprotocol/sdk";
import type { LlmError, LlmEvent, LlmProvider, Message, ReasoningBlock, StopReason, ThoughtLevel, ToolCall, ToolSpec, Usage } from "../llm/types.ts";
import type { McpSessionTools } from "../mcp/types.ts";
import { randomId } from "../ids.ts";
import { log, logFailure } from "../log.ts";
import type { Policy } from "../policy/policy.ts";
import type { TerminalShow } from "./live-terminal.ts";
import { type Elicitor, type PermissionAnswer, type PermissionAsk, type PlannedCall, runToolCalls } from "./tool-calls.ts";
import { compactNow, type ContextMeter, type HandoffDeps, keepWithinWindow } from "./handoff.ts";
import { type HookOptions, runHooks } from "./hooks.ts";
import { addToCost, type SessionCost } from "./session-cost.ts";

export interface TurnDeps {
  provider: LlmProvider;
  model: string;
  /** The session's `thought_level`; absent = off. */
  thoughtLevel?: ThoughtLevel;
  maxTokens: number;
  contextWindow: number;
  system: string;
  tools: McpSessionTools;
  policy: Policy;
  cwd: string;
  limits: { MAX_TOOL_CALLS_PER_TURN: number; MAX_PARALLEL_TOOLS: number; MAX_TOOL_RESULT_BYTES: number; MAX_TOOL_IMAGE_BYTES: number; MAX_PROGRESS_UPDATES_PER_S: number; TOOL_TIMEOUT_S: number };
  emit(update: SessionUpdate): void;
  askPermission(ask: PermissionAsk, signal: AbortSignal): Promise<PermissionAnswer>;
  /** Asks the client a tool server's question (MCP elicitation); undefined = the permission fallback. */
  elicit?: Elicitor;
  /** Tells the user something outside the conversation (a `notice`, not recorded); undefined = the
   *  client shows none, so it goes to the log only. */
  notice?(n: { severity: "info" | "warning" | "error"; title: string; description?: string }): void;
  /** The turn's token totals, added to after each LLM response (the prompt answer reports them). */
  totals?: TurnTotals;
  /** The session's spend (usage_update's `cost`); undefined = no cost reported. */
  cost?: SessionCost;
  /** Prompt caching (SPEC §3.9), as the config sets it; absent = on. */
  promptCache?: "on" | "off" | "1h";
  /** The provider's prefix-cache key: the session id. */
  cacheKey?: string;
  /** Hooks and context handoff; undefined = neither (a bare turn). */
  lifecycle?: Lifecycle;
  /** Appends the user's steering messages that wait (SPEC §3.10) to `history`; whether there were any. */
  steer?(history: Message[]): boolean;
  /** The client shows shell output live (SPEC §3.3); undefined = as text when the call ends. */
  terminal?: TerminalShow;
}

export interface Lifecycle {
  meter: ContextMeter;
  hooks: HookOptions;
  /** `_Stop` objections left for the session (STOP_MAX_REJECTIONS). */
  stopBudget: { left: number };
  ratio: number;
  maxHandoffs: number;
  /** The client advertised `session.compaction` (handoffs shown as `compaction_update`s). */
  compaction?: boolean;
  /** The history was replaced by a handoff. */
  onCompact(history: Message[]): void;
}

/** Token totals of one turn, as ACP's `PromptResponse.usage` names them. */
export interface TurnTotals {
  totalTokens: number;
  inputTokens: number;
  outputTokens: number;
  cachedReadTokens: number;
  cachedWriteTokens: number;
}

export function emptyTotals(): TurnTotals {
  return { totalTokens: 0, inputTokens: 0, outputTokens: 0, cachedReadTokens: 0, cachedWriteTokens: 0 };
}

/** The LLM failed for good (after the provider's retries); the prompt answers -32603 with this message. */
export class TurnError extends Error {
  override name = "TurnError";
  constructor(readonly llm: LlmError) {
    super(describeLlmError(llm));
  }
}

function describeLlmError(e: LlmError): string {
  const status = e.status ? ` (HTTP ${e.status})` : "";
  if (e.kind === "auth") return `LLM authentication failed${status}: ${e.message}`;
  return `LLM request failed${status}: ${e.message}`;
}

interface Response {
  text: string;
  calls: ToolCall[];
  /** Reasoning blocks the provider needs back with this message (Anthropic signed thinking, OpenAI encrypted reasoning). */
  reasoning: ReasoningBlock[];
  stopReason: StopReason | "cancelled";
  usage?: Usage;
}

function mapStop(s: StopReason): AcpStopReason {
  if (s === "max_tokens" || s === "refusal") return s;
  return "end_turn";
}

/** Next event of `it`, or "aborted" as soon as the signal fires (a provider that ignores it cannot stall us). */
function nextOrAbort(it: AsyncIterator<LlmEvent>, signal: AbortSignal): Promise<IteratorResult<LlmEvent> | "aborted"> {
  if (signal.aborted) return Promise.resolve("aborted");
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve("aborted");
    signal.addEventListener("abort", onAbort, { once: true });
    it.next().then(
      (r) => (signal.removeEventListener("abort", onAbort), resolve(r)),
      (e) => (signal.removeEventListener("abort", onAbort), reject(e)),
    );
  });
}

/** The provider retries a request after HTTP 429/5xx: logged, and a notice when the client shows them. */
function retried(deps: TurnDeps, r: { status: number; attempt: number }): void {
  log.info("LLM request retried", { status: r.status, attempt: r.attempt, model: deps.model });
  const why = r.status === 429 ? "rate limited (HTTP 429)" : `server error (HTTP ${r.status})`;
  deps.notice?.({ severity: "warning", title: `LLM request retried: ${why}`, description: `trying again (attempt ${r.attempt})` });
}

async function streamResponse(deps: TurnDeps, history: Message[], signal: AbortSignal): Promise<Response> {
  const tools = offeredTools(deps);
  const it = deps.provider
    .stream({
      model: deps.model,
      system: deps.system,
      messages: history,
      tools,
      maxTokens: deps.maxTokens,
      signal,
      onRetry: (r) => retried(deps, r),
      ...(deps.thoughtLevel ? { thoughtLevel: deps.thoughtLevel } : {}),
      ...(deps.promptCache ? { promptCache: deps.promptCache } : {}),
      ...(deps.cacheKey ? { cacheKey: deps.cacheKey } : {}),
    })
    [Symbol.asyncIterator]();
  const out: Response = { text: "", calls: [], reasoning: [], stopReason: "cancelled" };
  let thought = "";
  // One LLM response is one message to the client: its text chunks share an id, its thinking another.
  const messageId = randomId();
  const thoughtId = randomId();
  try {
    for (;;) {
      const r = await nextOrAbort(it, signal);
      if (r === "aborted" || r.done) return out;
      const ev = r.value;
      if (ev.type === "text") {
        out.text += ev.text;
        deps.emit({ sessionUpdate: "agent_message_chunk", messageId, content: { type: "text", text: ev.text } });
      } else if (ev.type === "thinking") {
        if (ev.text !== "") deps.emit({ sessionUpdate: "agent_thought_chunk", messageId: thoughtId, content: { type: "text", text: ev.text } });
        thought += ev.text;
        if (ev.redacted !== undefined) out.reasoning.push({ redacted: ev.redacted });
        if (ev.signature !== undefined) (out.reasoning.push({ text: thought, signature: ev.signature }), (thought = ""));
        if (ev.encrypted !== undefined) (out.reasoning.push({ encrypted: ev.encrypted, summary: ev.summary ?? [] }), (thought = ""));
      } else if (ev.type === "tool_call") {
        out.calls.push(ev.call);
      } else if (ev.type === "done") {
        out.stopReason = ev.stopReason;
        out.usage = ev.usage;
        return out;
      } else if (ev.type === "error") {
        if (signal.aborted || ev.error.kind === "aborted") return out;
        throw new TurnError(ev.error);
      }
    }
  } finally {
    // Always close the stream: it releases the HTTP response and lets wrappers (recording) finish.
    void it.return?.().catch(logFailure("closing the LLM stream"));
  }
}

function assistantMessage(res: Response): Message {
  return { role: "assistant", text: res.text, toolCalls: res.calls, ...(res.reasoning.length ? { reasoning: res.reasoning } : {}) };
}

function tokensOf(usage: Usage): number {
  return usage.inputTokens + usage.outputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
}

/**
 * Asks the allowed `_Stop` hooks whether the turn may end: their objection (shown to the client as a
 * thought naming the hook) is what the model hears next, while the session's budget lasts.
 */
async function stopObjection(deps: TurnDeps, life: Lifecycle, signal: AbortSignal): Promise<string | undefined> {
  if (life.stopBudget.left <= 0) return undefined;
  const replies = await runHooks(deps.tools, "_Stop", life.hooks, signal);
  if (replies.length === 0 || signal.aborted) return undefined;
  life.stopBudget.left--;
  const text = replies.map((r) => `[${r.server} _Stop hook] ${r.text}`).join("\n\n");
  deps.emit({ sessionUpdate: "agent_thought_chunk", messageId: randomId(), content: { type: "text", text: `${text}\n` } });
  return `${text}\n\nA stop hook objected to ending the turn. Address it, then end your turn.`;
}

/** The tools the model is offered: every tool of the session but the hooks. */
function offeredTools(deps: TurnDeps): ToolSpec[] {
  return deps.tools
    .tools()
    .filter((t) => !t.hook)
    .map((t) => ({ name: t.qualifiedName, description: t.description, inputSchema: t.inputSchema }));
}

/** `/compact`: a handoff now, with the turn's own deps. False when there was nothing to compact. */
export async function compactHistory(deps: TurnDeps, history: Message[], signal: AbortSignal): Promise<boolean> {
  return deps.lifecycle ? compactNow(handoffDeps(deps, deps.lifecycle), history, signal) : false;
}

function handoffDeps(deps: TurnDeps, life: Lifecycle): HandoffDeps {
  const offered = offeredTools(deps);
  return {
    provider: deps.provider,
    model: deps.model,
    maxTokens: deps.maxTokens,
    system: deps.system,
    tools: deps.tools,
    offered,
    contextWindow: deps.contextWindow,
    ratio: life.ratio,
    maxHandoffs: life.maxHandoffs,
    hooks: life.hooks,
    meter: life.meter,
    emit: deps.emit,
    compaction: life.compaction,
    onCompact: life.onCompact,
    onUsage: (usage) => countUsage(deps, usage),
  };
}

/** Adds a response's tokens to the turn's and the session's totals; the session's cost so far, when known. */
function countUsage(deps: TurnDeps, usage: Usage): { amount: number; currency: "USD" } | undefined {
  const cost = deps.cost && addToCost(deps.cost, deps.model, usage);
  const t = deps.totals;
  if (t) {
    t.inputTokens += usage.inputTokens;
    t.outputTokens += usage.outputTokens;
    t.cachedReadTokens += usage.cacheReadTokens ?? 0;
    t.cachedWriteTokens += usage.cacheWriteTokens ?? 0;
    t.totalTokens += tokensOf(usage);
  }
  return cost;
}

function emitUsage(deps: TurnDeps, usage: Usage): void {
  const cost = countUsage(deps, usage);
  deps.emit({ sessionUpdate: "usage_update", used: tokensOf(usage), size: deps.contextWindow, ...(cost ? { cost } : {}) });
}

/**
 * Runs one turn over `history` (which already ends with the user's message) and appends to it.
 * Cap policy: calls beyond MAX_TOOL_CALLS_PER_TURN are refused with an error result and the model gets
 * one more response to wrap up; if that response still calls tools, the turn ends with max_turn_requests.
 */
export async function runTurn(deps: TurnDeps, history: Message[], signal: AbortSignal): Promise<AcpStopReason> {
  const cap = deps.limits.MAX_TOOL_CALLS_PER_TURN;
  let used = 0;
  let capHit = false;
  // Two end_turns in a row with no tool call between them end the turn, objection or not.
  let objected = false;
  for (;;) {
    if (deps.lifecycle) await keepWithinWindow(handoffDeps(deps, deps.lifecycle), history, signal);
    deps.steer?.(history);
    const res = await streamResponse(deps, history, signal);
    if (res.usage) emitUsage(deps, res.usage);
    if (signal.aborted || res.stopReason === "cancelled") {
      if (res.text !== "" || res.calls.length) history.push(assistantMessage(res));
      if (res.calls.length) history.push({ role: "tool", results: res.calls.map((c) => ({ callId: c.id, content: "cancelled", isError: true })) });
      return "cancelled";
    }
    history.push(assistantMessage(res));
    if (res.usage) deps.lifecycle?.meter.report(tokensOf(res.usage), history.length);
    if (res.calls.length === 0) {
      const stop = mapStop(res.stopReason);
      // Steering that came while the model answered is heard before the turn ends: it goes on.
      if (stop === "end_turn" && deps.steer?.(history)) continue;
      if (stop !== "end_turn" || objected || !deps.lifecycle) return stop;
      const objection = await stopObjection(deps, deps.lifecycle, signal);
      if (objection === undefined && !signal.aborted && deps.steer?.(history)) continue;
      if (objection === undefined) return signal.aborted ? "cancelled" : stop;
      objected = true;
      history.push({ role: "user", content: [{ type: "text", text: objection }] });
      continue;
    }
    objected = false;
    const wasCapped = capHit;
    const planned: PlannedCall[] = res.calls.map((call) => {
      if (used >= cap) {
        capHit = true;
        return { call, refusal: `refused: this turn reached its limit of ${cap} tool calls (MAX_TOOL_CALLS_PER_TURN); answer with what you have` };
      }
      used++;
      return { call };
    });
    const results = await runToolCalls(planned, {
      tools: deps.tools,
      policy: deps.policy,
      cwd: deps.cwd,
      maxParallel: deps.limits.MAX_PARALLEL_TOOLS,
      maxResultBytes: deps.limits.MAX_TOOL_RESULT_BYTES,
      maxImageBytes: deps.limits.MAX_TOOL_IMAGE_BYTES,
      progressPerS: deps.limits.MAX_PROGRESS_UPDATES_PER_S,
      toolTimeoutMs: deps.limits.TOOL_TIMEOUT_S * 1000,
      signal,
      emit: deps.emit,
      ...(deps.notice && { notice: deps.notice }),
      askPermission: deps.askPermission,
      elicit: deps.elicit,
      ...(deps.terminal ? { terminal: deps.terminal } : {}),
    });
    history.push({ role: "tool", results });
    if (signal.aborted) return "cancelled";
    if (wasCapped) return "max_turn_requests";
  }
}
