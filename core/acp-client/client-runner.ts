// Owns the ACP client side of `tendril prompt`: spawn an agent, initialize, session/new, one
// session/prompt, permissions, timeout → cancel → kill. It reads the wire itself (RpcPeer): no SDK
// app validating every update, and an update kind it does not know still reaches the output.
// Does not render anything or choose a policy: updates and permission questions go to callbacks.
import type * as acp from "@agentclientprotocol/sdk";
import { RpcError, RpcPeer } from "../wire/rpc-peer.ts";
import { ACP_PROTOCOL_VERSION, AUTH_REQUIRED, INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION } from "../wire/jsonrpc.ts";
import { type AgentEnd, AgentProcess, type AgentExit, type AgentSpawn, describeExit, waitFor } from "./agent-process.ts";
import { SettingError, settingRequests, type WantedSettings } from "./session-settings.ts";

export type { AgentEnd, AgentExit, AgentSpawn } from "./agent-process.ts";
export type { PermissionOption, SessionUpdate, StopReason } from "@agentclientprotocol/sdk";

export interface McpStdioServer {
  name: string;
  /** Absolute: ACP requires it. */
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** A tool call as the updates so far describe it (tool_call merged with its tool_call_updates). */
export interface ToolCallView {
  id: string;
  title: string;
  kind: string;
  status: string;
  /** The agent's own tool name when it declares one (`_meta` or rawInput), e.g. `dev__shell`. */
  name?: string;
  rawInput?: unknown;
  meta?: Record<string, unknown>;
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
  /** --model / --mode, applied after session/new (session-settings.ts). */
  settings?: WantedSettings;
  /** session/new `_meta` (e.g. `systemPrompt`). */
  sessionMeta?: Record<string, unknown>;
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
  | { kind: "timeout" }
  | { kind: "interrupted" }
  | { kind: "max-turns"; limit: number }
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
}

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

/** The ACP protocol version this client speaks. */
const PROTOCOL_VERSION = ACP_PROTOCOL_VERSION;

// ACP tool calls carry no tool name; agents that share one put it in `_meta` (flat, or one level down
// as in `{vendor: {toolName}}`) or in rawInput.
function declaredToolName(call: ToolCallView): string | undefined {
  const pick = (o: unknown, keys: string[]): string | undefined => {
    if (!o || typeof o !== "object") return undefined;
    for (const k of keys) {
      const v = (o as Record<string, unknown>)[k];
      if (typeof v === "string" && v !== "") return v;
    }
    return undefined;
  };
  const meta = call.meta;
  const nested = meta ? Object.values(meta).map((v) => pick(v, ["toolName"])).find((v) => v !== undefined) : undefined;
  return pick(meta, ["toolName", "tool", "name"]) ?? nested ?? pick(call.rawInput, ["toolName", "tool"]);
}

/** Merges tool_call / tool_call_update / permission requests into one view per id. */
class ToolCallTable {
  private readonly calls = new Map<string, ToolCallView>();

  merge(u: acp.ToolCallUpdate | acp.ToolCall): ToolCallView {
    const prev = this.calls.get(u.toolCallId);
    const next: ToolCallView = prev ? { ...prev } : { id: u.toolCallId, title: "", kind: "other", status: "pending" };
    if (u.title != null) next.title = u.title;
    if (u.kind != null) next.kind = u.kind;
    if (u.status != null) next.status = u.status;
    if (u.rawInput != null) next.rawInput = u.rawInput;
    if (u._meta != null) next.meta = { ...next.meta, ...u._meta };
    const name = declaredToolName(next);
    if (name !== undefined) next.name = name;
    this.calls.set(u.toolCallId, next);
    return next;
  }

