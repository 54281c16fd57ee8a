// Owns one `tendril prompt` conversation with an ACP agent, from its first byte to its outcome: the
// wire (RpcPeer: no SDK app validating every update, so an update kind it does not know still reaches
// the output), the version (v2 offered, v1 kept when the agent answers 1; v2-link.ts keeps the rest in
// v1's terms), the session (session-open.ts: new, resumed or loaded, then --model/--mode), the prompt
// (asked once more when the answer misses --output-schema), what each update means for the run (tool
// calls, answer text, usage; --max-turns and --max-budget-usd through run-limits.ts), permission
// questions, and how the run's first event becomes its outcome. Does not start or stop the agent, keep
// the clock or render: client-runner.ts races it against the agent's exit and the stop signals.
import type * as acp from "@agentclientprotocol/sdk";
import { RpcError, RpcPeer } from "../wire/rpc-peer.ts";
import { ACP_V1, ACP_V2, INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION } from "../wire/jsonrpc.ts";
import { type AgentEnd, type AgentExit, type AgentSpawn, describeExit, waitFor } from "./agent-process.ts";
import type { OutputSchema } from "./output-schema.ts";
import { openSession, type ResumeWanted, SessionError, SettingError, settingRequests, type WantedSettings } from "./session-open.ts";
import { ToolCallTable, type ToolCallView } from "./tool-call-table.ts";
import { type BudgetStop, budgetVerdict, RunSpend, TurnCounter, usdOf } from "./run-limits.ts";
import { type AgentRequests, initAnswerV1, offerInitialize, V2Link } from "./v2-link.ts";

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
  /** --model / --mode, applied after session/new (session-open.ts's settingRequests). */
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
   *  when the run began (run-limits.ts's RunSpend), when the agent reports it in USD. */
  cost?: { amount: number; currency: string };
  /** The session's cost as the agent last reported it (usage_update), when it does. */
  sessionCost?: { amount: number; currency: string };
  /** --output-schema: the answer's document, valid against the schema. */
  structured?: unknown;
}

/** What ended the race first: the conversation, the agent's exit, a stop signal or a run limit. */
export type Race =
  | { kind: "answer"; response: acp.PromptResponse }
  | { kind: "failed"; error: unknown; step: string }
  | { kind: "exit"; exit: AgentExit }
  | { kind: "timeout" }
  | { kind: "interrupted" }
  | { kind: "max-turns" }
  | BudgetStop;

type ClientStop = Extract<Race, { kind: "timeout" | "interrupted" | "max-turns" | "budget" | "budget-unknown" }>;

export class ClientSession {
  readonly #opts: RunPromptOptions;
  readonly #proc: AgentEnd;
  readonly #peer: RpcPeer;
  readonly #table = new ToolCallTable();
  readonly #turns = new TurnCounter();
  /** This run's spend, counted from the session's cost when it began. */
  readonly #spend: RunSpend;
  /** The request in flight, for error messages. */
  #step = "initialize";
  #sessionId: string | undefined;
  /** session/load of this id is replaying history: its updates are not this run's. */
  #replaying: string | undefined;
  #lastUsage: acp.UsageUpdate | undefined;
  /** This run's cost (USD) by the last usage_update that carried one. */
  #runCost: number | undefined;
  /** Set once the (N+1)-th turn began or the budget stopped the run: nothing after it is shown,
   *  permissions are cancelled. */
  #overLimit = false;
  /** Set once the budget was reached or found impossible to keep (an answer that beat the cancel counts too). */
  #budget: BudgetStop | undefined;
  /** The current prompt's answer text (for --output-schema). */
  #answer = "";
  /** Every session/prompt answer so far (usage is summed over them). */
  readonly #responses: acp.PromptResponse[] = [];
  /** Set when the agent answered initialize with ACP v2. */
  #v2: V2Link | undefined;
  /** --output-schema's verdict on the last answer. */
  #schema: { ok: true; document: unknown } | { ok: false; problems: string[] } | undefined;
  #limit!: (race: Race) => void;
  /** Resolves when --max-turns or --max-budget-usd stops the run. */
  readonly limitReached = new Promise<Race>((resolve) => (this.#limit = resolve));
  /** The conversation: initialize, the session, its settings, the prompt (and a --output-schema retry). */
  readonly conversation: Promise<acp.PromptResponse>;

  constructor(proc: AgentEnd, opts: RunPromptOptions) {
    this.#opts = opts;
    this.#proc = proc;
    this.#spend = new RunSpend(opts.resume !== undefined);
    this.#peer = new RpcPeer({
      input: proc.output,
      sink: proc.input,
      maxLineBytes: opts.maxLineBytes,
      onNotification: (method, raw) => this.#notified(method, raw),
      onRequest: (method, raw) => this.#asked(method, raw),
    });
    this.conversation = this.#converse();
    this.conversation.catch(() => {}); // settled through the runner's race
  }

