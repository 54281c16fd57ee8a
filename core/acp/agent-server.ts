// Owns the agent's ACP surface (v1; a connection whose initialize asks for protocolVersion 2 is served
// by v2/server.ts instead): the methods it answers (initialize, authenticate, logout, session/new|
// load|resume|fork|list|close|delete, prompt, cancel, set_mode, set_config_option, set_model; a
// provider's `mcp/message` request goes to the MCP-over-ACP relay), what
// `$/cancel_request` answers (-32800 for all but a prompt), permission and elicitation requests to the
// client, and the
// mapping of our errors to JSON-RPC errors. It reads the wire itself (RpcPeer): no SDK app loaded or
// validating every message; each method reads its params through params.ts, which names what is wrong (-32602).
// Does not own sessions (session.ts) or bytes (core/wire).
import type { RequestPermissionResponse, SessionUpdate } from "@agentclientprotocol/sdk";
import { answerOf, permissionOptions } from "./permission-options.ts";
import { log } from "../log.ts";
import type { PermissionAsk } from "../agent/tool-calls.ts";
import type { LinkEnd } from "../wire/link.ts";
import { ACP_V1, ACP_V2, METHOD_NOT_FOUND, REQUEST_CANCELLED } from "../wire/jsonrpc.ts";
import { RpcError, RpcPeer } from "../wire/rpc-peer.ts";
import type { ByteSink } from "../wire/writer.ts";
import { AcpError, INTERNAL_ERROR, INVALID_PARAMS } from "./convert.ts";
import { type ClientSessionCaps, Params, parseInitialize, parseLoadSession, parseNewSession, parsePrompt } from "./params.ts";
import type { ContentBlock } from "@agentclientprotocol/sdk";
import { type SessionManager, sessionRequest } from "./session.ts";
import type { ClientLink, PromptIo } from "./session-host.ts";
import { MODEL_OPTION_ID } from "./model-choice.ts";
import type { AcpMcpRelay } from "../mcp/acp-transport.ts";
import type { AgentAuth } from "./auth.ts";
import { clientElicitor } from "./elicitation.ts";
import { v2Handlers } from "./v2/server.ts";
import { parseSteering, STEERING_CAPABILITY, STEERING_METHOD } from "./steering.ts";

/** The ACP protocol version this agent speaks. */
const PROTOCOL_VERSION = ACP_V1;

export interface AgentServerOptions {
  version: string;
  sessions: SessionManager;
  /** MCP transports the pool supports besides stdio (`acp`: MCP-over-ACP, the unstable schema's flag). */
  mcpCapabilities: { http: boolean; sse: boolean; acp?: boolean };
  /** Bound to this connection: `acp` MCP servers' messages travel over it. */
  acpRelay?: AcpMcpRelay;
  /** Sessions are saved (session/load, list, resume are served). */
  persistent: boolean;
  /** Authentication (auth methods, auth_required, authenticate, logout); undefined = none needed. */
  auth?: AgentAuth;
}

export interface AgentIo {
  input: AsyncIterable<Uint8Array>;
  sink: ByteSink;
  maxLineBytes: number;
}

export interface AgentConnection {
  /** Settles when input ends: EOF, an over-long line, a read error. */
  ended: Promise<LinkEnd>;
  /** Resolves once every request in flight has its answer queued. */
  settled(): Promise<void>;
  /** Resolves once everything queued so far is written. */
  flush(): Promise<void>;
  close(): void;
}

