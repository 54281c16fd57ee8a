// Owns the agent's ACP v2 method surface on one connection: initialize, auth/login|logout, session/new|
// list|delete|resume|close|prompt|set_config_option, steering and tool_call/cancel, each a mapping of
// v2's params and answers onto the connection's session engine (connection-sessions.ts): updates are
// translated (v2/updates.ts), the prompt is acknowledged with its messageId, and progress, questions and
// the stop reason arrive as `state_update`. Does not own sessions (session-manager.ts), update shapes
// (v2/updates.ts) or the wire (agent-server.ts chooses this table when `initialize` asks for version 2).
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { RpcPeer } from "../../wire/rpc-peer.ts";
import { ACP_V2 } from "../../wire/jsonrpc.ts";
import { AcpError, INVALID_PARAMS } from "../acp-error.ts";
import { ParamReader, parseLoadSession, parseNewSession, parsePrompt } from "../params.ts";
import { type Handler, type MappingOptions, ConnectionSessions, type SessionMapping } from "../connection-sessions.ts";
import type { TurnEvent } from "../session-host.ts";
import { type ClientHello, initializeV2, silentHello } from "../initialize.ts";
import { STEERING_METHOD } from "../steering.ts";
import { commandsV2, configOptionsV2, stateUpdate, type V2StopReason, type V2Update, v2Update, V2SessionUpdates } from "./updates.ts";

/** What this connection keeps per session it opened: the update translation and each of its running
 *  turn's tool calls' cancel switches. */
interface V2Session {
  updates: V2SessionUpdates;
  calls: Map<string, AbortController>;
  /** The foreground state last reported (a background change repeats it with the new list). */
  state?: V2Update;
}

/** v2's `mcpServers` in the session manager's (v1) terms: stdio without `type`, arrays defaulted, `acp`
 *  as it is when this agent offers it; a transport v2 does not have (v1's `sse`, none) is -32602 naming it. */
function serversV1(method: string, raw: unknown, acp: boolean): unknown {
  if (typeof raw !== "object" || raw === null || !Array.isArray((raw as { mcpServers?: unknown }).mcpServers)) return raw;
  const mcpServers = ((raw as { mcpServers: unknown[] }).mcpServers).map((s, i) => {
    if (typeof s !== "object" || s === null) return s;
    const { type, ...rest } = s as Record<string, unknown>;
    if (type === "stdio") return { ...rest, args: rest.args ?? [], env: rest.env ?? [] };
    if (type === "http") return { type, ...rest, headers: rest.headers ?? [] };
    if (type === "acp" && acp) return s;
    const offered = acp ? '"stdio", "http" or "acp"' : '"stdio" or "http"';
    throw new AcpError(INVALID_PARAMS, `${method}: mcpServers[${i}].type must be ${offered} (the MCP transports of ACP v2 this agent offers), got ${JSON.stringify(type ?? null)}`, { param: `mcpServers[${i}].type` });
  });
  return { ...raw, mcpServers };
}

/** session/resume's `replayFrom`: whether to replay; a cursor this agent does not know is -32602. */
function replayOf(p: ParamReader): boolean {
  const cursor = p.object("replayFrom", "nullable");
  if (!cursor) return false;
  const type = cursor.string("type");
  if (type !== "start") {
    throw p.fail("replayFrom", `${JSON.stringify(type)} is not a replay cursor this agent has: it replays from {"type": "start"} only (or resumes without replay when replayFrom is absent)`);
  }
  return true;
}

/**
 * What this connection keeps of each session in v2's terms, and the engine's mapping onto them: updates
 * translated, every state snapshot listing the session's background work once it has had some, each
 * tool call's cancel switch, a turn's running and idle states whoever started it.
 */
class V2Mapping implements SessionMapping {
  readonly open = new Map<string, V2Session>();

  constructor(readonly peer: RpcPeer) {}

