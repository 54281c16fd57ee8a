// Owns the ACP client side of `tendril prompt`: spawn an agent, initialize (v2 offered, v1 kept when the
// agent answers 1; v2-link.ts keeps the rest in v1's terms), open the session
// (session-open.ts), the prompt (asked once more when the answer misses --output-schema), permissions,
// timeout → cancel → kill. It reads the wire itself (RpcPeer): no SDK
// app validating every update, and an update kind it does not know still reaches the output.
// Does not render anything or choose a policy: updates and permission questions go to callbacks.
// Over 400 lines as one unit: the run is one race (answer, exit, clock, Ctrl-C, --max-turns, budget)
// and its settling, which read best side by side.
import type * as acp from "@agentclientprotocol/sdk";
import { RpcError, RpcPeer } from "../wire/rpc-peer.ts";
import { ACP_V1, ACP_V2, AUTH_REQUIRED, INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION } from "../wire/jsonrpc.ts";
import { type AgentEnd, AgentProcess, type AgentExit, type AgentSpawn, describeExit, waitFor } from "./agent-process.ts";
import type { OutputSchema } from "./output-schema.ts";
import { openSession, type ResumeWanted, SessionError } from "./session-open.ts";
import { SettingError, settingRequests, type WantedSettings } from "./session-settings.ts";
import { ToolCallTable, type ToolCallView } from "./tool-call-table.ts";
import { TurnCounter } from "./turn-counter.ts";
import { type BudgetStop, budgetVerdict, RunSpend, usdOf } from "./budget.ts";
import { type AgentRequests, initAnswerV1, offerInitialize, V2Link } from "./v2-link.ts";

export type { AgentEnd, AgentExit, AgentSpawn } from "./agent-process.ts";
export type { ResumeWanted } from "./session-open.ts";
export type { ToolCallView } from "./tool-call-table.ts";
export { TurnCounter } from "./turn-counter.ts";
export type { PermissionOption, SessionUpdate, StopReason } from "@agentclientprotocol/sdk";

export interface McpStdioServer {
  name: string;
  /** Absolute: ACP requires it. */
  command: string;
  args: string[];
  env: Record<string, string>;
}

export type PermissionOutcome = acp.RequestPermissionOutcome;

export interface RunPromptOptions {
  /** A command to spawn, or an agent that starts in this process (AgentSpawn.env still says which
   *  variables are set, for authentication). */
  agent: AgentSpawn & { start?: () => AgentEnd };
  /** Absolute; the session's cwd (the agent process itself starts where `agent.cwd` says). */
  cwd: string;
  mcpServers: McpStdioServer[];
  prompt: string;
  /** Whole run, initialize included; undefined = no limit. */
  timeoutMs?: number;
  /** Model turns allowed (see TurnCounter); the (N+1)-th is cancelled. undefined = no limit. */
  maxTurns?: number;
  /** --max-budget-usd: the turn is cancelled once the cost the agent reports reaches it. undefined = no limit. */
  maxBudgetUsd?: number;
  /** --model / --mode, applied after session/new (session-settings.ts). */
  settings?: WantedSettings;
  /** session/new `_meta` (e.g. `systemPrompt`). */
  sessionMeta?: Record<string, unknown>;
  /** --resume ID / --continue: an existing session instead of a new one. */
  resume?: ResumeWanted;
  /** --output-schema: the answer must be a document valid against it (asked once more if not). */
  outputSchema?: Pick<OutputSchema, "instruction" | "check" | "retryPrompt">;
  /** The first answer missed the schema: these problems go back to the agent in a second prompt. */
  onSchemaRetry?: (problems: string[]) => void;
  /** Aborting it (Ctrl-C) cancels the turn and stops the agent like a timeout does. */
  signal?: AbortSignal;
  maxLineBytes: number;
  /** SHUTDOWN_DEADLINE_S, CANCEL_WAIT_S, INTERRUPT_WAIT_S in force, in ms. */
  waits: { shutdownMs: number; cancelMs: number; interruptMs: number };
  clientVersion: string;
  /** Called synchronously, in arrival order; `call` is the merged tool call for tool updates. */
  onUpdate: (update: acp.SessionUpdate, call: ToolCallView | undefined) => void;
  decide: (call: ToolCallView, options: acp.PermissionOption[]) => PermissionOutcome;
  onStderr: (text: string) => void;
}

