// Owns the proxy library (SPEC §4.2): a chain component written in this codebase. Everything is
// forwarded by default, raw (unknown fields and update kinds survive); a proxy intercepts the methods
// it cares about, adds MCP servers to `session/new`, opens sub-sessions on its successor and drives
// them, and answers permission requests of the sessions it owns. Speaks whichever dialect the
// conductor initializes it in. Does not spawn anything or touch process stdio (callers pass a HopIo).
import { logFailure } from "../log.ts";
import { errorResponse, INTERNAL_ERROR, isObject, type JsonRpcError, type JsonRpcId } from "../wire/jsonrpc.ts";
import { type Dialect, dialectOfInitialize, initializeAnswerFor, type Params, unwrapSuccessor, wrapSuccessor } from "./dialect.ts";
import { Link, type LinkEnd, type WellFormed } from "../wire/link.ts";
import type { McpToolServer } from "./mcp-over-acp.ts";
import { InnerMcpError, ProxyMcpHost, type ServedMcp } from "./proxy-mcp.ts";
import type { HopIo } from "./router.ts";

export type { ServedMcp } from "./proxy-mcp.ts";

export type Side = "predecessor" | "successor";

/** A JSON-RPC error answer, thrown by request() and by handlers that want to answer with one. */
export class ProxyRequestError extends Error {
  constructor(readonly error: JsonRpcError) {
    super(error.message);
  }
}

export interface Peer {
  request(method: string, params?: Params): Promise<any>;
  notify(method: string, params?: Params): void;
}

/** `next` forwards (optionally changed) params the default way and resolves with the answer. */
export type RequestHandler = (params: any, next: (params?: any) => Promise<any>, from: Side) => unknown;
export type NotificationHandler = (params: any, next: (params?: any) => void, from: Side) => void;

/** How a sub-session's permission requests are answered: an optionId, or undefined for "cancelled". */
export type PermissionAnswer = (request: any) => string | undefined;

export interface SubSession {
  readonly sessionId: string;
  /** The session's modes as the successor answered session/new (`{currentModeId, availableModes}`), if any. */
  readonly modes: { currentModeId?: string; availableModes?: { id: string; name?: string }[] } | undefined;
  /** session/set_mode on this session; rejects with the successor's error. */
  setMode(modeId: string): Promise<void>;
  /** Prompts the sub-session; resolves with the stop reason and the agent text it streamed. */
  prompt(prompt: string | unknown[]): Promise<{ stopReason: string; text: string }>;
  /** Every session/update of this session, in order (they are not forwarded to the predecessor). */
  onUpdate(listener: (update: any) => void): void;
  cancel(): void;
  /** Forgets the session (and asks the successor to close it when it can). */
  close(): Promise<void>;
}

interface Owned {
  permission: PermissionAnswer;
  listeners: ((update: any) => void)[];
}

const SESSION_OPENERS = new Set(["session/new", "session/load", "session/resume"]);

/** The request's option of `kind`, if offered. */
export function optionOfKind(request: any, kind: "allow_once" | "reject_once"): string | undefined {
  const options = request?.options;
  return Array.isArray(options) ? options.find((o) => o?.kind === kind && typeof o.optionId === "string")?.optionId : undefined;
}

/**
 * Allows each request once (never "always": that would be remembered for the user's own sessions).
 * Only for a sub-session whose tools cannot act on anything; research sessions use a narrower answerer.
 */
export const allowOnce: PermissionAnswer = (req) => optionOfKind(req, "allow_once");

/** Rejects each request once. */
export const rejectOnce: PermissionAnswer = (req) => optionOfKind(req, "reject_once");

export class Proxy {
  readonly successor: Peer;
  readonly predecessor: Peer;
  readonly ended: Promise<LinkEnd>;
  readonly #link: Link;
  #dialect: Dialect = "proxy";
  #nextId = 0;
  readonly #pending = new Map<JsonRpcId, { resolve: (v: any) => void; reject: (e: unknown) => void; onAnswer?: (result: any) => void }>();
  /** Sub-sessions being opened: while any is, messages for a session nobody knows yet wait in #held. */
  #opening = 0;
  readonly #held: WellFormed[] = [];
  /** Sessions the predecessor opened or named: never held. */
  readonly #known = new Set<string>();
  readonly #requests = new Map<string, RequestHandler>();
  readonly #notifications = new Map<string, NotificationHandler>();
  readonly #owned = new Map<string, Owned>();
  /** Requests we received and forwarded: their id → the id we forwarded them under. */
  readonly #forwarded = new Map<JsonRpcId, JsonRpcId>();
  /** MCP servers this proxy serves over ACP. */
  readonly #mcp = new ProxyMcpHost(
    (method, params) => this.#notify(method, params, "successor"),
    () => (this.#dialect === "sacp" ? "sacp" : "acp"),
  );
  readonly #sessionServers: ((params: any) => unknown[])[] = [];
  readonly #sessionOpened: ((sessionId: string, params: any) => void)[] = [];