  list(): ToolCallView[] {
    return [...this.calls.values()];
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

function usageOf(response: acp.PromptResponse, lastUsage: acp.UsageUpdate | undefined): Record<string, unknown> | undefined {
  const fromResponse = (response as { usage?: Record<string, unknown> | null }).usage ?? undefined;
  if (!fromResponse && !lastUsage) return undefined;
  const out: Record<string, unknown> = { ...fromResponse };
  delete out._meta;
  if (lastUsage) {
    out.contextUsed = lastUsage.used;
    out.contextSize = lastUsage.size;
    if (lastUsage.cost) out.cost = lastUsage.cost;
  }
  return out;
}

type Race =
  | { kind: "answer"; response: acp.PromptResponse }
  | { kind: "failed"; error: unknown; step: string }
  | { kind: "exit"; exit: AgentExit }
  | { kind: "timeout" }
  | { kind: "interrupted" }
  | { kind: "max-turns" };

/** What the run learns as it goes; handlers write it synchronously in arrival order. */
interface RunState {
  table: ToolCallTable;
  step: string;
  sessionId?: string;
  lastUsage?: acp.UsageUpdate;
  turns: TurnCounter;
  /** Set once the (N+1)-th turn began: nothing after it is shown, permissions are cancelled. */
  overLimit: boolean;
  onTurnLimit: () => void;
}

function connect(proc: AgentEnd, opts: RunPromptOptions, state: RunState): RpcPeer {
  return new RpcPeer({
    input: proc.output,
    sink: proc.input,
    maxLineBytes: opts.maxLineBytes,
    onNotification(method, raw) {
      if (method !== "session/update") return;
      const params = raw as acp.SessionNotification;
      if (!params?.update || typeof params.update !== "object") return;
      if (state.sessionId !== undefined && params.sessionId !== state.sessionId) return;
      const u = params.update;
      if (state.overLimit) return;
      if (state.turns.see(u) && opts.maxTurns !== undefined && state.turns.turns > opts.maxTurns) {
        state.turns.turns = opts.maxTurns;
        state.overLimit = true;
        state.onTurnLimit();
        return;
      }
      if (u.sessionUpdate === "usage_update") state.lastUsage = u;
      const call = u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update" ? state.table.merge(u) : undefined;
      opts.onUpdate(u, call);
    },
    onRequest(method, raw) {
      if (method !== "session/request_permission") throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method} (this client offers no fs or terminal)`);
      const params = raw as acp.RequestPermissionRequest;
      if (!params?.toolCall || !Array.isArray(params.options)) throw new RpcError(INVALID_PARAMS, "session/request_permission needs toolCall and options");
      if (state.overLimit) return { outcome: { outcome: "cancelled" } };
      return { outcome: opts.decide(state.table.merge(params.toolCall), params.options) };
    },
  });
}

async function converse(peer: RpcPeer, opts: RunPromptOptions, state: RunState): Promise<acp.PromptResponse> {
  const init = await peer.request<acp.InitializeResponse>("initialize", {
    protocolVersion: PROTOCOL_VERSION,
    // auth.terminal: a `terminal` method is not run here, but its command is named for the user to run once.
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, auth: { terminal: true } },
    clientInfo: { name: "tendril-prompt", version: opts.clientVersion },
  });
  if (init?.protocolVersion !== PROTOCOL_VERSION) {
    throw new RpcError(UNSUPPORTED_PROTOCOL_VERSION, `the agent speaks ACP version ${init?.protocolVersion}; this client speaks ${PROTOCOL_VERSION}`);
  }
  state.step = "session/new";
  const mcpServers: acp.McpServer[] = opts.mcpServers.map((s) => ({
    name: s.name,
    command: s.command,
    args: s.args,
    env: Object.entries(s.env).map(([name, value]) => ({ name, value })),
  }));
  const session = await newSession(peer, opts, state, init, mcpServers);
  if (typeof session?.sessionId !== "string") throw new RpcError(INTERNAL_ERROR, "the agent answered session/new without a sessionId");
  state.sessionId = session.sessionId;
  for (const req of settingRequests(session.sessionId, session, opts.settings ?? {})) {
    state.step = req.method;
    await peer.request(req.method, req.params);
  }
  state.step = "session/prompt";
  const answer = await peer.request<acp.PromptResponse>("session/prompt", {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: opts.prompt }],
  });
  if (typeof answer?.stopReason !== "string") throw new RpcError(INTERNAL_ERROR, "the agent answered session/prompt without a stopReason");
  return answer;
}

/** An auth method as agents advertise it: `agent` (the default), `terminal` (args, env to add to the
 *  agent's command) or the older `env_var` (the variables it reads). */
interface AdvertisedAuth {
  id: string;
  name?: string;
  type?: string;
  varName?: string;
  vars?: { name: string }[];
  args?: string[];
  env?: Record<string, string>;
}

/** ACP's auth_required code. */

function varsOf(m: AdvertisedAuth): string[] {
  return [...(m.varName ? [m.varName] : []), ...(m.vars ?? []).map((v) => v.name)];
}

function shellWord(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, "'\\''")}'`;
}

/** The command a `terminal` method asks the user to run: the agent's own, plus its env and args. */
function terminalCommand(agent: AgentSpawn, m: AdvertisedAuth): string {
  const env = Object.entries(m.env ?? {}).map(([k, v]) => `${k}=${shellWord(v)}`);
  return [...env, agent.command, ...agent.args, ...(Array.isArray(m.args) ? m.args : [])].map((w, i) => (i < env.length ? w : shellWord(w))).join(" ");
}

function isAuthRequired(err: unknown): err is RpcError {
  return err instanceof RpcError && (err.code === AUTH_REQUIRED || /auth/i.test(err.message));
}

/**
 * session/new, authenticating first when the agent requires it: an `env_var` method whose variables
 * are all set in the agent's environment, else an agent-handled method; when only `terminal`
 * methods are left (or the agent method fails), an error naming the command to run once; none
 * usable → an error that names the methods and the variables they need.
 */
async function newSession(
  peer: RpcPeer,
  opts: RunPromptOptions,
  state: RunState,
  init: acp.InitializeResponse,
  mcpServers: acp.McpServer[],
): Promise<acp.NewSessionResponse> {
  const ask = () =>
    peer.request<acp.NewSessionResponse>("session/new", { cwd: opts.cwd, mcpServers, ...(opts.sessionMeta ? { _meta: opts.sessionMeta } : {}) });
  try {
    return await ask();
  } catch (err) {
    const methods = ((init.authMethods ?? []) as AdvertisedAuth[]).filter((m) => m && typeof m.id === "string");
    if (!isAuthRequired(err) || methods.length === 0) throw err;
    state.step = "authenticate";
    const terminal = methods.find((m) => m.type === "terminal");
    const runOnce = terminal ? `run once in a terminal: ${terminalCommand(opts.agent, terminal)}` : undefined;
    const ready = methods.find((m) => m.type === "env_var" && varsOf(m).length > 0 && varsOf(m).every((v) => opts.agent.env[v]));
    const method = ready ?? methods.find((m) => m.type === undefined || m.type === "agent");
    if (!method) {
      if (runOnce) throw new RpcError(err.code, `the agent needs a login first: ${runOnce}`);
      const list = methods.map((m) => `${m.id}${varsOf(m).length ? ` (set ${varsOf(m).join(", ")})` : ` (${m.type ?? "agent"})`}`).join("; ");
      throw new RpcError(err.code, `the agent requires authentication and no advertised method can be used here: ${list}`);
    }
    try {
      await peer.request("authenticate", { methodId: method.id });
    } catch (authErr) {
      // The terminal method's command, unless the agent's own message already names it.
      const named = terminal?.args?.length ? authErr instanceof Error && authErr.message.includes(terminal.args.join(" ")) : false;
      if (runOnce && !named && isAuthRequired(authErr)) throw new RpcError(authErr.code, `${authErr.message}; or ${runOnce}`);
      throw authErr;
    }
    state.step = "session/new";
    return ask();
  }
}

/** Runs one prompt against an agent command and always leaves the agent's process group dead. */
export async function runPrompt(opts: RunPromptOptions): Promise<RunResult> {
  const t0 = performance.now();
  let turnLimit!: () => void;
  const limitReached = new Promise<Race>((resolve) => (turnLimit = () => resolve({ kind: "max-turns" })));
  const state: RunState = { table: new ToolCallTable(), step: "initialize", turns: new TurnCounter(), overLimit: false, onTurnLimit: () => turnLimit() };
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
    const outcome = await settle(first, { conversation, proc, conn, state, waits: opts.waits, maxTurns: opts.maxTurns });
    const durationMs = Math.round(performance.now() - t0);
    return { outcome, toolCalls: state.table.list(), sessionId: state.sessionId, numTurns: state.turns.turns, durationMs };
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
}

async function settle(first: Race, cx: SettleContext): Promise<RunOutcome> {
  if (first.kind === "answer") {
    return { kind: "stopped", stopReason: first.response.stopReason, usage: usageOf(first.response, cx.state.lastUsage) };
  }
  if (first.kind === "timeout" || first.kind === "interrupted" || first.kind === "max-turns") {
    const id = cx.state.sessionId;
    if (id !== undefined) {
      cx.conn.notify("session/cancel", { sessionId: id });
      // A well-behaved agent answers `cancelled` at once; give it CANCEL_WAIT_S to wind down its own
      // tools (INTERRUPT_WAIT_S after Ctrl-C: a person is waiting).
      await waitFor(cx.conversation.catch(() => undefined), first.kind === "interrupted" ? cx.waits.interruptMs : cx.waits.cancelMs);
    }
    return first.kind === "max-turns" ? { kind: "max-turns", limit: cx.maxTurns ?? 0 } : { kind: first.kind };
  }
  if (first.kind === "failed") {
    if (first.error instanceof SettingError) return { kind: "setting", message: first.error.message };
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
  if (late) return { kind: "stopped", stopReason: late.stopReason, usage: usageOf(late, cx.state.lastUsage) };
  return died(first.exit, cx.proc, cx.state.step);
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
