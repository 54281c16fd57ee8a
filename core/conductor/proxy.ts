// Owns the proxy library (SPEC §4.2): a chain component written in this codebase. Everything is
// forwarded by default, raw (unknown fields and update kinds survive); a proxy intercepts the methods
// it cares about, adds MCP servers to `session/new`, opens sub-sessions on its successor and drives
// them (a sub-session's turn ends with its prompt's answer in ACP v1, with its idle `state_update`
// in v2), and answers permission requests of the sessions it owns. Speaks whichever dialect the
// conductor initializes it in, over one JSON-RPC peer (core/wire/rpc-peer.ts: ids, pending answers,
// cancellation). Does not spawn anything or touch process stdio (callers pass a HopIo).
import { logFailure } from "../log.ts";
import { INTERNAL_ERROR, isObject, type JsonRpcError, type JsonRpcId } from "../wire/jsonrpc.ts";
import { ANSWER_LATER, type Cancellation, errorOf, type Outcome, RpcError, RpcPeer } from "../wire/rpc-peer.ts";
import { answeredVersion, type Dialect, dialectOfInitialize, initializeAnswerFor, type Params, unwrapSuccessor, wrapSuccessor } from "./dialect.ts";
import type { LinkEnd } from "../wire/link.ts";
import type { McpToolServer } from "./mcp-over-acp.ts";
import { ProxyMcpHost, type ServedMcp } from "./proxy-mcp.ts";
import type { HopIo } from "./router.ts";
import { turnEnd } from "../v2-turn-end.ts";
import type {
  ContentBlock,
  JsonObject,
  McpServer,
  NotificationParams,
  RequestParams,
  RequestPermissionRequest,
  RequestResult,
  SessionModeState,
  SessionOpenParams,
  SessionUpdate,
  StopReason,
} from "./acp-methods.ts";

export type { ServedMcp } from "./proxy-mcp.ts";
export type * from "./acp-methods.ts";

export type Side = "predecessor" | "successor";

/** A JSON-RPC error answer, thrown by request() and by handlers that want to answer with one. */
export class ProxyRequestError extends RpcError {
  override name = "ProxyRequestError";
  constructor(readonly error: JsonRpcError) {
    super(error.code, error.message, error.data);
  }
}

export interface Peer {
  request<M extends string>(method: M, params?: RequestParams<M>): Promise<RequestResult<M>>;
  notify<M extends string>(method: M, params?: NotificationParams<M>): void;
}

/** `next` forwards (optionally changed) params the default way and resolves with the answer. */
export type RequestHandler<M extends string = string> = (
  params: RequestParams<M>,
  next: (params?: RequestParams<M>) => Promise<RequestResult<M>>,
  from: Side,
) => RequestResult<M> | Promise<RequestResult<M>>;
export type NotificationHandler<M extends string = string> = (params: NotificationParams<M>, next: (params?: NotificationParams<M>) => void, from: Side) => void;

/** How a sub-session's permission requests are answered: an optionId, or undefined for "cancelled". */
export type PermissionAnswerer = (request: RequestPermissionRequest) => string | undefined;

/** What a proxy adds to a session's mcpServers: a declaration (serveMcp's, or any other server). */
export type McpDeclaration = McpServer | JsonObject;

export interface SubSession {
  readonly sessionId: string;
  /** The session's modes as the successor answered session/new, if any. */
  readonly modes: SessionModeState | undefined;
  /** session/set_mode on this session; rejects with the successor's error. */
  setMode(modeId: string): Promise<void>;
  /** Prompts the sub-session; resolves with the stop reason and the agent text it streamed. */
  prompt(prompt: string | ContentBlock[]): Promise<{ stopReason: StopReason; text: string }>;
  /** Every session/update of this session, in order (they are not forwarded to the predecessor). */
  onUpdate(listener: (update: SessionUpdate) => void): void;
  cancel(): void;
  /** Forgets the session (and asks the successor to close it when it can). */
  close(): Promise<void>;
}

interface Owned {
  permission: PermissionAnswerer;
  listeners: ((update: SessionUpdate) => void)[];
}

const SESSION_OPENERS = new Set(["session/new", "session/load", "session/resume"]);
const CLOSED: JsonRpcError = { code: INTERNAL_ERROR, message: "the conductor connection closed" };

