// Owns the agent's table of live sessions: creation and loading (MCP servers + the private `dev`
// server, system prompt, policy, history), one prompt at a time per session, cancellation, listing,
// closing and deleting, and recording each live session to its file. Does not speak JSON-RPC
// (agent-server.ts), open a turn (session-turn.ts), run slash commands (session-commands.ts), apply
// config options (session-config.ts), start tool servers (tool-server-starts.ts) or word notices (notices.ts).
import type { AvailableCommand, ContentBlock, McpServer, SessionConfigOption, SessionUpdate } from "@agentclientprotocol/sdk";
import type { PermissionMode } from "../policy/modes.ts";
import type { SandboxMode } from "../sandbox-modes.ts";
import type { Message, ThoughtLevel } from "../llm/types.ts";
import { log } from "../log.ts";
import { randomId } from "../ids.ts";
import { createPolicy } from "../policy/policy.ts";
import { emptyTotals, runTurn, TurnError } from "../agent/loop.ts";
import { ContextMeter } from "../agent/handoff.ts";
import { buildSystemPrompt } from "../agent/system-prompt.ts";
import { withTurnContext } from "../agent/turn-context.ts";
import { isSessionId } from "../agent/session-store.ts";
import { emptySessionUsage, type SessionUsage } from "../llm/prices.ts";
import { costNow } from "../agent/session-cost.ts";
import { AcpError, INTERNAL_ERROR, INVALID_PARAMS, SESSION_NOT_FOUND } from "./acp-error.ts";
import { configServerSpecs, convertMcpServers, convertPrompt } from "./convert.ts";
import { ToolServerStarts } from "./tool-server-starts.ts";
import { checkCwd, type NewSessionParams } from "./params.ts";
import { SessionRecorder, titleOf } from "./session-recorder.ts";
import { commandOf, initPrompt, promptCommandOf } from "./commands.ts";
import { ModelChoices } from "./model-choice.ts";
import type { ClientLink, PromptIo, SessionHost } from "./session-host.ts";
import { serverNotice } from "./notices.ts";
import type { LiveSession } from "./live-session.ts";
import { SessionConfig } from "./session-config.ts";
import { openTurn, type TurnAnswer, turnDeps } from "./session-turn.ts";
import { SteeringInbox } from "./steering.ts";
import { subagentHost } from "./subagents.ts";
import { replayUpdates } from "./subagent-view.ts";
import { type CommandContext, expandMcpPrompt, offerCommands, runCommand, sendCommandChanges } from "./session-commands.ts";

/** What session/new, load, resume and fork declare, and the connection that asks. */
export interface SessionRequest {
  cwd: string;
  servers: McpServer[];
  /** The request's `_meta` (`systemPrompt` is read from it). */
  meta?: Record<string, unknown> | null;
  client?: ClientLink;
  /** More workspace roots besides `cwd`; none when undefined. */
  additionalDirectories?: readonly string[];
}

/** A parsed session/new (load, resume, fork) as the manager takes it, from the connection `client`. */
export function sessionRequest(p: NewSessionParams, client?: ClientLink): SessionRequest {
  return { cwd: p.cwd, servers: p.mcpServers, meta: p._meta, client, additionalDirectories: p.additionalDirectories };
}

/** session/load and session/resume: the session, and (load only) where its history is replayed. */
export interface LoadRequest extends SessionRequest {
  id: string;
  /** Sends one replayed update, of the session or (`sessionId`) of one of its subagents. */
  replay?: (u: SessionUpdate, sessionId?: string) => void;
}

interface OpenOptions extends SessionRequest {
  id: string;
  history?: Message[];
  title?: string | null;
  mode?: PermissionMode;
  model?: string;
  thoughtLevel?: ThoughtLevel;
  /** The totals so far (a loaded or forked session's). */
  usage?: SessionUsage;
  /** The dev shell's sandbox, when it is not the configured one (a loaded or forked session's). */
  sandboxMode?: SandboxMode;
}

/** What session/load and session/resume answer. */
type LoadAnswer = Awaited<ReturnType<SessionConfig["describe"]>>;

const LIST_PAGE = 100; // sessions per session/list page

export class SessionManager {
  readonly #sessions = new Map<string, LiveSession>();
  /** Loads and resumes in flight, by session id: what was asked and its answer (one open per id). */
  readonly #opening = new Map<string, { ask: string; answer: Promise<LoadAnswer> }>();
  readonly #starts: ToolServerStarts;
  readonly #config: SessionConfig;
  /** What turns and commands reach of the manager: the host, and set_mode / set_config_option by id. */
  readonly #context: CommandContext;
  #closed = false;