  /** The request in flight. */
  get step(): string {
    return this.#step;
  }

  async #converse(): Promise<acp.PromptResponse> {
    const link = await this.#negotiate();
    const session = await this.#open(link);
    for (const req of settingRequests(session.sessionId, session, this.#opts.settings ?? {})) {
      this.#step = req.method;
      await link.request(req.method, req.params);
    }
    const schema = this.#opts.outputSchema;
    const answer = await this.#ask(link, session.sessionId, schema ? `${this.#opts.prompt}\n\n${schema.instruction}` : this.#opts.prompt);
    if (!this.#schema || this.#schema.ok) return answer;
    // Once more, in the same session, with what was wrong.
    this.#opts.onSchemaRetry?.(this.#schema.problems);
    return this.#ask(link, session.sessionId, schema!.retryPrompt(this.#schema.problems));
  }

  /** initialize with v2 offered: an agent that answers 1 is spoken to in v1, one that answers 2 through the v2 link. */
  async #negotiate(): Promise<AgentRequests> {
    const answered = await this.#peer.request<acp.InitializeResponse>("initialize", offerInitialize(this.#opts.clientVersion));
    if (answered?.protocolVersion === ACP_V2) this.#v2 = new V2Link(this.#peer);
    else if (answered?.protocolVersion !== ACP_V1) {
      throw new RpcError(UNSUPPORTED_PROTOCOL_VERSION, `the agent speaks ACP version ${answered?.protocolVersion}; this client speaks ${ACP_V1} and ${ACP_V2}`);
    }
    this.#init = this.#v2 ? initAnswerV1(answered) : answered;
    return this.#v2 ?? this.#peer;
  }

  #init: acp.InitializeResponse | undefined;

