// Owns the agent's sessions: creation and loading (MCP servers + the private `dev` server, system
// prompt, policy, history), one prompt at a time per session, cancellation through a per-session
// AbortController, modes and config options, slash commands, listing, closing and deleting, and
// recording each live session to its file. Over 400 lines as one unit: each of these reads and changes
// the same private session table. Does not speak JSON-RPC (agent-server.ts), run the turn (agent/loop.ts),
// start servers (session-open.ts), parse commands (commands.ts), word notices (notices.ts) or define its
// contract with host and client (session-host.ts).
import type { AvailableCommand, ContentBlock, McpServer, SessionConfigOption, SessionUpdate, StopReason } from "@agentclientprotocol/sdk";
import { isPermissionMode, PERMISSION_MODES, type PermissionMode } from "../policy/modes.ts";
import type { SandboxMode } from "../sandbox-modes.ts";
import { type Message, THOUGHT_LEVELS, type ThoughtLevel } from "../llm/types.ts";
import type { McpSessionTools } from "../mcp/types.ts";
import { log } from "../log.ts";
import { randomId } from "../ids.ts";
import { createPolicy, type Policy } from "../policy/policy.ts";
import { compactHistory, emptyTotals, type Lifecycle, runTurn, type TurnDeps, TurnError, type TurnTotals } from "../agent/loop.ts";
import { ContextMeter, withoutCompaction } from "../agent/handoff.ts";
import { buildSystemPrompt } from "../agent/system-prompt.ts";
import { withPlanTool } from "../agent/plan-mode.ts";
import { isSessionId } from "../agent/session-store.ts";
import { AcpError, configServerSpecs, convertMcpServers, convertPrompt, INTERNAL_ERROR, INVALID_PARAMS, SESSION_NOT_FOUND } from "./convert.ts";
import { SessionOpener } from "./session-open.ts";
import { checkCwd } from "./params.ts";
import { SessionRecorder, titleOf } from "./session-recorder.ts";
import {
  availableCommands,
  type Command,
  CommandInputError,
  commandOf,
  findPrompt,
  initPrompt,
  type PromptCommand,
  promptArguments,
  promptBlocks,
  promptCommandOf,
} from "./commands.ts";
import { ModelChoices, MODEL_OPTION_ID } from "./model-choice.ts";
import { withToolCancel } from "./v2/tool-cancel.ts";
import type { ClientLink, PromptIo, SessionHost } from "./session-host.ts";
import { sandboxNotice, serverNotice } from "./notices.ts";
import { checkSandboxMode, checkThoughtLevel, MODE_OPTION_ID, modeOption, modeState, SANDBOX_OPTION_ID, sandboxOption, THOUGHT_OPTION_ID, thoughtOption } from "./config-options.ts";

interface Session {
  id: string;
  cwd: string;
  /** session/new's (load's, resume's, fork's) `additionalDirectories`: more workspace roots. */
  additionalDirectories: readonly string[];
  tools: McpSessionTools;
  policy: Policy;
  system: string;
  history: Message[];
  model: string;
  /** `thought_level`: how hard the model reasons (mapped by the provider). */
  thoughtLevel: ThoughtLevel;
  /** The first prompt's first line, once there was one (session_info_update, session/list). */
  title: string | null;
  recorder?: SessionRecorder;
  meter: ContextMeter;
  /** `_Stop` objections left (STOP_MAX_REJECTIONS per session). */
  stopBudget: { left: number };
  turn?: AbortController;
  client?: ClientLink;
  /** The `dev` shell's sandbox setting (host.sandbox), and whether its fail-closed notice was sent. */
  sandbox?: { mode: SandboxMode; noticed: boolean };
  /** The client was given the session's commands: a change to them is sent from then on. */
  announced?: boolean;
}

interface OpenOptions {
  id: string;
  cwd: string;
  additionalDirectories?: readonly string[];
  servers: McpServer[];
  meta?: Record<string, unknown> | null;
  history?: Message[];
  title?: string | null;
  mode?: PermissionMode;
  model?: string;
  thoughtLevel?: ThoughtLevel;
  client?: ClientLink;
}

/** What session/load and session/resume answer. */
type LoadAnswer = Awaited<ReturnType<SessionManager["describe"]>>;

const LIST_PAGE = 100; // sessions per session/list page