  constructor(private readonly host: SessionHost) {
    this.#starts = new ToolServerStarts(host.pool, host.limits);
    const models = new ModelChoices(host.models ?? [], host.provider, host.limits.MODEL_LIST_TIMEOUT_S, host.modelList ?? "eager");
    this.#config = new SessionConfig(host, models, (s) => this.#isLive(s));
    const subagents = subagentHost(host, models, this.#sessions);
    this.#context = { host, subagents, setMode: (id, modeId) => this.setMode(id, modeId), setConfigOption: (id, configId, value) => this.setConfigOption(id, configId, value) };
  }

  /** session/new. */
  async newSession(r: SessionRequest) {
    const { cwd } = r;
    checkCwd(cwd, "session/new");
    const s = await this.#open({ ...r, id: randomId() });
    const store = this.host.store;
    if (store) {
      const dirs = s.additionalDirectories.length > 0 ? { additionalDirectories: [...s.additionalDirectories] } : {};
      const file = store.create({ id: s.id, cwd, ...dirs, created: new Date().toISOString(), title: null, model: this.host.model, mode: s.policy.mode });
      s.recorder = new SessionRecorder(file, s.history, false);
    }
    return { sessionId: s.id, ...(await this.#config.describe(s)) };
  }

  /**
   * session/load (`replay` given: the history is sent as the updates the client saw live, before
   * the answer) and session/resume (no replay). The servers are the ones this request declares.
   *
   * One open per id at a time. A second load/resume of an id while one is opening it waits for it:
   * when it asks for the same thing (same method, cwd, servers, _meta) it gets that open's answer
   * and the session it opened — an editor that sends the request twice (two panes, a retry) means
   * one session, so its servers start once, its file is opened once and its history replayed once;
   * when it asks for something else it then reopens the session with its own declaration, as a
   * load sent after the first answer would. Two opens side by side would leave one session's
   * servers running with no session to close them, and two recorders appending to one file.
   */
  loadSession(r: LoadRequest): Promise<LoadAnswer> {
    const { id, replay } = r;
    checkCwd(r.cwd, replay ? "session/load" : "session/resume");
    const ask = JSON.stringify([replay ? "load" : "resume", r.cwd, r.servers, r.meta ?? null, r.additionalDirectories ?? []]);
    const before = this.#opening.get(id);
    if (before?.ask === ask) return before.answer;
    const answer = (async () => {
      // The first open's failure is its own caller's to report; this one only waits it out.
      if (before) await before.answer.catch((err) => log.debug("an earlier open of this session failed", { session: id, error: err }));
      return this.#load(r);
    })();
    const entry = { ask, answer };
    this.#opening.set(id, entry);
    const done = () => void (this.#opening.get(id) === entry && this.#opening.delete(id));
    answer.then(done, done);
    return answer;
  }

  async #load(r: LoadRequest): Promise<LoadAnswer> {
    const { id, replay, ...request } = r;
    const live = this.#sessions.get(id);
    if (live?.turn) throw new AcpError(INVALID_PARAMS, `session ${id} is busy with a prompt; cancel it first`);
    const saved = this.host.store && isSessionId(id) ? this.host.store.load(id) : undefined;
    if (!saved) throw new AcpError(SESSION_NOT_FOUND, `unknown session: ${id} (no saved session with this id)`, { sessionId: id });
    if (live) await this.#drop(live);
    const settings = await this.#config.restored(saved);
    // A file from before totals were saved: its tokens are not known, so neither is its cost.
    const usage = saved.usage ?? (saved.history.length > 0 ? { ...emptySessionUsage(), cost: null } : undefined);
    const s = await this.#open({ ...request, id, history: saved.history, ...settings, title: saved.title, ...(usage ? { usage } : {}) });
    s.recorder = new SessionRecorder(this.host.store!.reopen(id), s.history, saved.title !== null);
    if (replay) replayUpdates(saved.updates, r.client?.caps, replay);
    return this.#config.describe(s);
  }

  /** session/list: newest first, optionally one workspace's, in pages. */
  listSessions(cwd?: string | null, cursor?: string | null) {
    const all = this.host.store?.list(cwd ?? undefined) ?? [];
    const start = cursor ? Number(cursor) : 0;
    if (!Number.isSafeInteger(start) || start < 0) throw new AcpError(INVALID_PARAMS, `cursor ${JSON.stringify(cursor)} is not one this agent gave`);
    const sessions = all.slice(start, start + LIST_PAGE);
    const next = start + LIST_PAGE < all.length ? String(start + LIST_PAGE) : undefined;
    return next ? { sessions, nextCursor: next } : { sessions };
  }

  /** session/close: cancels a running turn and stops the session's servers; its file stays. */
  async closeSession(id: string): Promise<void> {
    const s = this.#own(id);
    await this.#drop(s);
  }

  /**
   * session/fork: a new session whose history is a copy of `id`'s (its saved file copied under a new
   * id, or a live session's history where nothing is saved), in `cwd` with the servers this request
   * declares. The original is never written. A session whose prompt is running, or that is being
   * loaded, is refused: its history is mid-turn.
   */
  async forkSession(id: string, r: SessionRequest) {
    const { cwd } = r;
    checkCwd(cwd, "session/fork");
    const live = this.#sessions.get(id);
    if (live) this.#own(id);
    if (live?.turn) throw new AcpError(INVALID_PARAMS, `session ${id} is busy with a prompt; fork it once the turn ends`);
    if (this.#opening.has(id)) throw new AcpError(INVALID_PARAMS, `session ${id} is being loaded; fork it once that is answered`);
    const store = this.host.store;
    const newId = randomId();
    if (store?.exists(id)) {
      store.fork(id, newId, cwd, r.additionalDirectories ?? []);
      return { sessionId: newId, ...(await this.#load({ ...r, id: newId })) };
    }
    if (!live) throw new AcpError(SESSION_NOT_FOUND, `unknown session: ${id}`, { sessionId: id });
    const s = await this.#open({ ...r, id: newId, history: structuredClone(live.history), mode: live.policy.mode, model: live.model, thoughtLevel: live.thoughtLevel, sandboxMode: live.sandbox?.mode, title: live.title, usage: { ...live.usage } });
    return { sessionId: newId, ...(await this.#config.describe(s)) };
  }

  /**
   * session/delete: the session's file is removed; a live session is closed first. A running prompt
   * is cancelled in the same request (SPEC §3.2: an editor's "delete" on a running chat needs no cancel
   * first): its answer is `cancelled`, and the file goes once the turn has ended, so nothing the turn
   * writes last brings it back. One being loaded or resumed is refused; an unknown id is -32002.
   */
  async deleteSession(id: string): Promise<void> {
    const store = this.host.store;
    if (this.#opening.has(id)) throw new AcpError(INVALID_PARAMS, `session ${id} is being loaded; delete it once that is answered`);
    const running = this.#sessions.get(id);
    if (running) this.#own(id);
    if (running?.turn) {
      running.turn.abort();
      await running.turnEnded;
    }
    const live = this.#sessions.get(id);
    const saved = store !== undefined && isSessionId(id) && store.exists(id);
    if (!live && !saved) throw new AcpError(SESSION_NOT_FOUND, `unknown session: ${id}`, { sessionId: id });
    if (live) await this.#drop(live);
    if (saved) store.remove(id);
    log.info("session deleted", { session: id });
  }

  async #drop(s: LiveSession): Promise<void> {
    this.#sessions.delete(s.id);
    s.turn?.abort();
    s.recorder?.close();
    await s.tools.close();
  }

  async #open(o: OpenOptions): Promise<LiveSession> {
    const specs = [...configServerSpecs(this.host.configServers ?? [], o.cwd), ...convertMcpServers(o.servers, o.cwd)];
    const sandbox = this.host.sandbox && { mode: o.sandboxMode ?? this.host.sandbox.mode, noticed: false };
    const additionalDirectories = o.additionalDirectories ?? [];
    if (this.host.devServer) specs.unshift(this.host.devServer(o.cwd, { additionalDirectories, ...(sandbox ? { sandboxMode: () => sandbox.mode } : {}) }));
    const tools = await this.#starts.start(specs, o.cwd);
    // `_meta.systemPrompt`: a string replaces the system prompt, `{append: "…"}` adds to it.
    const asked = o.meta?.systemPrompt;
    const append = typeof (asked as { append?: unknown } | undefined)?.append === "string" ? (asked as { append: string }).append : undefined;
    const custom = typeof asked === "string" ? asked : this.host.systemPrompt;
    const base = custom ?? buildSystemPrompt({
      cwd: o.cwd,
      additionalDirectories,
      home: this.host.home,
      instructions: tools.instructions(),
      maxAgentsBytes: this.host.limits.MAX_AGENTS_MD_BYTES,
      maxInstructionsBytes: this.host.limits.MAX_SERVER_INSTRUCTIONS_BYTES,
    });
    const system = append === undefined ? base : `${base}\n\n${append}`;
    const policy = createPolicy({ rules: this.host.rules, mode: o.mode ?? this.host.mode, workspace: o.cwd, additionalRoots: additionalDirectories, approvals: this.host.approvals });
    const session: LiveSession = {
      id: o.id,
      cwd: o.cwd,
      additionalDirectories,
      tools,
      policy,
      system,
      history: o.history ?? [],
      model: o.model ?? this.host.model,
      thoughtLevel: o.thoughtLevel ?? "off",
      usage: o.usage ?? emptySessionUsage(),
      title: o.title ?? null,
      meter: new ContextMeter(),
      stopBudget: { left: this.host.limits.STOP_MAX_REJECTIONS },
      client: o.client,
      ...(sandbox ? { sandbox } : {}),
    };
    // Live events, not history: never recorded, and sent only to a client that shows notices.
    tools.onServerEvent?.((e) => {
      if (!this.#isLive(session) || !session.client?.caps.notices) return;
      session.client.notify(session.id, serverNotice(e));
    });
    sendCommandChanges(session, (s) => this.#isLive(s));
    if (this.#closed) {
      void tools.close();
      throw new AcpError(INTERNAL_ERROR, "the agent is shutting down");
    }
    this.#sessions.set(session.id, session);
    this.#config.checkSandbox(session);
    log.info("session started", { session: session.id, cwd: o.cwd, servers: specs.map((sp) => sp.name).join(","), loaded: o.history !== undefined });
    return session;
  }

  /**
   * A live session's additional workspace roots (absolute, as the client gave them; its cwd not
   * included): what the edit tool may write besides the cwd, and what a sandbox must make writable.
   */
  additionalDirectories(id: string): readonly string[] {
    return this.#get(id).additionalDirectories;
  }

  /**
   * What session `id` has used and spent so far, as a usage_update: sent when it is loaded or resumed,
   * before any turn, so a client shows it at once and `tendril prompt --max-budget-usd` counts a
   * continued session's run from there. `used` is estimated until the next LLM response says. None for
   * a session without history.
   */
  usageNow(id: string): SessionUpdate | undefined {
    const s = this.#get(id);
    if (s.history.length === 0) return undefined;
    const cost = costNow(s.usage);
    return { sessionUpdate: "usage_update", used: Math.round(s.meter.estimate(s.system, s.history, [])), size: this.host.contextWindow, ...(cost ? { cost } : {}) };
  }

  /** Whether session `id` runs a turn now (a prompt or a command); an unknown id is -32002. */
  isBusy(id: string): boolean {
    return this.#get(id).turn !== undefined;
  }

  /** A session of the client's own: a subagent's is -32602 (only session/cancel reaches it). */
  #own(id: string): LiveSession {
    const s = this.#get(id);
    if (s.parentId !== undefined) throw new AcpError(INVALID_PARAMS, `session ${id} is a subagent of session ${s.parentId}: only session/cancel reaches it`);
    return s;
  }

  #get(id: string): LiveSession {
    const s = this.#sessions.get(id);
    if (!s) throw new AcpError(SESSION_NOT_FOUND, `unknown session: ${id}`, { sessionId: id });
    return s;
  }

  /** Whether `s` is still the live session of its id (events for a dropped or replaced one are not sent). */
  #isLive(s: LiveSession): boolean {
    return this.#sessions.get(s.id) === s;
  }

  async prompt(id: string, asked: ContentBlock[], io: PromptIo): Promise<TurnAnswer> {
    const s = this.#own(id);
    if (s.turn) throw new AcpError(INVALID_PARAMS, `session ${id} is busy with another prompt; wait for it or send session/cancel`);
    const command = commandOf(asked);
    if (command && command.name !== "init") return runCommand(this.#context, s, command, io);
    const mcpPrompt = command ? undefined : promptCommandOf(asked);
    if (mcpPrompt) {
      const expanded = await expandMcpPrompt(this.#context, s, mcpPrompt, io);
      if (!("blocks" in expanded)) return expanded;
      asked = [...expanded.blocks, ...asked.slice(1)];
    }
    const blocks = command?.name === "init" ? initPrompt(command.rest) : asked;
    const parts = convertPrompt(blocks, this.host.limits.MAX_PROMPT_BYTES);
    const turn = openTurn(s, io);
    const before = s.history.length;
    s.recorder?.prompt(blocks, io.userMessageId ?? randomId());
    s.history.push({ role: "user", content: withTurnContext(parts, s.history, s.policy.mode, new Date()) });
    const title = s.title === null ? titleOf(blocks) : undefined;
    let failedSilently = false;
    const totals = emptyTotals();
    try {
      const stopReason = await runTurn(turnDeps(this.#context, s, turn, io, totals), s.history, turn.signal);
      return { stopReason, usage: totals };
    } catch (err) {
      if (!(err instanceof TurnError)) throw err;
      // Failed before the model said anything: history is as it was, so a client that resends the
      // prompt does not send it twice (nor does a reload show it).
      if (s.history.length === before + 1) {
        s.history.length = before;
        failedSilently = true;
      }
      throw new AcpError(INTERNAL_ERROR, err.message, { cause: err.message, kind: err.llm.kind, status: err.llm.status });
    } finally {
      // The turn's last update, before its answer: the title (after the first prompt) and the time.
      // Not for a prompt that failed before any output: it left no trace, so a client may resend it.
      // Not recorded: a reload lists the title from the file, and the time is the moment's.
      if (!failedSilently) {
        if (title !== undefined) s.title = title;
        io.emit({ sessionUpdate: "session_info_update", ...(title !== undefined ? { title } : {}), updatedAt: new Date().toISOString() });
      }
      turn.end(failedSilently);
    }
  }

  /** `_session/steering`: a user message for session `id`'s running turn, heard at its next LLM
   *  request; false (nothing kept) when no turn runs or the running one was cancelled. */
  steer(id: string, blocks: ContentBlock[]): boolean {
    const s = this.#own(id);
    const parts = convertPrompt(blocks, this.host.limits.MAX_PROMPT_BYTES);
    if (!s.turn || s.turn.signal.aborted) return false;
    (s.steering ??= new SteeringInbox(this.host.limits.MAX_PENDING_STEERING)).add(blocks, parts);
    return true;
  }

  /** v2's terminal/cancel: ends the background command behind a terminal of session `id` (its exit
   *  follows as the terminal's update); -32602 for a terminal unknown, already exited or not cancellable. */
  cancelTerminal(id: string, terminalId: string): void {
    const cancel = this.#get(id).backgroundTerminals?.get(terminalId);
    if (!cancel) throw new AcpError(INVALID_PARAMS, `terminal ${JSON.stringify(terminalId)} of session ${id} is unknown, has already exited or cannot be cancelled`, { param: "terminalId" });
    cancel();
  }

  /** The slash commands session `id` offers now (built-in, then its MCP prompts); from now on a
   *  change to them is sent to its client. */
  availableCommands(id: string): AvailableCommand[] {
    return offerCommands(this.#get(id));
  }

  /** Cancels every running turn; returns how many there were. */
  cancelAll(): number {
    let n = 0;
    for (const s of this.#sessions.values()) {
      if (!s.turn) continue;
      s.turn.abort();
      n++;
    }
    return n;
  }

  cancel(id: string): void {
    this.#sessions.get(id)?.turn?.abort();
  }

  /** session/set_mode (and the `mode` config option): what the client is told (session-config.ts). */
  async setMode(id: string, modeId: unknown): Promise<SessionUpdate[]> {
    return this.#config.setMode(this.#own(id), modeId);
  }

  /** session/set_config_option and session/set_model: the options as they now are, and what the client is told. */
  async setConfigOption(id: string, configId: string, value: unknown): Promise<{ configOptions: SessionConfigOption[]; updates: SessionUpdate[] }> {
    return this.#config.setOption(this.#own(id), configId, value);
  }

  /** Cancels every turn and releases every session's servers (private ones die as process groups). */
  async closeAll(): Promise<void> {
    this.#closed = true;
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    for (const s of all) s.turn?.abort();
    for (const s of all) s.recorder?.close();
    await Promise.allSettled(all.map((s) => s.tools.close()));
  }
}