  async #open(link: AgentRequests): Promise<acp.NewSessionResponse> {
    const mcpServers: acp.McpServer[] = this.#opts.mcpServers.map((s) => ({
      name: s.name,
      command: s.command,
      args: s.args,
      env: Object.entries(s.env).map(([name, value]) => ({ name, value })),
    }));
    const session = await openSession({
      peer: link,
      init: this.#init!,
      agent: this.#opts.agent,
      cwd: this.#opts.cwd,
      mcpServers,
      meta: this.#opts.sessionMeta,
      resume: this.#opts.resume,
      setStep: (step) => (this.#step = step),
      replaying: (id) => (this.#replaying = id),
    });
    if (typeof session?.sessionId !== "string") throw new RpcError(INTERNAL_ERROR, `the agent answered ${this.#step} without a sessionId`);
    this.#sessionId = session.sessionId;
    return session;
  }

  async #ask(link: AgentRequests, sessionId: string, text: string): Promise<acp.PromptResponse> {
    this.#step = "session/prompt";
    this.#answer = "";
    this.#turns.nextPrompt();
    const answer = await link.request<acp.PromptResponse>("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
    if (typeof answer?.stopReason !== "string") throw new RpcError(INTERNAL_ERROR, "the agent answered session/prompt without a stopReason");
    this.#responses.push(answer);
    const schema = this.#opts.outputSchema;
    if (schema && answer.stopReason === "end_turn") this.#schema = schema.check(this.#answer);
    return answer;
  }

  #notified(method: string, raw: unknown): void {
    if (method !== "session/update") return;
    const params = raw as acp.SessionNotification;
    if (!params?.update || typeof params.update !== "object") return;
    if (this.#replaying !== undefined && params.sessionId === this.#replaying) {
      // What a replay reports of the session's spend is where this run's begins.
      if ((params.update as acp.SessionUpdate).sessionUpdate === "usage_update") this.#seeUsage(params.update as acp.UsageUpdate);
      return;
    }
    // v2's updates in v1's terms (none for what only v2 has); its idle state ends the prompt.
    const updates = this.#v2 ? this.#v2.updates(params.sessionId, params.update as Record<string, unknown>) : [params.update];
    const own = this.#sessionId === undefined || params.sessionId === this.#sessionId;
    for (const u of updates) {
      if (own) this.#update(u);
      else this.#childUsage(u);
    }
  }

  #asked(method: string, raw: unknown): { outcome: PermissionOutcome } {
    if (method !== "session/request_permission") throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method} (this client offers no fs or terminal)`);
    const params = this.#v2 && raw && typeof raw === "object" ? this.#v2.permission(raw as Record<string, unknown>) : (raw as acp.RequestPermissionRequest);
    if (!params?.toolCall || !Array.isArray(params.options)) throw new RpcError(INVALID_PARAMS, "session/request_permission needs toolCall and options");
    if (this.#overLimit) return { outcome: { outcome: "cancelled" } };
    return { outcome: this.#opts.decide(this.#table.merge(params.toolCall), params.options) };
  }

  /** One update for the output, in arrival order: counted as a turn (--max-turns), kept (usage, the
   *  answer, the tool call table) and handed on. */
  #update(u: acp.SessionUpdate): void {
    if (this.#overLimit) return;
    const maxTurns = this.#opts.maxTurns;
    if (this.#turns.see(u) && maxTurns !== undefined && this.#turns.turns > maxTurns) {
      this.#turns.turns = maxTurns;
      this.#overLimit = true;
      this.#limit({ kind: "max-turns" });
      return;
    }
    const firstUsage = u.sessionUpdate === "usage_update" && this.#lastUsage === undefined;
    if (u.sessionUpdate === "usage_update") this.#seeUsage(u);
    if (u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text") this.#answer += u.content.text;
    const call = u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update" ? this.#table.merge(u) : undefined;
    this.#opts.onUpdate(u, call);
    if (u.sessionUpdate === "usage_update") this.#judgeBudget(u, firstUsage);
  }

  /**
   * An update of another session on the connection: a subagent's, which a client showing subagents (v2's
   * baseline) gets under the child's own id. Only its cost is read: a child spends its parent's session,
   * so the cost it reports is the whole session's, and --max-budget-usd stops the run while the child runs.
   */
  #childUsage(u: acp.SessionUpdate): void {
    if (this.#overLimit || u.sessionUpdate !== "usage_update" || !this.#lastUsage) return;
    if (u.cost) this.#seeUsage({ ...this.#lastUsage, cost: u.cost });
    this.#judgeBudget(u, false);
  }

  /** --max-budget-usd's verdict on a usage_update: a stop is handled as at --max-turns (nothing after it
   *  is shown, permission questions are answered `cancelled`). */
  #judgeBudget(u: acp.UsageUpdate, first: boolean): void {
    const limit = this.#opts.maxBudgetUsd;
    const verdict = limit !== undefined ? budgetVerdict(u, first, limit, this.#runCost ?? 0) : undefined;
    if (!verdict) return;
    this.#overLimit = true;
    this.#budget = verdict;
    this.#limit(verdict);
  }

  /** A usage_update of the session: the last one kept, and this run's cost by it. */
  #seeUsage(u: acp.UsageUpdate): void {
    this.#lastUsage = u;
    const usd = usdOf(u);
    if (usd !== undefined) this.#runCost = this.#spend.see(usd);
  }

  /** The outcome of the run, from what ended the race first (cancelling the turn when the client stopped it). */
  async settle(first: Race): Promise<RunOutcome> {
    // The turn ended on its own just as the budget was reached: the budget still decides the outcome.
    if (first.kind === "answer" && this.#budget) return this.#stopped(this.#budget);
    if (first.kind === "answer") return this.#answered(first.response);
    if (first.kind === "timeout" || first.kind === "interrupted" || first.kind === "max-turns" || first.kind === "budget" || first.kind === "budget-unknown") {
      if (this.#sessionId !== undefined) {
        this.#peer.notify("session/cancel", { sessionId: this.#sessionId });
        // A well-behaved agent answers `cancelled` at once; give it CANCEL_WAIT_S to wind down its own
        // tools (INTERRUPT_WAIT_S after Ctrl-C: a person is waiting).
        const waits = this.#opts.waits;
        await waitFor(this.conversation.catch(() => undefined), first.kind === "interrupted" ? waits.interruptMs : waits.cancelMs);
      }
      return this.#stopped(first);
    }
    if (first.kind === "failed") return this.#failed(first.error, first.step);
    // The process exited; an answer already on its way still counts.
    const late = await waitFor(
      this.conversation.then((r) => r, () => undefined),
      100,
    );
    if (late) return this.#answered(late);
    return this.#died(first.exit, this.#step);
  }

  async #failed(error: unknown, step: string): Promise<RunOutcome> {
    if (error instanceof SettingError) return { kind: "setting", message: error.message };
    if (error instanceof SessionError) return { kind: "session", message: error.message };
    const known = agentError(error, step);
    if (known) return known;
    // Not an error answer: the connection broke. If the process died, say that instead.
    const exit = await waitFor(this.#proc.exited, 1000);
    if (exit) return this.#died(exit, step);
    const message = error instanceof Error ? error.message : String(error);
    return { kind: "agent-error", message: `connection failed: ${message}`, step };
  }

  /** A run the client stopped: by the clock, Ctrl-C, --max-turns or --max-budget-usd. */
  #stopped(first: ClientStop): RunOutcome {
    const limit = this.#opts.maxBudgetUsd ?? 0;
    switch (first.kind) {
      case "max-turns":
        return { kind: "max-turns", limit: this.#opts.maxTurns ?? 0 };
      case "budget": {
        const session = costOf(this.#lastUsage)!;
        const spent = { amount: this.#runCost ?? session.amount, currency: "USD" };
        const usage = usageOf(this.#responses, this.#lastUsage);
        return { kind: "budget", limit, spent, session, ...(usage ? { usage } : {}) };
      }
      case "budget-unknown":
        return { kind: "budget-unknown", limit, why: first.why };
      default:
        return { kind: first.kind };
    }
  }

  /** The last answer's outcome: its stop reason, unless it ended its turn without the schema's document. */
  #answered(response: acp.PromptResponse): RunOutcome {
    const usage = usageOf(this.#responses, this.#lastUsage);
    if (response.stopReason === "end_turn" && this.#schema && !this.#schema.ok) return { kind: "schema", problems: this.#schema.problems, usage };
    return { kind: "stopped", stopReason: response.stopReason, usage };
  }

  #died(exit: AgentExit, step: string): RunOutcome {
    return { kind: "died", message: `the agent ${describeExit(exit)} during ${step}`, stderrTail: this.#proc.stderrTail() };
  }

  /** The run's result around its outcome: tool calls, the session, turns, costs and the schema's document. */
  result(outcome: RunOutcome, durationMs: number): RunResult {
    const result: RunResult = { outcome, toolCalls: this.#table.list(), sessionId: this.#sessionId, numTurns: this.#turns.turns, durationMs };
    const sessionCost = costOf(this.#lastUsage);
    if (sessionCost) result.sessionCost = sessionCost;
    if (this.#runCost !== undefined) result.cost = { amount: this.#runCost, currency: "USD" };
    if (outcome.kind === "stopped" && outcome.stopReason === "end_turn" && this.#schema?.ok) result.structured = this.#schema.document;
    return result;
  }

  close(): void {
    this.#peer.close();
  }
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