export class SessionManager {
  readonly #sessions = new Map<string, Session>();
  /** Loads and resumes in flight, by session id: what was asked and its answer (one open per id). */
  readonly #opening = new Map<string, { ask: string; answer: Promise<LoadAnswer> }>();
  readonly #opener: SessionOpener;
  readonly #models: ModelChoices;
  #closed = false;

  constructor(private readonly host: SessionHost) {
    this.#opener = new SessionOpener(host.pool, host.limits);
    this.#models = new ModelChoices(host.models ?? [], host.provider, host.limits.MODEL_LIST_TIMEOUT_S);
  }

  /** session/new. */
  async newSession(cwd: string, servers: McpServer[], meta?: Record<string, unknown> | null, client?: ClientLink, additionalDirectories: readonly string[] = []) {
    checkCwd(cwd, "session/new");
    const s = await this.#open({ id: randomId(), cwd, additionalDirectories, servers, meta, client });
    const store = this.host.store;
    if (store) {
      const file = store.create({ id: s.id, cwd, created: new Date().toISOString(), title: null, model: this.host.model, mode: s.policy.mode });
      s.recorder = new SessionRecorder(file, s.history, false);
    }
    return { sessionId: s.id, ...(await this.describe(s)) };
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
  loadSession(
    id: string,
    cwd: string,
    servers: McpServer[],
    meta: Record<string, unknown> | null | undefined,
    replay?: (u: SessionUpdate) => void,
    client?: ClientLink,
    additionalDirectories: readonly string[] = [],
  ): Promise<LoadAnswer> {
    checkCwd(cwd, replay ? "session/load" : "session/resume");
    const ask = JSON.stringify([replay ? "load" : "resume", cwd, servers, meta ?? null, additionalDirectories]);
    const before = this.#opening.get(id);
    if (before?.ask === ask) return before.answer;
    const answer = (async () => {
      // The first open's failure is its own caller's to report; this one only waits it out.
      if (before) await before.answer.catch((err) => log.debug("an earlier open of this session failed", { session: id, error: err }));
      return this.#load(id, cwd, servers, meta, replay, client, additionalDirectories);
    })();
    const entry = { ask, answer };
    this.#opening.set(id, entry);
    const done = () => void (this.#opening.get(id) === entry && this.#opening.delete(id));
    answer.then(done, done);
    return answer;
  }

  async #load(
    id: string,
    cwd: string,
    servers: McpServer[],
    meta: Record<string, unknown> | null | undefined,
    replay?: (u: SessionUpdate) => void,
    client?: ClientLink,
    additionalDirectories: readonly string[] = [],
  ): Promise<LoadAnswer> {
    const live = this.#sessions.get(id);
    if (live?.turn) throw new AcpError(INVALID_PARAMS, `session ${id} is busy with a prompt; cancel it first`);
    const saved = this.host.store && isSessionId(id) ? this.host.store.load(id) : undefined;
    if (!saved) throw new AcpError(SESSION_NOT_FOUND, `unknown session: ${id} (no saved session with this id)`, { sessionId: id });
    if (live) await this.#drop(live);
    const mode = isPermissionMode(saved.mode) ? saved.mode : this.host.mode;
    const model = saved.model && (await this.#models.choices(this.host.model)).includes(saved.model) ? saved.model : undefined;
    const level = saved.options[THOUGHT_OPTION_ID] as ThoughtLevel | undefined;
    const thoughtLevel = level && THOUGHT_LEVELS.includes(level) ? level : undefined;
    const s = await this.#open({ id, cwd, additionalDirectories, servers, meta, history: saved.history, mode, model, thoughtLevel, title: saved.title, client });
    s.recorder = new SessionRecorder(this.host.store!.reopen(id), s.history, saved.title !== null);
    // A handoff recorded as `compaction_update`s is replayed as such only to a client that shows them.
    if (replay) {
      for (const u of saved.updates) {
        const shown = client?.caps.compaction ? u : withoutCompaction(u);
        if (shown) replay(shown);
      }
    }
    return this.describe(s);
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
    const s = this.#get(id);
    await this.#drop(s);
  }

  /**
   * session/fork: a new session whose history is a copy of `id`'s (its saved file copied under a new
   * id, or a live session's history where nothing is saved), in `cwd` with the servers this request
   * declares. The original is never written. A session whose prompt is running, or that is being
   * loaded, is refused: its history is mid-turn.
   */
  async forkSession(id: string, cwd: string, servers: McpServer[], meta: Record<string, unknown> | null | undefined, client?: ClientLink, additionalDirectories: readonly string[] = []) {
    checkCwd(cwd, "session/fork");
    const live = this.#sessions.get(id);
    if (live?.turn) throw new AcpError(INVALID_PARAMS, `session ${id} is busy with a prompt; fork it once the turn ends`);
    if (this.#opening.has(id)) throw new AcpError(INVALID_PARAMS, `session ${id} is being loaded; fork it once that is answered`);
    const store = this.host.store;
    const newId = randomId();
    if (store?.exists(id)) {
      store.fork(id, newId, cwd);
      return { sessionId: newId, ...(await this.#load(newId, cwd, servers, meta, undefined, client, additionalDirectories)) };
    }
    if (!live) throw new AcpError(SESSION_NOT_FOUND, `unknown session: ${id}`, { sessionId: id });
    const s = await this.#open({ id: newId, cwd, additionalDirectories, servers, meta, history: structuredClone(live.history), mode: live.policy.mode, model: live.model, thoughtLevel: live.thoughtLevel, title: live.title, client });
    return { sessionId: newId, ...(await this.describe(s)) };
  }

  /**
   * session/delete: the session's file is removed; a live, idle session is closed first. A session
   * whose prompt is running is refused (the user's turn is never lost by accident), and so is one
   * being loaded or resumed; an unknown id is -32002.
   */
  async deleteSession(id: string): Promise<void> {
    const store = this.host.store;
    const live = this.#sessions.get(id);
    if (live?.turn) throw new AcpError(INVALID_PARAMS, `session ${id} is busy with a prompt; cancel it first, then delete it`);
    if (this.#opening.has(id)) throw new AcpError(INVALID_PARAMS, `session ${id} is being loaded; delete it once that is answered`);
    const saved = store !== undefined && isSessionId(id) && store.exists(id);
    if (!live && !saved) throw new AcpError(SESSION_NOT_FOUND, `unknown session: ${id}`, { sessionId: id });
    if (live) await this.#drop(live);
    if (saved) store.remove(id);
    log.info("session deleted", { session: id });
  }

  async #drop(s: Session): Promise<void> {
    this.#sessions.delete(s.id);
    s.turn?.abort();
    s.recorder?.close();
    await s.tools.close();
  }

  async #open(o: OpenOptions): Promise<Session> {
    const specs = [...configServerSpecs(this.host.configServers ?? [], o.cwd), ...convertMcpServers(o.servers, o.cwd)];
    const sandbox = this.host.sandbox && { mode: this.host.sandbox.mode, noticed: false };
    const additionalDirectories = o.additionalDirectories ?? [];
    if (this.host.devServer) specs.unshift(this.host.devServer(o.cwd, { additionalDirectories, ...(sandbox ? { sandboxMode: () => sandbox.mode } : {}) }));
    const tools = await this.#opener.open(specs, o.cwd);
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
    const session: Session = {
      id: o.id,
      cwd: o.cwd,
      additionalDirectories,
      tools,
      policy,
      system,
      history: o.history ?? [],
      model: o.model ?? this.host.model,
      thoughtLevel: o.thoughtLevel ?? "off",
      title: o.title ?? null,
      meter: new ContextMeter(),
      stopBudget: { left: this.host.limits.STOP_MAX_REJECTIONS },
      client: o.client,
      ...(sandbox ? { sandbox } : {}),
    };
    // Live events, not history: never recorded, and sent only to a client that shows notices.
    tools.onServerEvent?.((e) => {
      if (this.#sessions.get(session.id) !== session || !session.client?.caps.notices) return;
      session.client.notify(session.id, serverNotice(e));
    });
    // A server's prompts changed: the client hears the whole command list again (once it had it).
    tools.onPromptsChanged?.(() => {
      if (this.#sessions.get(session.id) !== session || !session.announced || !session.client) return;
      session.client.notify(session.id, { sessionUpdate: "available_commands_update", availableCommands: availableCommands(tools.prompts?.() ?? []) });
    });
    if (this.#closed) {
      void tools.close();
      throw new AcpError(INTERNAL_ERROR, "the agent is shutting down");
    }
    this.#sessions.set(session.id, session);
    this.#checkSandbox(session);
    log.info("session started", { session: session.id, cwd: o.cwd, servers: specs.map((sp) => sp.name).join(","), loaded: o.history !== undefined });
    return session;
  }

  /**
   * Fail closed, said once: when the session's confined sandbox setting cannot work here, a `notice`
   * (to a client that shows them; after the answer that gave it the session) — every command then
   * fails saying why.
   */
  #checkSandbox(s: Session): void {
    const sb = s.sandbox;
    if (!sb || sb.noticed || sb.mode === "off" || !s.client?.caps.notices) return;
    const mode = sb.mode;
    void this.host.sandbox!.problem(mode, s.cwd).then((problem) => {
      if (problem === undefined || sb.noticed || sb.mode !== mode) return;
      sb.noticed = true;
      setImmediate(() => {
        if (this.#sessions.get(s.id) !== s) return;
        s.client!.notify(s.id, sandboxNotice(mode, problem));
      });
    });
  }

  /**
   * A live session's additional workspace roots (absolute, as the client gave them; its cwd not
   * included): what the edit tool may write besides the cwd, and what a sandbox must make writable.
   */
  additionalDirectories(id: string): readonly string[] {
    return this.#get(id).additionalDirectories;
  }

  /** Whether session `id` runs a turn now (a prompt or a command); an unknown id is -32002. */
  isBusy(id: string): boolean {
    return this.#get(id).turn !== undefined;
  }

  #get(id: string): Session {
    const s = this.#sessions.get(id);
    if (!s) throw new AcpError(SESSION_NOT_FOUND, `unknown session: ${id}`, { sessionId: id });
    return s;
  }

  async prompt(id: string, asked: ContentBlock[], io: PromptIo): Promise<{ stopReason: StopReason; usage: TurnTotals }> {
    const s = this.#get(id);
    if (s.turn) throw new AcpError(INVALID_PARAMS, `session ${id} is busy with another prompt; wait for it or send session/cancel`);
    const command = commandOf(asked);
    if (command && command.name !== "init") return this.#command(s, command, io);
    const mcpPrompt = command ? undefined : promptCommandOf(asked);
    if (mcpPrompt) {
      const expanded = await this.#mcpPrompt(s, mcpPrompt, io);
      if (!("blocks" in expanded)) return expanded;
      asked = [...expanded.blocks, ...asked.slice(1)];
    }
    const blocks = command?.name === "init" ? initPrompt(command.rest) : asked;
    const parts = convertPrompt(blocks, this.host.limits.MAX_PROMPT_BYTES);
    const turn = this.#openTurn(s, io);
    const emit = turn.emit;
    const before = s.history.length;
    s.recorder?.prompt(blocks);
    s.history.push({ role: "user", content: parts });
    const title = s.title === null ? titleOf(blocks) : undefined;
    let failedSilently = false;
    const totals = emptyTotals();
    try {
      const stopReason = await runTurn(this.#turnDeps(s, emit, io, totals), s.history, turn.signal);
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

  /**
   * Opens a turn on `s` (one at a time; the request's abort cancels it) for a prompt or a command:
   * its signal, and the tap its updates go through (recorded, then sent). `end` closes the tap
   * (updates after the answer would break "every update before the response"), drops what a turn
   * that failed silently recorded, makes the rest durable and frees the session.
   */
  #openTurn(s: Session, io: PromptIo) {
    const controller = new AbortController();
    s.turn = controller;
    const onRequestAbort = () => controller.abort();
    io.signal.addEventListener("abort", onRequestAbort, { once: true });
    let open = true;
    return {
      signal: controller.signal,
      emit: (u: SessionUpdate) => {
        if (!open) return;
        s.recorder?.update(u);
        io.emit(u);
      },
      end: (discard = false) => {
        open = false;
        io.signal.removeEventListener("abort", onRequestAbort);
        if (discard) s.recorder?.discardTurn();
        s.recorder?.endTurn();
        if (s.turn === controller) s.turn = undefined;
      },
    };
  }

  #turnDeps(s: Session, emit: (u: SessionUpdate) => void, io: PromptIo, totals: TurnTotals): TurnDeps {
    const h = this.host;
    // A notice is live, not history: sent past the recorder, and only to a client that shows them.
    const notice: TurnDeps["notice"] = io.caps?.notices ? (n) => io.emit({ sessionUpdate: "notice", ...n }) : undefined;
    // Plan mode's way out (plan__ready) switches modes as set_mode does; the client hears it at once.
    const planned = withPlanTool(s.tools, {
      policy: s.policy,
      emit,
      askPermission: io.askPermission,
      switchMode: async (mode) => {
        for (const u of await this.setMode(s.id, mode)) io.emit(u);
      },
      maxSteps: h.limits.TODO_ITEMS,
      maxStepChars: h.limits.TODO_ITEM_CHARS,
    });
    const tools = io.toolCallSignal ? withToolCancel(planned, io.toolCallSignal) : planned;
    return { provider: h.provider, model: s.model, thoughtLevel: s.thoughtLevel, maxTokens: h.maxTokens, contextWindow: h.contextWindow, system: s.system, tools, policy: s.policy, cwd: s.cwd, limits: h.limits, emit, notice, askPermission: io.askPermission, elicit: io.elicit, totals, lifecycle: this.#lifecycle(s, io) };
  }

  /**
   * A slash command as a turn of its own (cancellable, one at a time, its updates recorded): `/mode`
   * and `/model` switch as their config options do, `/compact` hands off now. A bad argument is
   * answered in the conversation, not as a protocol error: a person typed it.
   */
  async #command(s: Session, command: Command, io: PromptIo): Promise<{ stopReason: StopReason; usage: TurnTotals }> {
    const turn = this.#openTurn(s, io);
    const emit = turn.emit;
    const totals = emptyTotals();
    const say = (text: string) => emit({ sessionUpdate: "agent_message_chunk", messageId: randomId(), content: { type: "text", text } });
    try {
      if (command.name === "mode") {
        for (const u of await this.setMode(s.id, command.rest)) io.emit(u);
        say(`Mode: ${s.policy.mode}.`);
      } else if (command.name === "model") {
        for (const u of (await this.setConfigOption(s.id, MODEL_OPTION_ID, command.rest)).updates) io.emit(u);
        say(`Model: ${s.model}.`);
      } else if (!(await compactHistory(this.#turnDeps(s, emit, io, totals), s.history, turn.signal)) && !turn.signal.aborted) {
        say("Nothing to compact yet.");
      }
    } catch (err) {
      if (!(err instanceof AcpError)) throw err;
      say(err.message);
    } finally {
      turn.end();
    }
    return { stopReason: turn.signal.aborted ? "cancelled" : "end_turn", usage: totals };
  }

  /**
   * `/SERVER:PROMPT args…`: the MCP prompt fetched (prompts/get, cancellable, one at a time like any
   * turn) and its messages returned as the user's turn, which the caller then runs. An unknown
   * prompt, a missing argument or the server's refusal is answered in the conversation instead.
   */
  async #mcpPrompt(s: Session, c: PromptCommand, io: PromptIo): Promise<{ blocks: ContentBlock[] } | { stopReason: StopReason; usage: TurnTotals }> {
    const turn = this.#openTurn(s, io);
    const say = (text: string) => turn.emit({ sessionUpdate: "agent_message_chunk", messageId: randomId(), content: { type: "text", text } });
    try {
      const prompt = findPrompt(c, s.tools.prompts?.() ?? []);
      const args = promptArguments(prompt, c.rest);
      const messages = await s.tools.getPrompt!(c.server, c.prompt, args, turn.signal);
      const blocks = promptBlocks(messages);
      if (blocks.length === 0) throw new CommandInputError(`/${c.server}:${c.prompt} gave no messages; nothing was sent to the model.`);
      convertPrompt(blocks, this.host.limits.MAX_PROMPT_BYTES);
      return { blocks };
    } catch (err) {
      if (!turn.signal.aborted) {
        const why = err instanceof CommandInputError ? err.message : `/${c.server}:${c.prompt} failed: ${err instanceof Error ? err.message : String(err)}`;
        say(why);
      }
      return { stopReason: turn.signal.aborted ? "cancelled" : "end_turn", usage: emptyTotals() };
    } finally {
      turn.end();
    }
  }

  /** The slash commands session `id` offers now (built-in, then its MCP prompts); from now on a
   *  change to them is sent to its client. */
  availableCommands(id: string): AvailableCommand[] {
    const s = this.#get(id);
    s.announced = true;
    return availableCommands(s.tools.prompts?.() ?? []);
  }

  #lifecycle(s: Session, io: PromptIo): Lifecycle {
    const { limits } = this.host;
    return {
      meter: s.meter,
      hooks: { allowed: this.host.hookServers ?? [], timeoutMs: limits.HOOK_TIMEOUT_MS },
      stopBudget: s.stopBudget,
      ratio: limits.HANDOFF_RATIO,
      maxHandoffs: limits.MAX_HANDOFFS,
      compaction: io.caps?.compaction === true,
      onCompact: (history) => s.recorder?.compacted(history),
    };
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

  /**
   * A session's modes and config options, as session/new, load and resume answer: one list, in the
   * order clients show them (mode, model, thought_level where the provider maps it, the dev shell's sandbox).
   */
  async describe(s: { policy: Policy; model: string; thoughtLevel: ThoughtLevel; sandbox?: { mode: SandboxMode } }) {
    const models = await this.#models.describe(s.model);
    const configOptions: SessionConfigOption[] = [
      modeOption(s.policy.mode),
      ...models.configOptions,
      ...(this.host.provider.thoughtLevels ? [thoughtOption(s.thoughtLevel)] : []),
      ...(s.sandbox ? [sandboxOption(s.sandbox.mode)] : []),
    ];
    return { modes: modeState(s.policy.mode), configOptions, models: models.models };
  }

  /**
   * session/set_mode and the `mode` config option. Returns what the client is told, whichever path
   * changed it: `current_mode_update` and `config_option_update`.
   */
  async setMode(id: string, modeId: unknown): Promise<SessionUpdate[]> {
    const s = this.#get(id);
    if (!isPermissionMode(modeId)) {
      throw new AcpError(INVALID_PARAMS, `unknown mode: ${JSON.stringify(modeId)} (modes: ${PERMISSION_MODES.join(", ")})`);
    }
    s.policy.setMode(modeId);
    s.recorder?.mode(modeId);
    const { configOptions } = await this.describe(s);
    return [
      { sessionUpdate: "current_mode_update", currentModeId: modeId },
      { sessionUpdate: "config_option_update", configOptions },
    ];
  }

  /**
   * session/set_config_option (`mode` or `model`) and session/set_model: a mode applies to the next
   * tool call, a model to the next LLM request. Answers the config options as they now are, and what
   * the client is told (`config_option_update`, and `current_mode_update` for a mode).
   */
  async setConfigOption(id: string, configId: string, value: unknown): Promise<{ configOptions: SessionConfigOption[]; updates: SessionUpdate[] }> {
    const s = this.#get(id);
    if (configId === MODE_OPTION_ID) {
      const updates = await this.setMode(id, value);
      return { configOptions: (await this.describe(s)).configOptions, updates };
    }
    const offered = (await this.describe(s)).configOptions.map((o) => o.id);
    const set = offered.includes(configId) ? this.#setters[configId] : undefined;
    if (!set) throw new AcpError(INVALID_PARAMS, `unknown config option ${JSON.stringify(configId)} (options: ${offered.join(", ")})`);
    await set(s, value);
    const { configOptions } = await this.describe(s);
    return { configOptions, updates: [{ sessionUpdate: "config_option_update", configOptions }] };
  }

  /** How each config option but `mode` takes a value (checked: -32602 naming the choices) and records it. */
  readonly #setters: Record<string, (s: Session, value: unknown) => Promise<void>> = {
    [MODEL_OPTION_ID]: async (s, value) => {
      s.model = await this.#models.check(value, s.model);
      s.recorder?.model(s.model);
    },
    [THOUGHT_OPTION_ID]: async (s, value) => {
      s.thoughtLevel = checkThoughtLevel(value);
      s.recorder?.option(THOUGHT_OPTION_ID, s.thoughtLevel);
    },
    // Not saved with the session: a loaded session starts from the configured setting.
    [SANDBOX_OPTION_ID]: async (s, value) => {
      const mode = checkSandboxMode(value);
      if (s.sandbox && s.sandbox.mode !== mode) Object.assign(s.sandbox, { mode, noticed: false }); // the dev server reads this object
      this.#checkSandbox(s);
    },
  };

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
