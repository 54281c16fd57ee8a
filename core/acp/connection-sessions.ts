// Owns the session operations one connection serves, whatever its protocol version: opening (new,
// load/resume, fork) behind authentication, listing, deleting, closing (a running turn ended first),
// config options, steering (injected, a new turn, or promptRequired), a turn's life whoever starts it
// (opened, reported, ended: the one busy and empty-prompt rule), and a prompt's io (its updates,
// permission and elicitation questions to the client). v1 (v1/server.ts) and
// v2 (v2/server.ts) are mappings of params and answers over it; what they differ in is a SessionMapping.
// Does not own the session table (session-manager.ts) or the wire (agent-server.ts).
import type { ContentBlock, RequestPermissionResponse, SessionConfigOption, SessionUpdate } from "@agentclientprotocol/sdk";
import { log } from "../log.ts";
import type { Elicitor, PermissionAsk } from "../agent/tool-calls.ts";
import type { RpcPeer } from "../wire/rpc-peer.ts";
import type { AgentAuth } from "./auth.ts";
import { clientElicitor } from "./elicitation.ts";
import { type ClientSessionCaps, type NewSessionParams, ParamReader } from "./params.ts";
import { answerOf, permissionOptions } from "./permission-options.ts";
import { type SessionManager, sessionRequest } from "./session-manager.ts";
import type { ClientLink, PromptIo, TurnEvent } from "./session-host.ts";
import type { TurnAnswer } from "./session-turn.ts";
import { parseSteering } from "./steering.ts";
import { randomId } from "../ids.ts";
import { AcpError, INTERNAL_ERROR } from "./acp-error.ts";

/** What a protocol version puts its own way: update shapes, the permission request, the turn's waits. */
export interface SessionMapping {
  /** One update of session `sessionId`, sent in this version's shape (or not at all). */
  emit(sessionId: string, update: SessionUpdate): void;
  /** session/request_permission's params for the pending tool call `toolCall` (title: the ask's). */
  permissionParams(sessionId: string, toolCall: Record<string, unknown>, options: unknown[]): Record<string, unknown>;
  /** The turn of `sessionId` waits on the user (a first question opened: true) or no longer (false). */
  waiting?(sessionId: string, waits: boolean, turn: AbortSignal): void;
  /** Each tool call's own cancel signal (v2's `tool_call/cancel`); absent: calls end with the turn only. */
  toolCallSignal?(sessionId: string, toolCallId: string): AbortSignal;
  /** A turn of `sessionId` opened or ended, whoever started it: session/prompt, steering with no turn
   *  running, a parent's task (a subagent's session). */
  turn?(sessionId: string, e: TurnEvent): void;
}

/** What a version's method table is given of the agent (the same for v1 and v2). */
export interface MappingOptions {
  version: string;
  sessions: SessionManager;
  /** MCP transports the pool supports besides stdio (`acp`: MCP-over-ACP, the unstable schema's flag). */
  mcpCapabilities: { http: boolean; sse: boolean; acp?: boolean };
  /** Sessions are saved (session/load, list, resume are served). */
  persistent: boolean;
  /** Authentication (auth methods, auth_required, authenticate, logout); undefined = none needed. */
  auth?: AgentAuth;
}

/** One method of a version's table: its params in, its answer (or a thrown AcpError) out. */
export type Handler = (params: unknown, signal: AbortSignal) => unknown;

type Opened = NewSessionParams & { sessionId: string };

export class ConnectionSessions {
  /** What the client said it shows and can do (its initialize); the link sessions tell things through. */
  readonly client: ClientLink & { caps: ClientSessionCaps };
  /** Whether the client said it can run a `terminal` auth method (initialize); never assumed. */
  terminalAuth = false;
  /** Each running turn this engine opened: settles once its end has been reported. */
  readonly #turns = new Map<string, Promise<void>>();

  constructor(
    readonly sessions: SessionManager,
    private readonly peer: RpcPeer,
    private readonly mapping: SessionMapping,
    private readonly auth: AgentAuth | undefined,
    caps: ClientSessionCaps,
  ) {
    this.client = { caps, notify: (sessionId, update) => mapping.emit(sessionId, update) };
  }

  /** What a client said in an initialize (the first, or a later one): it replaces what the last said. */
  hello(h: { caps: ClientSessionCaps; terminalAuth: boolean }): void {
    this.client.caps = h.caps;
    this.terminalAuth = h.terminalAuth;
  }