/** Wire params or results read as the ACP type they are sent as. A proxy forwards raw (nothing is
 *  validated away), so what its code reads typed is the other end's word: taken on trust here, once. */
function asSent<T>(raw: unknown): T {
  return raw as T;
}

/** The request's option of `kind`, if offered. */
export function optionOfKind(request: RequestPermissionRequest | undefined, kind: "allow_once" | "reject_once"): string | undefined {
  const options: unknown = request?.options;
  if (!Array.isArray(options)) return undefined;
  const found: unknown = options.find((o: unknown) => isObject(o) && o.kind === kind && typeof o.optionId === "string");
  return isObject(found) ? (found.optionId as string) : undefined;
}

/**
 * Allows each request once (never "always": that would be remembered for the user's own sessions).
 * Only for a sub-session whose tools cannot act on anything; research sessions use a narrower answerer.
 */
export const allowOnce: PermissionAnswerer = (req) => optionOfKind(req, "allow_once");

/** Rejects each request once. */
export const rejectOnce: PermissionAnswerer = (req) => optionOfKind(req, "reject_once");

export class Proxy {
  readonly successor: Peer;
  readonly predecessor: Peer;
  readonly ended: Promise<LinkEnd>;
  readonly #peer: RpcPeer;
  #dialect: Dialect = "proxy";
  /** Sub-sessions being opened: while any is, messages for a session nobody knows yet wait in #held. */
  #opening = 0;
  readonly #held: (() => void)[] = [];
  /** Sessions the predecessor opened or named: never held. */
  readonly #known = new Set<string>();
  /** The ACP version the successor answered to the forwarded initialize. */
  #version?: number;
  readonly #requests = new Map<string, RequestHandler>();
  readonly #notifications = new Map<string, NotificationHandler>();
  readonly #owned = new Map<string, Owned>();
  /** MCP servers this proxy serves over ACP. */
  readonly #mcp = new ProxyMcpHost(
    (method, params) => this.#notify(method, params, "successor"),
    () => (this.#dialect === "sacp" ? "sacp" : "acp"),
  );
  readonly #sessionServers: ((params: SessionOpenParams) => McpDeclaration[])[] = [];
  readonly #sessionOpened: ((sessionId: string, params: SessionOpenParams) => void)[] = [];