/** Runs a handler body; our AcpErrors keep their code, anything else becomes -32603 with its message. */
async function guard<T>(what: string, body: () => Promise<T> | T): Promise<T> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof AcpError) throw new RpcError(err.code, err.message, err.data);
    if (err instanceof RpcError) throw err;
    log.error(`${what} failed`, { error: err });
    throw new RpcError(INTERNAL_ERROR, `${what} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function promptIo(peer: RpcPeer, sessionId: string, signal: AbortSignal, caps: ClientSessionCaps): PromptIo {
  return {
    signal,
    caps,
    forSession: (other) => promptIo(peer, other, signal, caps),
    elicit: clientElicitor(peer, sessionId, caps.elicitation),
    emit(update) {
      peer.notify("session/update", { sessionId, update });
    },
    async askPermission({ allowAlways, options: own, ...ask }: PermissionAsk, cancel: AbortSignal) {
      if (cancel.aborted) return "cancelled";
      const options = own ?? permissionOptions(allowAlways);
      try {
        const res = await peer.request<RequestPermissionResponse>(
          "session/request_permission",
          { sessionId, toolCall: { ...ask, status: "pending" }, options },
          cancel,
        );
        return cancel.aborted ? "cancelled" : answerOf(res, options);
      } catch (err) {
        if (!cancel.aborted) log.warn("permission request failed; treating as cancelled", { error: err });
        return "cancelled";
      }
    },
  };
}

type Handler = (params: unknown, signal: AbortSignal) => unknown;

/**
 * `$/cancel_request` for a request other than a prompt (a prompt answers `stopReason: "cancelled"`
 * itself): -32800 at once, without waiting for the work. What the work opens when it does finish is
 * undone (`undo`), so a cancelled session/new leaves no session behind.
 */
function unlessCancelled(method: string, work: Promise<unknown>, signal: AbortSignal, undo: (result: unknown) => Promise<void>): Promise<unknown> {
  const cancelled = () => new RpcError(REQUEST_CANCELLED, `${method} was cancelled ($/cancel_request)`);
  if (signal.aborted) {
    work.then(undo, () => {}).catch((err: unknown) => log.warn("undoing a cancelled request failed", { method, error: err }));
    return Promise.reject(cancelled());
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      reject(cancelled());
      work.then(undo, () => {}).catch((err: unknown) => log.warn("undoing a cancelled request failed", { method, error: err }));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => (signal.removeEventListener("abort", onAbort), resolve(v)),
      (e) => (signal.removeEventListener("abort", onAbort), reject(e)),
    );
  });
}

function handlers(opts: AgentServerOptions, peer: RpcPeer): Record<string, Handler> {
  const { sessions, auth } = opts;
  // Whether the client said it can run a `terminal` auth method (initialize); never assumed.
  let terminalAuth = false;
  // What the client said it shows (initialize): `notice` and `compaction_update` are sent only then.
  const client: ClientLink & { caps: ClientSessionCaps } = {
    caps: { notices: false, compaction: false, elicitation: [] },
    notify: (sessionId, update) => peer.notify("session/update", { sessionId, update }),
  };
  const requireAuth = () => auth?.require(terminalAuth);
  const push = (sessionId: string, updates: SessionUpdate[]) => {
    for (const update of updates) peer.notify("session/update", { sessionId, update });
  };
  // Right after the answer that gave the client the session (its updates must not come first); not
  // for a request the client cancelled (that session is undone), and a session closed meanwhile has
  // nothing to announce.
  const announceCommands = (sessionId: string, signal: AbortSignal) =>
    void setImmediate(() => {
      if (signal.aborted) return;
      try {
        push(sessionId, [{ sessionUpdate: "available_commands_update", availableCommands: sessions.availableCommands(sessionId) }]);
      } catch (err) {
        log.debug("commands not announced", { session: sessionId, error: err });
      }
    });
  return {
    // Not a gate: requests sent before its answer are served.
    initialize: (raw) => {
      const p = parseInitialize(raw);
      terminalAuth = p.terminalAuth;
      client.caps = p.session;
      return {
        protocolVersion: Math.min(p.protocolVersion, PROTOCOL_VERSION),
        agentInfo: { name: "tendril", version: opts.version },
        agentCapabilities: {
          loadSession: opts.persistent,
          promptCapabilities: { image: true, audio: false, embeddedContext: true },
          mcpCapabilities: opts.mcpCapabilities,
          // Listing, resuming and deleting need saved sessions; closing and forking work either way.
          // additionalDirectories: more workspace roots on new, load, resume and fork.
          sessionCapabilities: opts.persistent
            ? { list: {}, resume: {}, close: {}, delete: {}, fork: {}, additionalDirectories: {} }
            : { close: {}, fork: {}, additionalDirectories: {} },
          ...(auth ? { auth: { logout: {} } } : {}),
          _meta: STEERING_CAPABILITY,
        },
        authMethods: auth?.methods(terminalAuth) ?? [],
      };
    },
    authenticate: (raw) => {
      const methodId = Params.of("authenticate", raw).id("methodId");
      return auth ? auth.authenticate(methodId) : {};
    },
    logout: (raw) => {
      // Every field is optional; a wrong type is still named.
      Params.of("logout", raw ?? {}).object("_meta", "nullable");
      return auth?.logout() ?? {};
    },
    "session/new": async (raw, signal) => {
      const p = await parseNewSession(raw);
      requireAuth();
      const answer = await sessions.newSession(sessionRequest(p, client));
      announceCommands(answer.sessionId, signal);
      return answer;
    },
    "session/load": async (raw, signal) => {
      const p = await parseLoadSession(raw, "session/load");
      requireAuth();
      const replay = (update: SessionUpdate, sessionId = p.sessionId) => peer.notify("session/update", { sessionId, update });
      const answer = await sessions.loadSession({ ...sessionRequest(p, client), id: p.sessionId, replay });
      announceCommands(p.sessionId, signal);
      return answer;
    },
    "session/resume": async (raw, signal) => {
      const p = await parseLoadSession(raw, "session/resume");
      requireAuth();
      const answer = await sessions.loadSession({ ...sessionRequest(p, client), id: p.sessionId });
      announceCommands(p.sessionId, signal);
      return answer;
    },
    "session/fork": async (raw, signal) => {
      const p = await parseLoadSession(raw, "session/fork");
      requireAuth();
      const answer = await sessions.forkSession(p.sessionId, sessionRequest(p, client));
      announceCommands(answer.sessionId, signal);
      return answer;
    },
    "session/list": (raw) => {
      // Every field is optional, so no params at all is a list of everything.
      const p = Params.of("session/list", raw ?? {});
      return sessions.listSessions(p.string("cwd", "nullable"), p.string("cursor", "nullable"));
    },
    "session/delete": async (raw) => {
      await sessions.deleteSession(Params.of("session/delete", raw).id("sessionId"));
      return {};
    },
    "session/close": async (raw) => {
      await sessions.closeSession(Params.of("session/close", raw).id("sessionId"));
      return {};
    },
    // usage is ACP's (still unstable) PromptResponse.usage: the turn's token totals.
    "session/prompt": (raw, signal) => {
      const p = Params.of("session/prompt", raw);
      const sessionId = p.id("sessionId");
      const prompt = parsePrompt(p);
      return sessions.prompt(sessionId, prompt, promptIo(peer, sessionId, signal, client.caps));
    },
    // Answered at once; the text reaches the model at the turn's next LLM request.
    [STEERING_METHOD]: (raw) => {
      const { sessionId, prompt } = parseSteering(raw);
      sessions.steer(sessionId, prompt);
      return {};
    },
    // Whichever path changes the mode or the model, the client hears it (before the answer).
    "session/set_mode": async (raw) => {
      const p = Params.of("session/set_mode", raw);
      const sessionId = p.id("sessionId");
      push(sessionId, await sessions.setMode(sessionId, p.id("modeId")));
      return {};
    },
    "session/set_config_option": async (raw) => {
      const p = Params.of("session/set_config_option", raw);
      const sessionId = p.id("sessionId");
      const configId = p.id("configId");
      // The schema's two forms: `{type: "boolean", value: true}`, or `{value: "id"}` (type absent or another).
      const typed = p.string("type", "optional");
      const value = typed === "boolean" ? p.boolean("value", "required") : p.check("value", "a value id (a string)", (v): v is string => typeof v === "string");
      const { configOptions, updates } = await sessions.setConfigOption(sessionId, configId, value);
      push(sessionId, updates);
      return { configOptions };
    },
    // The older (unstable) way some clients switch models; same effect as the `model` config option.
    "session/set_model": async (raw) => {
      const p = Params.of("session/set_model", raw);
      const sessionId = p.id("sessionId");
      push(sessionId, (await sessions.setConfigOption(sessionId, MODEL_OPTION_ID, p.id("modelId"))).updates);
      return {};
    },
  };
}

/** A session a cancelled request opened anyway: closed, and one it created (new, fork) deleted. */
async function undoOpen(sessions: SessionManager, method: string, params: unknown, result: unknown): Promise<void> {
  const created = method === "session/new" || method === "session/fork";
  const id = created ? (result as { sessionId?: unknown } | undefined)?.sessionId : method === "session/load" || method === "session/resume" ? (params as { sessionId?: unknown }).sessionId : undefined;
  if (typeof id !== "string") return;
  if (created) await sessions.deleteSession(id);
  else await sessions.closeSession(id);
  log.info("a cancelled request's session was undone", { method, session: id });
}

/** Serves the agent on a byte stream until the peer goes away. */
export function serveAgent(io: AgentIo, opts: AgentServerOptions): AgentConnection {
  let table: Record<string, Handler> = {};
  // The protocol version is chosen once per connection, by its first initialize: 2 asked, v2; else v1.
  let negotiated = false;
  const ended = new AbortController();
  const peer = new RpcPeer({
    ...io,
    answerMalformed: true,
    onRequest: (method, params, cancellation) => {
      const signal = cancellation.signal;
      if (method === "initialize" && !negotiated) {
        negotiated = true;
        if ((params as { protocolVersion?: unknown } | null)?.protocolVersion === ACP_V2) table = v2Handlers(opts, peer, ended.signal);
      }
      // MCP-over-ACP: a provider's MCP server asking our MCP client (roots/list, elicitation, ping…).
      if (method === "mcp/message" && opts.acpRelay) return opts.acpRelay.answer(params, signal);
      const handler = Object.hasOwn(table, method) ? table[method] : undefined;
      if (!handler) throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method}`);
      const work = guard(method, () => handler(params, signal));
      if (method === "session/prompt") return work;
      return unlessCancelled(method, work, signal, (result) => undoOpen(opts.sessions, method, params, result));
    },
    onNotification: (method, params) => {
      if (method === "session/cancel") {
        // A notification has no answer: a wrong one is logged, naming the field.
        try {
          opts.sessions.cancel(Params.of(method, params).id("sessionId"));
        } catch (err) {
          log.warn("session/cancel ignored", { error: err });
        }
      } else if (method === "mcp/message") {
        // MCP-over-ACP: a provider's notification for one of its servers (progress, list changes).
        opts.acpRelay?.deliver(params);
      }
    },
  });
  table = handlers(opts, peer);
  void peer.ended.then(() => ended.abort());
  opts.acpRelay?.bind({
    request: (method, params) => peer.request(method, params),
    notify: (method, params) => peer.notify(method, params),
  });
  return { ended: peer.ended, settled: () => peer.settled(), flush: () => peer.flush(), close: () => peer.close() };
}

export { AcpError, INVALID_PARAMS };