  authenticate(methodId: string) {
    return this.auth ? this.auth.authenticate(methodId) : {};
  }

  logout() {
    return this.auth?.logout() ?? {};
  }

  /** session/new; params read first, so a bad request is named before auth_required. */
  newSession(p: NewSessionParams) {
    this.auth?.require(this.terminalAuth);
    return this.sessions.newSession(sessionRequest(p, this.client));
  }

  /** session/load (replay given) or session/resume; the session's usage and spend so far follow
   *  (the replay), before the answer. */
  async loadSession(p: Opened, replay?: (update: SessionUpdate, sessionId?: string) => void) {
    this.auth?.require(this.terminalAuth);
    const answer = await this.sessions.loadSession({ ...sessionRequest(p, this.client), id: p.sessionId, replay });
    const usage = this.sessions.usageNow(p.sessionId);
    if (usage) (replay ?? ((u) => this.mapping.emit(p.sessionId, u)))(usage);
    return answer;
  }

  forkSession(p: Opened) {
    this.auth?.require(this.terminalAuth);
    return this.sessions.forkSession(p.sessionId, sessionRequest(p, this.client));
  }

  /** session/list: every field optional, so no params at all is a list of everything. */
  list(raw: unknown) {
    const p = ParamReader.of("session/list", raw ?? {});
    return this.sessions.listSessions(p.string("cwd", "nullable"), p.string("cursor", "nullable"));
  }

  /** session/delete; answers the deleted id. */
  async delete(raw: unknown): Promise<string> {
    const sessionId = ParamReader.of("session/delete", raw).id("sessionId");
    await this.sessions.deleteSession(sessionId);
    return sessionId;
  }

  /** session/close: a running turn is cancelled and its end reported (its last updates sent) before
   *  the session's servers stop and the answer goes, in both versions. */
  async close(sessionId: string): Promise<void> {
    const running = this.#turns.get(sessionId);
    if (running && this.#busy(sessionId)) {
      this.sessions.cancel(sessionId);
      await running;
    }
    await this.sessions.closeSession(sessionId);
  }

  /**
   * `_session/steering` (SPEC §3.10): during a turn the text joins the turn's next LLM request
   * (`injected`); with no turn running, a new turn starts with it (`startedNewTurn`), unless the client
   * asked `_meta.steering.idleBehavior: "promptRequired"` (then nothing changes: `promptRequired`).
   * `ended`: the connection's end, which ends a turn started here.
   */
  async steer(raw: unknown, ended: AbortSignal): Promise<Record<string, unknown>> {
    const { sessionId, prompt, idleBehavior } = parseSteering(raw);
    if (this.sessions.steer(sessionId, prompt)) return { outcome: "injected" };
    if (idleBehavior === "promptRequired") return { outcome: "promptRequired", reason: "noRunningTurn" };
    // A cancelled turn still winding down: the new one starts once it has ended.
    await this.#turns.get(sessionId);
    const { done } = await this.startTurn(sessionId, prompt, ended, true);
    done.catch((err: unknown) => log.debug("a turn started by steering failed", { session: sessionId, error: err }));
    return { outcome: "startedNewTurn" };
  }

