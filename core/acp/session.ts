// Owns the agent's sessions: creation (MCP servers + the private `dev` server, system prompt, policy),
// one prompt at a time per session, cancellation through a per-session AbortController, modes, close.
// Does not speak JSON-RPC (agent-server.ts) and does not run the turn itself (agent/loop.ts).
import { randomUUID } from "node:crypto";
import type { ContentBlock, McpServer, SessionModeState, SessionUpdate, StopReason } from "@agentclientprotocol/sdk";
import type { McpServerEntry, PermissionMode, PermissionRule } from "../config.ts";
import { PERMISSION_MODES } from "../config.ts";
import { LimitError, type Limits } from "../limits.ts";
import type { LlmProvider, Message } from "../llm/types.ts";
import type { McpServerSpec, McpSessionTools } from "../mcp/types.ts";
import { log } from "../log.ts";
import { createPolicy, type Policy } from "../policy/policy.ts";
import { runTurn, TurnError } from "../agent/loop.ts";
import { buildSystemPrompt } from "../agent/system-prompt.ts";
import type { PermissionAnswer, PermissionAsk } from "../agent/tool-calls.ts";
import { createSemaphore, type Semaphore } from "../semaphore.ts";
import { AcpError, checkCwd, configServerSpecs, convertMcpServers, convertPrompt, INTERNAL_ERROR, INVALID_PARAMS, SESSION_NOT_FOUND } from "./convert.ts";

export interface McpPoolLike {
  openSession(specs: McpServerSpec[], opts: { cwd: string }): Promise<McpSessionTools>;
}

export interface SessionHost {
  pool: McpPoolLike;
  provider: LlmProvider;
  model: string;
  maxTokens: number;
  contextWindow: number;
  mode: PermissionMode;
  rules: PermissionRule[];
  systemPrompt?: string;
  limits: Limits;
  /** How to start the default `dev` tool server (`tendril dev-mcp`); undefined = none. */
  devServer?: { command: string; args: string[]; env?: Record<string, string> };
  /** `[[mcp]]` servers of the config file: every session gets them, after `dev` and before the client's. */
  configServers?: McpServerEntry[];
  home?: string;
}

export interface PromptIo {
  emit(update: SessionUpdate): void;
  askPermission(ask: PermissionAsk, signal: AbortSignal): Promise<PermissionAnswer>;
  /** Aborts when the prompt request itself is cancelled or the connection closes. */
  signal: AbortSignal;
}

const MODE_INFO: Record<PermissionMode, { name: string; description: string }> = {
  ask: { name: "Ask", description: "Ask before any tool that may change things (rules and read-only tools decide first)" },
  "auto-edit": { name: "Auto-edit", description: "Edit files without asking; ask before commands" },
  yolo: { name: "Yolo", description: "Run every tool without asking (deny rules still apply)" },
  "read-only": { name: "Read-only", description: "Only read-only tools run; everything else is denied" },
};

export function modeState(current: PermissionMode): SessionModeState {
  return { currentModeId: current, availableModes: PERMISSION_MODES.map((id) => ({ id, ...MODE_INFO[id] })) };
}

interface Session {
  id: string;
  cwd: string;
  tools: McpSessionTools;
  policy: Policy;
  system: string;
  history: Message[];
  turn?: AbortController;
}

interface StartSlot {
  /** Set once the pool's start owns the slot (it releases it when it settles). */
  handedOff: boolean;
  release: () => void;
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (!done) (done = true), fn();
  };
}

export class SessionManager {
  readonly #sessions = new Map<string, Session>();
  /** Session starts spawn servers: a burst of session/new waits in line instead of forking at once. */
  readonly #starts: Semaphore;
  #closed = false;

  constructor(private readonly host: SessionHost) {
    this.#starts = createSemaphore(host.limits.MAX_SESSION_STARTS);
  }