export type RunOutcome =
  | { kind: "stopped"; stopReason: acp.StopReason; usage?: Record<string, unknown> }
  | { kind: "schema"; problems: string[]; usage?: Record<string, unknown> }
  | { kind: "session"; message: string }
  | { kind: "timeout" }
  | { kind: "interrupted" }
  | { kind: "max-turns"; limit: number }
  /** The reported cost reached --max-budget-usd. */
  | { kind: "budget"; limit: number; spent: { amount: number; currency: string }; session: { amount: number; currency: string }; usage?: Record<string, unknown> }
  /** --max-budget-usd with an agent whose first usage_update carries no cost (or not in USD). */
  | { kind: "budget-unknown"; limit: number; why: string }
  | { kind: "setting"; message: string }
  | { kind: "agent-error"; message: string; code?: number; step: string }
  | { kind: "died"; message: string; stderrTail: string[] };

export interface RunResult {
  outcome: RunOutcome;
  toolCalls: ToolCallView[];
  sessionId?: string;
  /** Model turns observed (TurnCounter), at most maxTurns. */
  numTurns?: number;
  durationMs?: number;
  /** This run's cost: the session's, as the agent last reported it (usage_update), less what it was
   *  when the run began (budget.ts's RunSpend), when the agent reports it in USD. */
  cost?: { amount: number; currency: string };
  /** The session's cost as the agent last reported it (usage_update), when it does. */
  sessionCost?: { amount: number; currency: string };
  /** --output-schema: the answer's document, valid against the schema. */
  structured?: unknown;
}

function agentError(err: unknown, step: string): RunOutcome | undefined {
  if (!(err instanceof RpcError)) return undefined;
  const data = err.data as { details?: unknown } | undefined;
  const details = typeof data?.details === "string" ? data.details : "";
  let message = err.message;
  if (details.includes(message)) message = details;
  else if (details && !message.includes(details)) message = `${message}: ${details}`;
  return { kind: "agent-error", message, code: err.code, step };
}

/** Token counts summed over the run's prompts (the answer and a --output-schema retry), and the
 *  context window from the last usage_update. */
function usageOf(responses: acp.PromptResponse[], lastUsage: acp.UsageUpdate | undefined): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  let any = false;
  for (const r of responses) {
    const usage = (r as { usage?: Record<string, unknown> | null }).usage;
    if (!usage) continue;
    any = true;
    for (const [k, v] of Object.entries(usage)) {
      if (k === "_meta") continue;
      out[k] = typeof v === "number" && typeof out[k] === "number" ? (out[k] as number) + v : v;
    }
  }
  if (lastUsage) {
    out.contextUsed = lastUsage.used;
    out.contextSize = lastUsage.size;
  }
  return any || lastUsage ? out : undefined;
}

function costOf(lastUsage: acp.UsageUpdate | undefined): RunResult["cost"] {
  const c = lastUsage?.cost;
  return c && typeof c.amount === "number" && typeof c.currency === "string" ? { amount: c.amount, currency: c.currency } : undefined;
}

type Race =
  | { kind: "answer"; response: acp.PromptResponse }
  | { kind: "failed"; error: unknown; step: string }
  | { kind: "exit"; exit: AgentExit }
  | { kind: "timeout" }
  | { kind: "interrupted" }
  | { kind: "max-turns" }
  | BudgetStop;

/** What the run learns as it goes; handlers write it synchronously in arrival order. */
interface RunState {
  table: ToolCallTable;
  step: string;
  sessionId?: string;
  /** session/load of this id is replaying history: its updates are not this run's. */
  replaying?: string;
  lastUsage?: acp.UsageUpdate;
  /** This run's spend, counted from the session's cost when it began. */
  spend: RunSpend;
  /** This run's cost (USD) by the last usage_update that carried one. */
  runCost?: number;
  turns: TurnCounter;
  /** Set once the (N+1)-th turn began: nothing after it is shown, permissions are cancelled. */
  overLimit: boolean;
  onTurnLimit: () => void;
  /** --max-budget-usd reached, or found impossible to keep: the run stops as at --max-turns. */
  onBudget: (race: BudgetStop) => void;
  /** Set once the budget was reached or found impossible to keep (an answer that beat the cancel counts too). */
  budget?: BudgetStop;
  /** The current prompt's answer text (for --output-schema). */
  answer: string;
  /** Every session/prompt answer so far (usage is summed over them). */
  responses: acp.PromptResponse[];
  /** Set when the agent answered initialize with ACP v2. */
  v2?: V2Link;
  /** --output-schema's verdict on the last answer. */
  schema?: { ok: true; document: unknown } | { ok: false; problems: string[] };
}