  /**
   * Opens a turn on `sessionId` with `prompt` (session/prompt; steering with no turn running) and
   * reports its opening and its end through the mapping. Resolves once the turn has opened, with its
   * user message's id and its end; a prompt refused before that (an unknown or busy session, a block
   * the agent cannot take) throws and changes nothing. `signal` ends the turn.
   */
  async startTurn(sessionId: string, prompt: ContentBlock[], signal: AbortSignal, steered = false): Promise<{ messageId: string; done: Promise<TurnAnswer> }> {
    // Saved with the prompt: a replay shows the message under the id the client is given.
    const messageId = randomId();
    const io = this.promptIo(sessionId, signal);
    // The session layer says when the turn opens (session-turn.ts): once, with the message that opened
    // it (an MCP prompt command opens one turn to fetch the prompt and another to run it).
    let opened = false;
    const answer = this.sessions.prompt(sessionId, prompt, {
      ...io,
      userMessageId: messageId,
      turn: (e) => {
        if (e.state !== "running") return io.turn!(e);
        if (!opened) io.turn!({ state: "running", user: { messageId, prompt, steered } });
        opened = true;
      },
    });
    if (!opened) {
      await answer; // throws why it was refused
      throw new AcpError(INTERNAL_ERROR, "the prompt ended before its turn began");
    }
    const done = answer.then(
      (a) => (io.turn!({ state: "idle", end: a }), a),
      (err: unknown) => {
        const code = err instanceof AcpError ? err.code : INTERNAL_ERROR;
        if (!(err instanceof AcpError)) log.error("a turn failed", { session: sessionId, error: err });
        io.turn!({ state: "idle", end: { error: { code, message: err instanceof Error ? err.message : String(err) } } });
        throw err;
      },
    );
    const reported = done.then(() => {}, () => {});
    this.#turns.set(sessionId, reported);
    void reported.then(() => void (this.#turns.get(sessionId) === reported && this.#turns.delete(sessionId)));
    return { messageId, done };
  }

  /** Whether session `id` is known and runs a turn now. */
  #busy(id: string): boolean {
    try {
      return this.sessions.isBusy(id);
    } catch {
      return false;
    }
  }

  /** session/set_mode; the client hears the change before the answer. */
  async setMode(sessionId: string, modeId: string): Promise<void> {
    this.#emitAll(sessionId, await this.sessions.setMode(sessionId, modeId));
  }

  /** session/set_config_option (and v1's set_model); the client hears the change before the answer.
   *  The schema's two value forms: `{type: "boolean", value: true}`, or `{value: "id"}` (`type` another
   *  or, where the version lets it, absent). */
  async setConfigOption(p: ParamReader, typePresence: "optional" | "required"): Promise<SessionConfigOption[]> {
    const sessionId = p.id("sessionId");
    const configId = p.id("configId");
    const type = p.string("type", typePresence);
    const value = type === "boolean" ? p.boolean("value", "required") : p.check("value", "a value id (a string)", (v): v is string => typeof v === "string");
    return this.setOption(sessionId, configId, value);
  }

  async setOption(sessionId: string, configId: string, value: unknown): Promise<SessionConfigOption[]> {
    const { configOptions, updates } = await this.sessions.setConfigOption(sessionId, configId, value);
    this.#emitAll(sessionId, updates);
    return configOptions;
  }

  /** A prompt's io for session `sessionId`: `signal` aborts with the request (v1) or the connection (v2). */
  promptIo(sessionId: string, signal: AbortSignal): PromptIo {
    const { mapping } = this;
    // The turn waits on the user while any question (permission, elicitation) is open.
    let open = 0;
    const asking = async <T>(turn: AbortSignal, ask: () => Promise<T>): Promise<T> => {
      if (open++ === 0) mapping.waiting?.(sessionId, true, turn);
      try {
        return await ask();
      } finally {
        if (--open === 0) mapping.waiting?.(sessionId, false, turn);
      }
    };
    const toolCallSignal = mapping.toolCallSignal && ((id: string) => mapping.toolCallSignal!(sessionId, id));
    const cancelOf = (turn: AbortSignal, toolCallId: string) => (toolCallSignal ? AbortSignal.any([turn, toolCallSignal(toolCallId)]) : turn);
    const elicitor = clientElicitor(this.peer, sessionId, this.client.caps.elicitation);
    const elicit: Elicitor | undefined = elicitor && {
      modes: elicitor.modes,
      ask: (toolCallId, e, turn) => asking(turn, () => elicitor.ask(toolCallId, e, cancelOf(turn, toolCallId))),
    };
    return {
      signal,
      caps: this.client.caps,
      forSession: (other) => this.promptIo(other, signal),
      turn: (e) => mapping.turn?.(sessionId, e),
      ...(toolCallSignal ? { toolCallSignal } : {}),
      ...(elicit ? { elicit } : {}),
      emit: (update) => mapping.emit(sessionId, update),
      askPermission: ({ allowAlways, options: own, ...ask }: PermissionAsk, turn: AbortSignal) => {
        const cancel = cancelOf(turn, ask.toolCallId);
        if (cancel.aborted) return Promise.resolve("cancelled");
        const options = own ?? permissionOptions(allowAlways);
        return asking(turn, async () => {
          try {
            const params = mapping.permissionParams(sessionId, { ...ask, status: "pending" }, options);
            const res = await this.peer.request<RequestPermissionResponse>("session/request_permission", params, cancel);
            return cancel.aborted ? "cancelled" : answerOf(res, options);
          } catch (err) {
            if (!cancel.aborted) log.warn("permission request failed; treating as cancelled", { error: err });
            return "cancelled";
          }
        });
      },
    };
  }

  #emitAll(sessionId: string, updates: SessionUpdate[]): void {
    for (const u of updates) this.mapping.emit(sessionId, u);
  }
}