  #notify(sessionId: string, u: V2Update): void {
    this.peer.notify("session/update", { sessionId, update: u });
  }

  /** One v2 update; a state snapshot is remembered and carries the background list. */
  send(sessionId: string, u: V2Update): void {
    if (u.sessionUpdate !== "state_update") return this.#notify(sessionId, u);
    const s = this.open.get(sessionId);
    if (s) s.state = u;
    const background = s?.updates.background();
    this.#notify(sessionId, background ? { ...u, background } : u);
  }

  stateOf(sessionId: string): V2Session {
    let s = this.open.get(sessionId);
    if (!s) this.open.set(sessionId, (s = { updates: new V2SessionUpdates(), calls: new Map() }));
    return s;
  }

  /** Tool call `id`'s cancel switch (tool_call/cancel throws it). */
  callSwitch(sessionId: string, id: string): AbortController {
    const calls = this.stateOf(sessionId).calls;
    let c = calls.get(id);
    if (!c) calls.set(id, (c = new AbortController()));
    return c;
  }

  emit(sessionId: string, u: SessionUpdate): void {
    const s = this.stateOf(sessionId);
    for (const v of s.updates.translate(u)) this.send(sessionId, v);
    // A background command started or ended: the current state again, with the new list (after
    // the terminal_update that announced its cancel or reported its exit).
    if (s.updates.takeBackgroundChange()) {
      const { stopReason: _last, usage: _usage, error: _error, ...current } = s.state ?? stateUpdate("idle");
      this.send(sessionId, current as V2Update);
    }
  }

  permissionParams(sessionId: string, toolCall: Record<string, unknown>, options: unknown[]): Record<string, unknown> {
    return { sessionId, title: toolCall.title, subject: { type: "tool_call", toolCall }, options };
  }

  /** The foreground work waits on the user while any question (permission, elicitation) is open. */
  waiting(sessionId: string, waits: boolean, turn: AbortSignal): void {
    if (waits) this.send(sessionId, stateUpdate("requires_action"));
    else if (!turn.aborted) this.send(sessionId, stateUpdate("running"));
  }

  toolCallSignal(sessionId: string, id: string): AbortSignal {
    return this.callSwitch(sessionId, id).signal;
  }

  /** Whoever started the turn (session/prompt, steering, a parent's task): running before any of its
   *  own updates (with the user message that opened it), idle with its stop reason or error at its end. */
  turn(sessionId: string, e: TurnEvent): void {
    if (e.state === "running") {
      this.send(sessionId, stateUpdate("running"));
      if (e.user) this.send(sessionId, v2Update("user_message", { messageId: e.user.messageId, content: e.user.prompt }));
      return;
    }
    // usage: the turn's token totals, as the v2 unstable schema's IdleStateUpdate.usage.
    const end = e.end;
    this.send(sessionId, "error" in end ? stateUpdate("idle", end) : { ...stateUpdate("idle", end.stopReason as V2StopReason), ...(end.usage ? { usage: end.usage } : {}) });
    this.open.get(sessionId)?.calls.clear();
    // A subagent that ended needs no translation state: a long connection would keep one per child.
    if (e.final) this.open.delete(sessionId);
  }
}

/** The v2 method table of one connection; `hello`: what its client said in an initialize answered
 *  before the table was built (agent-server.ts answers the first one). `acp` MCP servers
 *  (`{type:"acp"}`) go through the connection's relay, when offered (unstable in v2 too). */
export function v2Handlers(opts: MappingOptions, peer: RpcPeer, ended: AbortSignal, hello: ClientHello = silentHello(ACP_V2)): Record<string, Handler> {
  const v2 = new V2Mapping(peer);
  // What the client declared (initialize.ts): v2's baseline shows notices, compaction, subagents and
  // live terminals to all; elicitation in the modes initialize names.
  const engine = new ConnectionSessions(opts.sessions, peer, v2, opts.auth, hello.caps);
  engine.terminalAuth = hello.terminalAuth;
  return { ...sessionMethods(opts, engine, v2), ...turnMethods(opts, engine, v2, ended) };
}