function connect(proc: AgentEnd, opts: RunPromptOptions, state: RunState): RpcPeer {
  const peer = new RpcPeer({
    input: proc.output,
    sink: proc.input,
    maxLineBytes: opts.maxLineBytes,
    onNotification(method, raw) {
      if (method !== "session/update") return;
      const params = raw as acp.SessionNotification;
      if (!params?.update || typeof params.update !== "object") return;
      if (state.replaying !== undefined && params.sessionId === state.replaying) {
        // What a replay reports of the session's spend is where this run's begins.
        if ((params.update as acp.SessionUpdate).sessionUpdate === "usage_update") seeUsage(params.update as acp.UsageUpdate, state);
        return;
      }
      // v2's updates in v1's terms (none for what only v2 has); its idle state ends the prompt.
      const updates = state.v2 ? state.v2.updates(params.sessionId, params.update as Record<string, unknown>) : [params.update];
      const own = state.sessionId === undefined || params.sessionId === state.sessionId;
      for (const u of updates) (own ? onUpdate : onChildUsage)(u, opts, state);
    },
    onRequest(method, raw) {
      if (method !== "session/request_permission") throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method} (this client offers no fs or terminal)`);
      const params = state.v2 && raw && typeof raw === "object" ? state.v2.permission(raw as Record<string, unknown>) : (raw as acp.RequestPermissionRequest);
      if (!params?.toolCall || !Array.isArray(params.options)) throw new RpcError(INVALID_PARAMS, "session/request_permission needs toolCall and options");
      if (state.overLimit) return { outcome: { outcome: "cancelled" } };
      return { outcome: opts.decide(state.table.merge(params.toolCall), params.options) };
    },
  });
  return peer;
}

/** One update for the output, in arrival order: counted as a turn (--max-turns), kept (usage, the
 *  answer, the tool call table) and handed on. */
function onUpdate(u: acp.SessionUpdate, opts: RunPromptOptions, state: RunState): void {
  if (state.overLimit) return;
  if (state.turns.see(u) && opts.maxTurns !== undefined && state.turns.turns > opts.maxTurns) {
    state.turns.turns = opts.maxTurns;
    state.overLimit = true;
    state.onTurnLimit();
    return;
  }
  const firstUsage = u.sessionUpdate === "usage_update" && state.lastUsage === undefined;
  if (u.sessionUpdate === "usage_update") seeUsage(u, state);
  if (u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text") state.answer += u.content.text;
  const call = u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update" ? state.table.merge(u) : undefined;
  opts.onUpdate(u, call);
  const verdict = u.sessionUpdate === "usage_update" && opts.maxBudgetUsd !== undefined ? budgetVerdict(u, firstUsage, opts.maxBudgetUsd, state.runCost ?? 0) : undefined;
  if (verdict) {
    // Stopped as at --max-turns: nothing after it is shown, permission questions are answered `cancelled`.
    state.overLimit = true;
    state.budget = verdict;
    state.onBudget(verdict);
  }
}

/**
 * An update of another session on the connection: a subagent's, which a client showing subagents (v2's
 * baseline) gets under the child's own id. Only its cost is read: a child spends its parent's session,
 * so the cost it reports is the whole session's, and --max-budget-usd stops the run while the child runs.
 */
function onChildUsage(u: acp.SessionUpdate, opts: RunPromptOptions, state: RunState): void {
  if (state.overLimit || u.sessionUpdate !== "usage_update" || !state.lastUsage) return;
  if (u.cost) seeUsage({ ...state.lastUsage, cost: u.cost }, state);
  const verdict = opts.maxBudgetUsd !== undefined ? budgetVerdict(u, false, opts.maxBudgetUsd, state.runCost ?? 0) : undefined;
  if (verdict) {
    state.overLimit = true;
    state.budget = verdict;
    state.onBudget(verdict);
  }
}

/** A usage_update of the session: the last one kept, and this run's cost by it. */
function seeUsage(u: acp.UsageUpdate, state: RunState): void {
  state.lastUsage = u;
  const usd = usdOf(u);
  if (usd !== undefined) state.runCost = state.spend.see(usd);
}

async function converse(peer: RpcPeer, opts: RunPromptOptions, state: RunState): Promise<acp.PromptResponse> {
  // v2 offered; an agent that answers 1 is spoken to in v1, one that answers 2 through the v2 link.
  const answered = await peer.request<acp.InitializeResponse>("initialize", offerInitialize(opts.clientVersion));
  if (answered?.protocolVersion === ACP_V2) state.v2 = new V2Link(peer);
  else if (answered?.protocolVersion !== ACP_V1) {
    throw new RpcError(UNSUPPORTED_PROTOCOL_VERSION, `the agent speaks ACP version ${answered?.protocolVersion}; this client speaks ${ACP_V1} and ${ACP_V2}`);
  }
  const init = state.v2 ? initAnswerV1(answered) : answered;
  const link: AgentRequests = state.v2 ?? peer;
  const mcpServers: acp.McpServer[] = opts.mcpServers.map((s) => ({
    name: s.name,
    command: s.command,
    args: s.args,
    env: Object.entries(s.env).map(([name, value]) => ({ name, value })),
  }));
  const session = await openSession({
    peer: link,
    init,
    agent: opts.agent,
    cwd: opts.cwd,
    mcpServers,
    meta: opts.sessionMeta,
    resume: opts.resume,
    setStep: (step) => (state.step = step),
    replaying: (id) => (state.replaying = id),
  });
  if (typeof session?.sessionId !== "string") throw new RpcError(INTERNAL_ERROR, `the agent answered ${state.step} without a sessionId`);
  state.sessionId = session.sessionId;
  for (const req of settingRequests(session.sessionId, session, opts.settings ?? {})) {
    state.step = req.method;
    await link.request(req.method, req.params);
  }
  const schema = opts.outputSchema;
  const ask = async (text: string) => {
    state.step = "session/prompt";
    state.answer = "";
    state.turns.nextPrompt();
    const answer = await link.request<acp.PromptResponse>("session/prompt", { sessionId: session.sessionId, prompt: [{ type: "text", text }] });
    if (typeof answer?.stopReason !== "string") throw new RpcError(INTERNAL_ERROR, "the agent answered session/prompt without a stopReason");
    state.responses.push(answer);
    if (schema && answer.stopReason === "end_turn") state.schema = schema.check(state.answer);
    return answer;
  };
  const answer = await ask(schema ? `${opts.prompt}\n\n${schema.instruction}` : opts.prompt);
  if (!state.schema || state.schema.ok) return answer;
  // Once more, in the same session, with what was wrong.
  opts.onSchemaRetry?.(state.schema.problems);
  return ask(schema!.retryPrompt(state.schema.problems));
}

/** Runs one prompt against an agent command and always leaves the agent's process group dead. */
export async function runPrompt(opts: RunPromptOptions): Promise<RunResult> {
  const t0 = performance.now();
  let turnLimit!: () => void;
  let budget!: (race: Race) => void;
  const limitReached = new Promise<Race>((resolve) => {
    turnLimit = () => resolve({ kind: "max-turns" });
    budget = resolve;
  });
  const state: RunState = {
    table: new ToolCallTable(),
    step: "initialize",
    turns: new TurnCounter(),
    overLimit: false,
    onTurnLimit: () => turnLimit(),
    onBudget: (race) => budget(race),
    answer: "",
    responses: [],
    spend: new RunSpend(opts.resume !== undefined),
  };
  let proc: AgentEnd;
  try {
    proc = opts.agent.start ? opts.agent.start() : new AgentProcess(opts.agent, opts.onStderr);
  } catch (err) {
    return { outcome: { kind: "died", message: (err as Error).message, stderrTail: [] }, toolCalls: [], numTurns: 0, durationMs: Math.round(performance.now() - t0) };
  }
  const conn = connect(proc, opts, state);
  const conversation = converse(conn, opts, state);
  conversation.catch(() => {}); // settled through the race below
  const stops = stopSignals(opts);
  try {
    const first = await Promise.race<Race>([
      conversation.then(
        (response) => ({ kind: "answer", response }),
        (error: unknown) => ({ kind: "failed", error, step: state.step }),
      ),
      proc.exited.then((exit) => ({ kind: "exit", exit })),
      stops.promise,
      limitReached,
    ]);
    const outcome = await settle(first, { conversation, proc, conn, state, waits: opts.waits, maxTurns: opts.maxTurns, maxBudgetUsd: opts.maxBudgetUsd });
    const durationMs = Math.round(performance.now() - t0);
    const result: RunResult = { outcome, toolCalls: state.table.list(), sessionId: state.sessionId, numTurns: state.turns.turns, durationMs };
    const sessionCost = costOf(state.lastUsage);
    if (sessionCost) result.sessionCost = sessionCost;
    if (state.runCost !== undefined) result.cost = { amount: state.runCost, currency: "USD" };
    if (outcome.kind === "stopped" && outcome.stopReason === "end_turn" && state.schema?.ok) result.structured = state.schema.document;
    return result;
  } finally {
    stops.dispose();
    // The same deadline tendril agent gives itself to stop its tool servers (SHUTDOWN_DEADLINE_S).
    await proc.shutdown(opts.waits.shutdownMs);
    conn.close();
  }
}

interface SettleContext {
  conversation: Promise<acp.PromptResponse>;
  proc: AgentEnd;
  conn: RpcPeer;
  state: RunState;
  waits: RunPromptOptions["waits"];
  maxTurns?: number;
  maxBudgetUsd?: number;
}

async function settle(first: Race, cx: SettleContext): Promise<RunOutcome> {
  // The turn ended on its own just as the budget was reached: the budget still decides the outcome.
  if (first.kind === "answer" && cx.state.budget) return stoppedOutcome(cx.state.budget, cx);
  if (first.kind === "answer") return answered(first.response, cx.state);
  if (first.kind === "timeout" || first.kind === "interrupted" || first.kind === "max-turns" || first.kind === "budget" || first.kind === "budget-unknown") {
    const id = cx.state.sessionId;
    if (id !== undefined) {
      cx.conn.notify("session/cancel", { sessionId: id });
      // A well-behaved agent answers `cancelled` at once; give it CANCEL_WAIT_S to wind down its own
      // tools (INTERRUPT_WAIT_S after Ctrl-C: a person is waiting).
      await waitFor(cx.conversation.catch(() => undefined), first.kind === "interrupted" ? cx.waits.interruptMs : cx.waits.cancelMs);
    }
    return stoppedOutcome(first, cx);
  }
  if (first.kind === "failed") {
    if (first.error instanceof SettingError) return { kind: "setting", message: first.error.message };
    if (first.error instanceof SessionError) return { kind: "session", message: first.error.message };
    const known = agentError(first.error, first.step);
    if (known) return known;
    // Not an error answer: the connection broke. If the process died, say that instead.
    const exit = await waitFor(cx.proc.exited, 1000);
    if (exit) return died(exit, cx.proc, first.step);
    const message = first.error instanceof Error ? first.error.message : String(first.error);
    return { kind: "agent-error", message: `connection failed: ${message}`, step: first.step };
  }
  // The process exited; an answer already on its way still counts.
  const late = await waitFor(
    cx.conversation.then((r) => r, () => undefined),
    100,
  );
  if (late) return answered(late, cx.state);
  return died(first.exit, cx.proc, cx.state.step);
}

/** A run the client stopped: by the clock, Ctrl-C, --max-turns or --max-budget-usd. */
function stoppedOutcome(first: Extract<Race, { kind: "timeout" | "interrupted" | "max-turns" | "budget" | "budget-unknown" }>, cx: SettleContext): RunOutcome {
  const limit = cx.maxBudgetUsd ?? 0;
  switch (first.kind) {
    case "max-turns":
      return { kind: "max-turns", limit: cx.maxTurns ?? 0 };
    case "budget": {
      const session = costOf(cx.state.lastUsage)!;
      const spent = { amount: cx.state.runCost ?? session.amount, currency: "USD" };
      const usage = usageOf(cx.state.responses, cx.state.lastUsage);
      return { kind: "budget", limit, spent, session, ...(usage ? { usage } : {}) };
    }
    case "budget-unknown":
      return { kind: "budget-unknown", limit, why: first.why };
    default:
      return { kind: first.kind };
  }
}

/** The last answer's outcome: its stop reason, unless it ended its turn without the schema's document. */
function answered(response: acp.PromptResponse, state: RunState): RunOutcome {
  const usage = usageOf(state.responses, state.lastUsage);
  if (response.stopReason === "end_turn" && state.schema && !state.schema.ok) return { kind: "schema", problems: state.schema.problems, usage };
  return { kind: "stopped", stopReason: response.stopReason, usage };
}

function died(exit: AgentExit, proc: AgentEnd, step: string): RunOutcome {
  return { kind: "died", message: `the agent ${describeExit(exit)} during ${step}`, stderrTail: proc.stderrTail() };
}

function stopSignals(opts: RunPromptOptions): { promise: Promise<Race>; dispose: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const promise = new Promise<Race>((resolve) => {
    if (opts.timeoutMs !== undefined) timer = setTimeout(() => resolve({ kind: "timeout" }), opts.timeoutMs);
    if (opts.signal) {
      onAbort = () => resolve({ kind: "interrupted" });
      if (opts.signal.aborted) onAbort();
      else opts.signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  return {
    promise,
    dispose: () => {
      clearTimeout(timer);
      if (onAbort) opts.signal?.removeEventListener("abort", onAbort);
    },
  };
}