  constructor(io: HopIo, opts: { maxLineBytes: number }) {
    this.#peer = new RpcPeer({
      ...io,
      maxLineBytes: opts.maxLineBytes,
      onRequest: (method, params, cancellation, id) => this.#receiveRequest(id, method, params as Params, cancellation),
      onNotification: (method, params) => this.#receiveNotification(method, params as Params),
      batches: true,
    });
    // Nobody will answer now: every request still waiting fails (the peer settles them), tool calls stop.
    this.ended = this.#peer.ended.then((end) => (this.#mcp.abortAll(), end));
    const peer = (to: Side): Peer => ({
      request: <M extends string>(method: M, params?: RequestParams<M>) => this.#call(method, params as Params, to).answer as Promise<RequestResult<M>>,
      notify: (method, params) => this.#notify(method, params as Params, to),
    });
    this.successor = peer("successor");
    this.predecessor = peer("predecessor");
  }

  /** Handles requests of `method` (from either side); call `next` to forward them. */
  onRequest<M extends string>(method: M, handler: RequestHandler<M>): this {
    // Stored under its method and only ever called with that method's params: the method's type is erased.
    this.#requests.set(method, handler as unknown as RequestHandler);
    return this;
  }

  onNotification<M extends string>(method: M, handler: NotificationHandler<M>): this {
    // As onRequest: stored under its method, called with that method's params only.
    this.#notifications.set(method, handler as unknown as NotificationHandler);
    return this;
  }

  /**
   * Calls `listener` when the successor answers a session/new, load or resume the predecessor sent, at
   * the moment the answer is read (before anything the successor sent after it), with the request's params.
   */
  onSessionOpened(listener: (sessionId: string, params: SessionOpenParams) => void): this {
    this.#sessionOpened.push(listener);
    return this;
  }

  /** Adds servers to every session/new, load and resume forwarded to the successor (whatever handler forwards it). */
  addMcpServers(servers: (params: SessionOpenParams) => McpDeclaration[]): this {
    this.#sessionServers.push(servers);
    return this;
  }

  /**
   * Serves `server`'s tools over MCP-over-ACP. The returned function gives the declaration to put in
   * a session/new's mcpServers, in the form this proxy's dialect uses (`acp`, or sacp's `acp:` url);
   * its `stop()` stops serving. A tool call gets a signal (the MCP client cancelled) and can report progress.
   */
  serveMcp(name: string, server: McpToolServer): ServedMcp {
    return this.#mcp.serve(name, server);
  }

  /**
   * Opens a session on the successor that this proxy owns and drives; `permission` answers its
   * permission requests. The session is ours from the moment its answer is read: updates and
   * requests for it read in the same chunk never reach the predecessor.
   */
  async openSession(params: Omit<RequestParams<"session/new">, "mcpServers"> & { mcpServers?: McpDeclaration[] }, permission: PermissionAnswerer): Promise<SubSession> {
    const owned: Owned = { permission, listeners: [] };
    this.#opening++;
    let opening = true;
    const opened = () => {
      if (!opening) return;
      opening = false;
      this.#opening--;
      this.#releaseHeld();
    };
    let answer: unknown;
    try {
      answer = await this.#call("session/new", { mcpServers: [], ...params }, "successor", (result) => {
        if (isObject(result) && typeof result.sessionId === "string") this.#owned.set(result.sessionId, owned);
        opened();
      }).answer;
    } finally {
      opened();
    }
    const sessionId = isObject(answer) ? answer.sessionId : undefined;
    if (typeof sessionId !== "string") throw new ProxyRequestError({ code: INTERNAL_ERROR, message: "session/new was answered without a sessionId" });
    const v2Mode = this.#version === 2 && isObject(answer) ? modeOption(answer.configOptions) : undefined;
    return {
      sessionId,
      modes: v2Mode ? v2Mode.modes : isObject(answer) && isObject(answer.modes) ? asSent<SessionModeState>(answer.modes) : undefined,
      // v2 has no session/set_mode: the mode is the session's `mode` config option
      setMode: async (modeId) =>
        void (v2Mode
          ? await this.successor.request("session/set_config_option", { sessionId, configId: v2Mode.configId, type: "id", value: modeId })
          : await this.successor.request("session/set_mode", { sessionId, modeId })),
      onUpdate: (l) => void owned.listeners.push(l),
      prompt: async (prompt) => {
        let text = "";
        // v2: the prompt is only acknowledged; its turn ends with an idle state_update (stop reason or error).
        let idle!: (u: JsonObject) => void;
        const ended = new Promise<JsonObject>((resolve) => (idle = resolve));
        const collect = (u: SessionUpdate) => {
          if (u?.sessionUpdate === "agent_message_chunk" && u.content?.type === "text") text += u.content.text;
          const end = turnEnd(u);
          if (end) idle(end);
        };
        owned.listeners.push(collect);
        try {
          const blocks: ContentBlock[] = typeof prompt === "string" ? [{ type: "text", text: prompt }] : prompt;
          const r = await this.successor.request("session/prompt", { sessionId, prompt: blocks });
          if (this.#version !== 2) return { stopReason: r?.stopReason, text };
          const end = await Promise.race([ended, this.ended.then(() => undefined)]);
          if (!end) throw new ProxyRequestError(CLOSED);
          if (end.stopReason === "error") {
            throw new ProxyRequestError(isObject(end.error) ? asSent<JsonRpcError>(end.error) : { code: INTERNAL_ERROR, message: "the sub-session's turn ended in an error" });
          }
          return { stopReason: end.stopReason as StopReason, text };
        } finally {
          owned.listeners.splice(owned.listeners.indexOf(collect), 1);
        }
      },
      cancel: () => this.successor.notify("session/cancel", { sessionId }),
      close: async () => {
        // Owned until the successor answers: updates of the ending turn must not reach the predecessor.
        await this.successor.request("session/close", { sessionId }).catch(logFailure("closing a sub-session"));
        this.#owned.delete(sessionId);
      },
    };
  }

  /** A session the predecessor opened: the id session/new answered, or the one load and resume named. */
  #noteOpened(result: unknown, params: Params): void {
    const id = isObject(result) && typeof result.sessionId === "string" ? result.sessionId : isObject(params) && typeof params.sessionId === "string" ? params.sessionId : undefined;
    if (id === undefined) return;
    this.#known.add(id);
    for (const l of this.#sessionOpened) {
      try {
        l(id, asSent<SessionOpenParams>(params));
      } catch (err) {
        logFailure("a session-opened listener")(err);
      }
    }
  }

  /** Messages held while a sub-session opened, handled now in the order they came. */
  #releaseHeld(): void {
    if (this.#opening > 0) return;
    for (const handle of this.#held.splice(0)) handle();
  }

  /** Whether a message from the successor for a session must wait until the sub-sessions being opened have their ids. */
  #mustHold(method: string, params: Params, from: Side): boolean {
    if (this.#opening === 0 || from !== "successor" || !isObject(params)) return false;
    if (method !== "session/update" && method !== "session/request_permission") return false;
    const id = params.sessionId;
    return typeof id === "string" && !this.#owned.has(id) && !this.#known.has(id);
  }

  #withServers(p: Params): Params {
    if (this.#sessionServers.length === 0 || !isObject(p)) return p;
    const declared = Array.isArray(p.mcpServers) ? p.mcpServers : [];
    return { ...p, mcpServers: [...declared, ...this.#sessionServers.flatMap((f) => f(asSent<SessionOpenParams>(p)))] };
  }

  /**
   * Sends a request towards `to`; `onAnswer` hears a successful result synchronously, as it is read.
   * Returns the id it went out under (what a cancel names) and the answer.
   */
  #call(method: string, params: Params, to: Side, onAnswer?: (result: unknown) => void): { id: JsonRpcId; answer: Promise<unknown> } {
    let id!: JsonRpcId;
    const out = this.#outgoing(method, params, to, true);
    const answer = new Promise<unknown>((resolve, reject) => {
      id = this.#peer.send(out.method, out.params, (a) => {
        if ("closed" in a) return reject(new ProxyRequestError(CLOSED));
        if ("error" in a) return reject(new ProxyRequestError(a.error));
        onAnswer?.(a.result);
        resolve(a.result);
      });
    });
    return { id, answer };
  }

  #notify(method: string, params: Params, to: Side): void {
    const out = this.#outgoing(method, params, to, false);
    this.#peer.notify(out.method, out.params);
  }

  #outgoing(method: string, params: Params, to: Side, isRequest: boolean): { method: string; params?: Params } {
    if (to === "successor") return wrapSuccessor(this.#dialect, { method, params }, isRequest);
    return params === undefined ? { method } : { method, params };
  }

  /** Every request is answered through respond(), so an answer can be written the moment it is read. */
  #receiveRequest(id: JsonRpcId, rawMethod: string, rawParams: Params, cancellation: Cancellation): typeof ANSWER_LATER {
    const { method, params, from } = this.#unwrap(rawMethod, rawParams);
    const handle = () => this.#answer(id, method, params, from, cancellation);
    if (this.#mustHold(method, params, from)) this.#held.push(handle);
    else handle();
    return ANSWER_LATER;
  }

  #receiveNotification(rawMethod: string, rawParams: Params): void {
    const { method, params, from } = this.#unwrap(rawMethod, rawParams);
    // A wrapped $/cancel_request would name an id of another hop: the conductor never sends one.
    if (method === "$/cancel_request") return;
    const handle = () => this.#notification(method, params, from);
    if (this.#mustHold(method, params, from)) this.#held.push(handle);
    else handle();
  }

  #unwrap(method: string, params: Params): { method: string; params: Params; from: Side } {
    const wrapped = unwrapSuccessor(method, params);
    if (wrapped) return { method: wrapped.inner.method, params: wrapped.inner.params, from: "successor" };
    if (isObject(params) && typeof params.sessionId === "string") this.#known.add(params.sessionId);
    return { method, params, from: "predecessor" };
  }

  #answer(id: JsonRpcId, method: string, params: Params, from: Side, cancellation: Cancellation): void {
    const dialect = from === "predecessor" ? dialectOfInitialize(method, params) : undefined;
    if (dialect) {
      this.#dialect = dialect;
      const forward = this.#call("initialize", initializeAnswerFor(undefined, params) as Params, "successor").answer;
      return void this.#settle(
        id,
        forward.then((r) => ((this.#version = answeredVersion(r)), initializeAnswerFor(dialect, r))),
      );
    }
    const other: Side = from === "predecessor" ? "successor" : "predecessor";
    const mcp = from === "successor" && isObject(params) ? this.#mcp.answer(method, params) : undefined;
    if (mcp) return void this.#settle(id, mcp);
    const owned = method === "session/request_permission" && isObject(params) ? this.#owned.get(params.sessionId as string) : undefined;
    if (owned && from === "successor") {
      let optionId: string | undefined;
      try {
        optionId = owned.permission(asSent<RequestPermissionRequest>(params));
      } catch (err) {
        // A broken answerer costs this one answer (cancelled), never the connection.
        logFailure("answering a sub-session's permission request")(err);
      }
      this.#peer.respond(id, { result: { outcome: optionId === undefined ? { outcome: "cancelled" } : { outcome: "selected", optionId } } });
      return;
    }
    const opener = SESSION_OPENERS.has(method) && from === "predecessor";
    // Called synchronously, so a handler that forwards at once keeps the order messages came in.
    const handler = this.#requests.get(method);
    if (!handler) return this.#relay(id, method, opener ? this.#withServers(params) : params, other, cancellation, opener);
    const next = (p: Params = params) => {
      const sent = this.#call(method, opener ? this.#withServers(p) : p, other, opener ? (result) => this.#noteOpened(result, p) : undefined);
      cancellation.onCancel(() => this.#peer.cancel(sent.id));
      return sent.answer;
    };
    let answer: unknown;
    try {
      answer = handler(params as JsonObject, next as (p?: JsonObject) => Promise<unknown>, from);
    } catch (err) {
      answer = Promise.reject(err);
    }
    void this.#settle(id, Promise.resolve(answer));
  }

  /**
   * Forwards a request nobody intercepts and relays its answer the moment it is read, untouched (no
   * promise in between), so an answer is never overtaken by messages the successor sent after it.
   */
  #relay(id: JsonRpcId, method: string, params: Params, to: Side, cancellation: Cancellation, opener: boolean): void {
    const out = this.#outgoing(method, params, to, true);
    const forwardId = this.#peer.send(out.method, out.params, (a: Outcome | { closed: string }) => {
      if ("closed" in a) return void this.#peer.respond(id, { error: CLOSED });
      if (opener && "result" in a) this.#noteOpened(a.result, params);
      this.#peer.respond(id, a);
    });
    cancellation.onCancel(() => this.#peer.cancel(forwardId));
  }

  async #settle(id: JsonRpcId, answer: Promise<unknown>): Promise<void> {
    try {
      const result = await answer;
      this.#peer.respond(id, { result: result ?? {} });
    } catch (err) {
      this.#peer.respond(id, { error: errorOf(err) });
    }
  }

  #notification(method: string, params: Params, from: Side): void {
    // consumer notifications to our own MCP servers (initialized, cancelled) end there
    if (from === "successor" && isObject(params) && this.#mcp.notification(method, params)) return;
    const sessionId = isObject(params) ? params.sessionId : undefined;
    const owned = method === "session/update" && from === "successor" && typeof sessionId === "string" ? this.#owned.get(sessionId) : undefined;
    if (owned) {
      for (const l of [...owned.listeners]) {
        try {
          l((params as Record<string, unknown>).update as SessionUpdate);
        } catch (err) {
          logFailure("a sub-session's update listener")(err);
        }
      }
      return;
    }
    const other: Side = from === "predecessor" ? "successor" : "predecessor";
    const next = (p: Params = params) => this.#notify(method, p, other);
    const handler = this.#notifications.get(method);
    if (!handler) return next();
    try {
      handler(params as JsonObject, next as (p?: JsonObject) => void, from);
    } catch (err) {
      logFailure(`the ${method} handler`)(err);
    }
  }
}

/** v2: the session's mode as v1's mode state, from its `mode` select config option (options flat or
 *  grouped), with that option's id; undefined when it offers none. */
function modeOption(options: unknown): { configId: string; modes: SessionModeState } | undefined {
  const o = Array.isArray(options) ? options.find((c) => isObject(c) && c.category === "mode" && c.type === "select") : undefined;
  if (!isObject(o) || typeof o.configId !== "string" || typeof o.currentValue !== "string" || !Array.isArray(o.options)) return undefined;
  const values = o.options.flatMap((v) => (isObject(v) && Array.isArray(v.options) ? v.options : [v])).filter(isObject);
  const availableModes = values.filter((v) => typeof v.value === "string").map((v) => ({ id: v.value as string, name: typeof v.name === "string" ? v.name : (v.value as string) }));
  return { configId: o.configId, modes: { currentModeId: o.currentValue, availableModes } };
}