  /** session/new: waits its turn among MAX_SESSION_STARTS, all within SESSION_START_TIMEOUT_S. */
  async newSession(cwd: string, servers: McpServer[], meta?: Record<string, unknown> | null) {
    checkCwd(cwd);
    const { limits } = this.host;
    const deadline = AbortSignal.timeout(limits.SESSION_START_TIMEOUT_S * 1000);
    const held = await this.#starts.acquire(deadline);
    if (!held || deadline.aborted) {
      if (held) this.#starts.release();
      throw new AcpError(
        INTERNAL_ERROR,
        `session could not start within ${limits.SESSION_START_TIMEOUT_S} s (SESSION_START_TIMEOUT_S): ` +
          `${this.#starts.held} sessions were starting and ${this.#starts.waiting} more waiting (MAX_SESSION_STARTS is ${limits.MAX_SESSION_STARTS}); try again`,
      );
    }
    // The slot is held until the servers' start settles, even when this request stops waiting for it:
    // abandoned starts still count, so a burst can never fork more than MAX_SESSION_STARTS at once.
    const slot = { handedOff: false, release: once(() => this.#starts.release()) };
    try {
      return await this.#startSession(cwd, servers, meta, deadline, slot);
    } finally {
      if (!slot.handedOff) slot.release();
    }
  }

  async #startSession(cwd: string, servers: McpServer[], meta: Record<string, unknown> | null | undefined, deadline: AbortSignal, slot: StartSlot) {
    const { limits } = this.host;
    const specs = [...configServerSpecs(this.host.configServers ?? [], cwd), ...convertMcpServers(servers, cwd)];
    if (this.host.devServer) {
      const d = this.host.devServer;
      specs.unshift({ name: "dev", transport: "stdio", command: d.command, args: [...d.args, "dev-mcp", "--root", cwd], env: d.env ?? {}, cwd, private: true });
    }
    const tools = await this.#openTools(specs, cwd, deadline, slot);
    const custom = typeof meta?.systemPrompt === "string" ? meta.systemPrompt : this.host.systemPrompt;
    const system = custom ?? buildSystemPrompt({
      cwd,
      home: this.host.home,
      instructions: tools.instructions(),
      maxAgentsBytes: this.host.limits.MAX_AGENTS_MD_BYTES,
      maxInstructionsBytes: this.host.limits.MAX_SERVER_INSTRUCTIONS_BYTES,
    });
    const policy = createPolicy({ rules: this.host.rules, mode: this.host.mode, workspace: cwd });
    const session: Session = { id: randomUUID(), cwd, tools, policy, system, history: [] };
    if (this.#closed) {
      void tools.close();
      throw new AcpError(INTERNAL_ERROR, "the agent is shutting down");
    }
    this.#sessions.set(session.id, session);
    log.info("session started", { session: session.id, cwd, servers: specs.map((s) => s.name).join(",") });
    return { sessionId: session.id, modes: modeState(policy.mode) };
  }

  /**
   * Opens the servers; a pool that overstays its own init timeout (or the session's start deadline) is
   * abandoned, and closed when it returns. Failures are -32603 with the cause (clients retry those).
   */
  async #openTools(specs: McpServerSpec[], cwd: string, deadline: AbortSignal, slot: StartSlot): Promise<McpSessionTools> {
    const graceMs = this.host.limits.MCP_INIT_TIMEOUT_S * 1000 + 2000;
    const opening = this.host.pool.openSession(specs, { cwd });
    slot.handedOff = true;
    opening.then(slot.release, slot.release);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onDeadline: (() => void) | undefined;
    const overdue = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`MCP servers did not start within ${graceMs} ms`)), graceMs);
      onDeadline = () => reject(new Error(`session could not start within ${this.host.limits.SESSION_START_TIMEOUT_S} s (SESSION_START_TIMEOUT_S)`));
      if (deadline.aborted) onDeadline();
      else deadline.addEventListener("abort", onDeadline, { once: true });
    });
    try {
      return await Promise.race([opening, overdue]);
    } catch (err) {
      opening.then(
        (t) => t.close(),
        (e: unknown) => log.debug("abandoned MCP start failed too", { error: e }),
      );
      const message = err instanceof Error ? err.message : String(err);
      // The pool owns the server-count bound; too many servers is the request's fault, not ours.
      if (err instanceof LimitError) throw new AcpError(INVALID_PARAMS, message);
      throw new AcpError(INTERNAL_ERROR, message, { cause: message });
    } finally {
      clearTimeout(timer);
      if (onDeadline) deadline.removeEventListener("abort", onDeadline);
    }
  }

  #get(id: string): Session {
    const s = this.#sessions.get(id);
    if (!s) throw new AcpError(SESSION_NOT_FOUND, `unknown session: ${id}`, { sessionId: id });
    return s;
  }

  async prompt(id: string, blocks: ContentBlock[], io: PromptIo): Promise<StopReason> {
    const s = this.#get(id);
    if (s.turn) throw new AcpError(INVALID_PARAMS, `session ${id} is busy with another prompt; wait for it or send session/cancel`);
    const parts = convertPrompt(blocks, this.host.limits.MAX_PROMPT_BYTES);
    const turn = new AbortController();
    s.turn = turn;
    const onRequestAbort = () => turn.abort();
    io.signal.addEventListener("abort", onRequestAbort, { once: true });
    // Updates after the turn's answer would break "every update before the response": close the tap.
    let open = true;
    const emit = (u: SessionUpdate) => open && io.emit(u);
    const before = s.history.length;
    s.history.push({ role: "user", content: parts });
    try {
      const h = this.host;
      return await runTurn(
        { provider: h.provider, model: h.model, maxTokens: h.maxTokens, contextWindow: h.contextWindow, system: s.system, tools: s.tools, policy: s.policy, cwd: s.cwd, limits: h.limits, emit, askPermission: io.askPermission },
        s.history,
        turn.signal,
      );
    } catch (err) {
      if (!(err instanceof TurnError)) throw err;
      // Failed before the model said anything: history is as it was, so a client that resends the
      // prompt does not send it twice.
      if (s.history.length === before + 1) s.history.length = before;
      throw new AcpError(INTERNAL_ERROR, err.message, { cause: err.message, kind: err.llm.kind, status: err.llm.status });
    } finally {
      open = false;
      io.signal.removeEventListener("abort", onRequestAbort);
      if (s.turn === turn) s.turn = undefined;
    }
  }

  cancel(id: string): void {
    this.#sessions.get(id)?.turn?.abort();
  }

  setMode(id: string, modeId: string): void {
    const s = this.#get(id);
    if (!PERMISSION_MODES.includes(modeId as PermissionMode)) {
      throw new AcpError(INVALID_PARAMS, `unknown mode: ${modeId} (modes: ${PERMISSION_MODES.join(", ")})`);
    }
    s.policy.setMode(modeId as PermissionMode);
  }

  /** Cancels every turn and releases every session's servers (private ones die as process groups). */
  async closeAll(): Promise<void> {
    this.#closed = true;
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    for (const s of all) s.turn?.abort();
    await Promise.allSettled(all.map((s) => s.tools.close()));
  }
}