  constructor(io: HopIo, opts: { maxLineBytes: number }) {
    this.#link = new Link({ input: io.input, sink: io.sink, maxLineBytes: opts.maxLineBytes, onMessage: (m) => this.#receive(m) });
    this.ended = this.#link.ended.then((end) => {
      // Nobody will answer now: every request still waiting fails.
      for (const p of this.#pending.values()) p.reject(new ProxyRequestError({ code: INTERNAL_ERROR, message: "the conductor connection closed" }));
      this.#pending.clear();
      this.#mcp.abortAll();
      return end;
    });
    this.successor = {
      request: (method, params) => this.#request(method, params, "successor"),
      notify: (method, params) => this.#notify(method, params, "successor"),
    };
    this.predecessor = {
      request: (method, params) => this.#request(method, params, "predecessor"),
      notify: (method, params) => this.#notify(method, params, "predecessor"),
    };
  }

  /** Handles requests of `method` (from either side); call `next` to forward them. */
  onRequest(method: string, handler: RequestHandler): this {
    this.#requests.set(method, handler);
    return this;
  }

  onNotification(method: string, handler: NotificationHandler): this {
    this.#notifications.set(method, handler);
    return this;
  }

  /**
   * Calls `listener` when the successor answers a session/new, load or resume the predecessor sent, at
   * the moment the answer is read (before anything the successor sent after it), with the request's params.
   */
  onSessionOpened(listener: (sessionId: string, params: any) => void): this {
    this.#sessionOpened.push(listener);
    return this;
  }

  /** Adds servers to every session/new, load and resume forwarded to the successor (whatever handler forwards it). */
  addMcpServers(servers: (params: any) => unknown[]): this {
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
  async openSession(params: { cwd: string; mcpServers?: unknown[]; _meta?: unknown }, permission: PermissionAnswer): Promise<SubSession> {
    const owned: Owned = { permission, listeners: [] };
    this.#opening++;
    let opening = true;
    const opened = () => {
      if (!opening) return;
      opening = false;
      this.#opening--;
      this.#releaseHeld();
    };
    let answer: any;
    try {
      answer = await this.#request("session/new", { mcpServers: [], ...params }, "successor", (result) => {
        if (typeof result?.sessionId === "string") this.#owned.set(result.sessionId, owned);
        opened();
      });
    } finally {
      opened();
    }
    const sessionId: string = answer?.sessionId;
    if (typeof sessionId !== "string") throw new ProxyRequestError({ code: INTERNAL_ERROR, message: "session/new was answered without a sessionId" });
    return {
      sessionId,
      modes: isObject(answer.modes) ? answer.modes : undefined,
      setMode: async (modeId) => void (await this.successor.request("session/set_mode", { sessionId, modeId })),
      onUpdate: (l) => void owned.listeners.push(l),
      prompt: async (prompt) => {
        let text = "";
        const collect = (u: any) => {
          if (u?.sessionUpdate === "agent_message_chunk" && u.content?.type === "text") text += u.content.text;
        };
        owned.listeners.push(collect);
        try {
          const blocks = typeof prompt === "string" ? [{ type: "text", text: prompt }] : prompt;
          const r = await this.successor.request("session/prompt", { sessionId, prompt: blocks });
          return { stopReason: r?.stopReason, text };
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
        l(id, params);
      } catch (err) {
        logFailure("a session-opened listener")(err);
      }
    }
  }

  /** Messages held while a sub-session opened, handled now in the order they came. */
  #releaseHeld(): void {
    if (this.#opening > 0) return;
    for (const m of this.#held.splice(0)) this.#receive(m);
  }

  /** Whether `m` (from the successor, for a session) must wait until the sub-sessions being opened have their ids. */
  #mustHold(m: WellFormed, method: string, params: Params, from: Side): boolean {
    if (this.#opening === 0 || from !== "successor" || m.kind === "response" || !isObject(params)) return false;
    if (method !== "session/update" && method !== "session/request_permission") return false;
    const id = params.sessionId;
    return typeof id === "string" && !this.#owned.has(id) && !this.#known.has(id);
  }

  #withServers(p: any): any {
    if (this.#sessionServers.length === 0) return p;
    const declared = Array.isArray(p?.mcpServers) ? p.mcpServers : [];
    return { ...p, mcpServers: [...declared, ...this.#sessionServers.flatMap((f) => f(p))] };
  }

  #request(method: string, params: Params, to: Side, onAnswer?: (result: any) => void): Promise<any> {
    const id = this.#nextId++;
    const promise = new Promise<any>((resolve, reject) => this.#pending.set(id, { resolve, reject, ...(onAnswer ? { onAnswer } : {}) }));
    this.#link.send({ jsonrpc: "2.0", id, ...this.#outgoing(method, params, to, true) });
    return promise;
  }

  #notify(method: string, params: Params, to: Side): void {
    this.#link.send({ jsonrpc: "2.0", ...this.#outgoing(method, params, to, false) });
  }

  #outgoing(method: string, params: Params, to: Side, isRequest: boolean): { method: string; params?: Params } {
    if (to === "successor") return wrapSuccessor(this.#dialect, { method, params }, isRequest);
    return params === undefined ? { method } : { method, params };
  }

  #receive(m: WellFormed): void {
    if (m.kind === "response") {
      const p = m.id === null ? undefined : this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id!);
      if (m.error) p.reject(new ProxyRequestError(m.error));
      else {
        // Synchronously, before the next message of the same chunk is read.
        p.onAnswer?.(m.result);
        p.resolve(m.result);
      }
      return;
    }
    let method = m.method;
    let params = m.params as Params;
    let from: Side = "predecessor";
    const wrapped = unwrapSuccessor(method, params);
    if (wrapped) [method, params, from] = [wrapped.inner.method, wrapped.inner.params, "successor"];
    if (this.#mustHold(m, method, params, from)) return void this.#held.push(m);
    if (from === "predecessor" && isObject(params) && typeof params.sessionId === "string") this.#known.add(params.sessionId);
    if (method === "$/cancel_request" && isObject(params)) {
      const ours = this.#forwarded.get(params.requestId as JsonRpcId);
      if (ours !== undefined) this.#link.send({ jsonrpc: "2.0", method, params: { ...params, requestId: ours } });
      return;
    }
    if (m.kind === "request") this.#answer(m.id, method, params, from);
    else this.#notification(method, params, from);
  }

  #answer(id: JsonRpcId, method: string, params: Params, from: Side): void {
    const dialect = from === "predecessor" ? dialectOfInitialize(method, params) : undefined;
    if (dialect) {
      this.#dialect = dialect;
      const forward = this.successor.request("initialize", initializeAnswerFor(undefined, params) as Params);
      void this.#settle(id, forward.then((r) => initializeAnswerFor(dialect, r)));
      return;
    }
    const other: Side = from === "predecessor" ? "successor" : "predecessor";
    const next = (p: any = params) => {
      const forwardId = this.#nextId;
      const opener = SESSION_OPENERS.has(method) && from === "predecessor";
      const r = this.#request(method, opener ? this.#withServers(p) : p, other, opener ? (result) => this.#noteOpened(result, p) : undefined);
      this.#forwarded.set(id, forwardId);
      return r;
    };
    const mcp = from === "successor" && isObject(params) ? this.#mcp.answer(method, params) : undefined;
    if (mcp) return void this.#settle(id, mcp);
    const owned = method === "session/request_permission" && isObject(params) ? this.#owned.get(params.sessionId as string) : undefined;
    if (owned && from === "successor") {
      let optionId: string | undefined;
      try {
        optionId = owned.permission(params);
      } catch (err) {
        // A broken answerer costs this one answer (cancelled), never the connection.
        logFailure("answering a sub-session's permission request")(err);
      }
      void this.#settle(id, Promise.resolve({ outcome: optionId === undefined ? { outcome: "cancelled" } : { outcome: "selected", optionId } }));
      return;
    }
    // Called synchronously, so a handler that forwards at once keeps the order messages came in.
    const handler = this.#requests.get(method);
    if (!handler) return this.#relay(id, method, from === "predecessor" && SESSION_OPENERS.has(method) ? this.#withServers(params) : params, other);
    let answer: unknown;
    try {
      answer = handler(params, next, from);
    } catch (err) {
      answer = Promise.reject(err);
    }
    void this.#settle(id, Promise.resolve(answer));
  }

  /**
   * Forwards a request nobody intercepts and relays its answer the moment it is read, untouched (no
   * promise in between), so an answer is never overtaken by messages the successor sent after it.
   */
  #relay(id: JsonRpcId, method: string, params: Params, to: Side): void {
    const forwardId = this.#nextId++;
    this.#forwarded.set(id, forwardId);
    const done = () => void this.#forwarded.delete(id);
    this.#pending.set(forwardId, {
      onAnswer: (result) => to === "successor" && SESSION_OPENERS.has(method) && this.#noteOpened(result, params),
      resolve: (result) => (done(), this.#link.send({ jsonrpc: "2.0", id, result })),
      reject: (err) => (done(), this.#link.send(errorResponse(id, (err as ProxyRequestError).error))),
    });
    this.#link.send({ jsonrpc: "2.0", id: forwardId, ...this.#outgoing(method, params, to, true) });
  }

  async #settle(id: JsonRpcId, answer: Promise<unknown>): Promise<void> {
    try {
      const result = await answer;
      this.#link.send({ jsonrpc: "2.0", id, result: result ?? {} });
    } catch (err) {
      const error = err instanceof ProxyRequestError || err instanceof InnerMcpError ? err.error : { code: INTERNAL_ERROR, message: err instanceof Error ? err.message : String(err) };
      this.#link.send(errorResponse(id, error));
    } finally {
      this.#forwarded.delete(id);
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
          l((params as Record<string, unknown>).update);
        } catch (err) {
          logFailure("a sub-session's update listener")(err);
        }
      }
      return;
    }
    const other: Side = from === "predecessor" ? "successor" : "predecessor";
    const next = (p: any = params) => this.#notify(method, p, other);
    const handler = this.#notifications.get(method);
    if (!handler) return next();
    try {
      handler(params, next, from);
    } catch (err) {
      logFailure(`the ${method} handler`)(err);
    }
  }
}