/** The methods that open, describe and end sessions (and the connection's own: initialize, auth). */
function sessionMethods(opts: MappingOptions, engine: ConnectionSessions, v2: V2Mapping): Record<string, Handler> {
  const { sessions } = opts;
  const acp = opts.mcpCapabilities.acp === true;
  const describe = async (sessionId: string, answer: { configOptions: Parameters<typeof configOptionsV2>[0] }) => ({
    configOptions: configOptionsV2(answer.configOptions),
    availableCommands: commandsV2(sessions.availableCommands(sessionId)),
  });
  return {
    initialize: (raw) => {
      const { answer, hello } = initializeV2(raw, opts);
      engine.hello(hello);
      return answer;
    },
    "auth/login": (raw) => engine.authenticate(ParamReader.of("auth/login", raw).id("methodId")),
    "auth/logout": (raw) => {
      ParamReader.of("auth/logout", raw ?? {});
      return engine.logout();
    },
    "session/new": async (raw) => {
      const answer = await engine.newSession(await parseNewSession(serversV1("session/new", raw, acp)));
      v2.stateOf(answer.sessionId);
      return { sessionId: answer.sessionId, ...(await describe(answer.sessionId, answer)) };
    },
    "session/resume": async (raw) => {
      const replay = replayOf(ParamReader.of("session/resume", raw));
      const p = await parseLoadSession(serversV1("session/resume", raw, acp), "session/resume");
      // A fresh translation (the replay tells it the session's tool calls again), put in place only once
      // the load succeeded: a refused resume (a busy session) leaves the running turn's state, which
      // session/close and tool_call/cancel need. A child's replayed updates go under its own id.
      const fresh: V2Session = { updates: new V2SessionUpdates(), calls: new Map() };
      const replayed = (u: SessionUpdate, sessionId = p.sessionId) => {
        if (sessionId !== p.sessionId) return v2.emit(sessionId, u);
        for (const v of fresh.updates.translate(u)) v2.send(p.sessionId, v);
      };
      const answer = await engine.loadSession(p, replay ? replayed : undefined);
      v2.open.set(p.sessionId, fresh);
      // The current-state snapshot after the replay and before the answer: the replay is complete.
      v2.send(p.sessionId, stateUpdate("idle"));
      return describe(p.sessionId, answer);
    },
    "session/list": (raw) => engine.list(raw),
    "session/delete": async (raw) => {
      v2.open.delete(await engine.delete(raw));
      return {};
    },
    // A running turn is cancelled and its last updates (idle, cancelled) sent before the answer.
    "session/close": async (raw) => {
      const sessionId = ParamReader.of("session/close", raw).id("sessionId");
      await engine.close(sessionId);
      v2.open.delete(sessionId);
      return {};
    },
    "session/set_config_option": async (raw) => ({
      configOptions: configOptionsV2(await engine.setConfigOption(ParamReader.of("session/set_config_option", raw), "required")),
    }),
  };
}

/** The methods of a session's turns: the prompt, steering, and cancelling a terminal or a tool call. */
function turnMethods(opts: MappingOptions, engine: ConnectionSessions, v2: V2Mapping, ended: AbortSignal): Record<string, Handler> {
  const { sessions } = opts;
  return {
    // Acknowledged once its turn has opened (its progress, questions and end come as state_update).
    // A prompt refused before that (an unknown or busy session, a block the agent cannot take) is an
    // error answer and changes no state.
    "session/prompt": async (raw) => {
      const p = ParamReader.of("session/prompt", raw);
      const sessionId = p.id("sessionId");
      const { messageId, done } = await engine.startTurn(sessionId, parsePrompt(p), ended);
      done.catch(() => {}); // its error is the idle state_update's
      return { messageId };
    },
    [STEERING_METHOD]: (raw) => engine.steer(raw, ended),
    // Accepted at once; the terminal's exit (a terminal_update with exitStatus) confirms it.
    "terminal/cancel": (raw) => {
      const p = ParamReader.of("terminal/cancel", raw);
      sessions.cancelTerminal(p.id("sessionId"), p.id("terminalId"));
      return {};
    },
    // Accepted at once; the call's final update (cancelled, or completed/failed when it finished first) follows.
    "tool_call/cancel": (raw) => {
      const p = ParamReader.of("tool_call/cancel", raw);
      const sessionId = p.id("sessionId");
      const toolCallId = p.id("toolCallId");
      // An unknown session is -32002. A subagent's session runs while its parent's call does: its turn
      // was not opened by session/prompt here, so whether it runs is the session manager's to say.
      const running = sessions.isBusy(sessionId);
      const s = v2.open.get(sessionId);
      const state = s?.updates.callState(toolCallId) ?? "unknown";
      if (state === "unknown") throw p.fail("toolCallId", `${JSON.stringify(toolCallId)} is no tool call of session ${sessionId}`);
      if (state === "final" || !running || !s) throw p.fail("toolCallId", `tool call ${JSON.stringify(toolCallId)} has already finished; there is nothing to cancel`);
      s.updates.requestCancel(toolCallId);
      v2.callSwitch(sessionId, toolCallId).abort();
      return {};
    },
  };
}
