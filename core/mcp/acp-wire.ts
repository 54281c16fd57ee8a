// Owns the consumer's side of MCP-over-ACP for the agent's transport and the conductor's bridge: the
// dialect of a declared `{type:"acp"}` server (`mcp/connect` → `connectionId`, `mcp/message` by
// connectionId answered with the inner result, `mcp/disconnect` a request: the Rust conductor 2.x; or, on
// -32601, the ACP SDK 2.4 stateless `mcp/message {serverId, requestId}` answered `{result}`|`{error}`),
// decoding an outer answer into the inner MCP response, and the provider's requests to our MCP client
// (connect dialect: an `mcp/message {connectionId, method, params}` request towards the consumer, answered
// with the client's inner result, or its error as the outer error); both routed by the connection they
// name (ConnectionRoutes: the one router of both relays, the agent's transport and the conductor's bridge).
// Does no I/O of its own.
import { INTERNAL_ERROR, INVALID_PARAMS, isJsonRpcError, isObject, type JsonRpcError, type JsonRpcId, METHOD_NOT_FOUND, REQUEST_CANCELLED } from "../wire/jsonrpc.ts";
import { PendingRequests } from "../wire/pending.ts";

/** How an outer ACP request ended. */
export type OuterAnswer = { result: unknown } | { error: JsonRpcError };

/** The ACP connection towards the provider, as the consumer needs it: requests never reject. */
export interface OuterPeer {
  request(method: string, params: Record<string, unknown>): Promise<OuterAnswer>;
  notify(method: string, params: Record<string, unknown>): void;
}

export type InnerResponse = { jsonrpc: "2.0"; id: JsonRpcId; result: Record<string, unknown> } | { jsonrpc: "2.0"; id: JsonRpcId; error: JsonRpcError };

/** A JSON-RPC failure of the outer ACP request, as an inner MCP error. */
export function outerFailure(error: unknown): JsonRpcError {
  if (isJsonRpcError(error)) return error;
  return { code: INTERNAL_ERROR, message: "MCP-over-ACP request failed" };
}

/**
 * The inner MCP response to request `id` for an outer answer. `carried`: the answer is the stateless
 * dialect's `{result}` | `{error}` envelope; else it is the inner result itself. A missing or non-object
 * result is `{}`: MCP clients reject a response whose result is null.
 */
export function innerResponse(id: JsonRpcId, answer: OuterAnswer, carried: boolean): InnerResponse {
  if ("error" in answer) return { jsonrpc: "2.0", id, error: outerFailure(answer.error) };
  let r = answer.result;
  if (carried) {
    if (isObject(r) && isObject(r.error) && !Object.hasOwn(r, "result")) return { jsonrpc: "2.0", id, error: outerFailure(r.error) };
    r = isObject(r) ? r.result : undefined;
  }
  return { jsonrpc: "2.0", id, result: isObject(r) ? r : {} };
}

/** Params of an inner message: omitted when absent (the Rust schema's Option), kept as given otherwise. */
function withParams(base: Record<string, unknown>, method: string, params: unknown): Record<string, unknown> {
  return params === undefined ? { ...base, method } : { ...base, method, params };
}

/**
 * One consumer connection to a declared server. open() picks the dialect: the connect form when the
 * provider answers `mcp/connect`, the stateless form when it is unknown (-32601) or, with
 * `connectTimeoutMs`, not answered within it (a client that never answers unknown requests; a late
 * connectionId is disconnected at once); any other error (an unknown server id, say) is the
 * connection's failure, given to every inner request.
 */
export class McpOverAcpConnection {
  #mode: { kind: "connect"; connectionId: string } | { kind: "stateless" } | { kind: "failed"; error: JsonRpcError } | undefined;
  #opening?: Promise<void>;
  #closed = false;

  constructor(
    readonly serverId: string,
    private readonly peer: OuterPeer,
    private readonly connectTimeoutMs?: number,
  ) {}

  /** The provider's connectionId once opened in the connect form; undefined otherwise (the stateless form has none). */
  get connectionId(): string | undefined {
    return this.#mode?.kind === "connect" ? this.#mode.connectionId : undefined;
  }

  /** What the provider's notifications for this connection name: its connectionId, or (stateless) the serverId. */
  get key(): string | undefined {
    const m = this.#mode;
    return m?.kind === "connect" ? m.connectionId : m?.kind === "stateless" ? this.serverId : undefined;
  }

  /** Opens the connection once; resolves when the dialect is known, with the failure when it could not open. */
  async open(): Promise<JsonRpcError | undefined> {
    await this.#open();
    return this.#mode?.kind === "failed" ? this.#mode.error : undefined;
  }

  #open(): Promise<void> {
    this.#opening ??= this.#connectAnswer().then((a) => {
      if (a === "timeout") {
        this.#mode = { kind: "stateless" };
        return;
      }
      if ("error" in a) {
        this.#mode = a.error.code === METHOD_NOT_FOUND ? { kind: "stateless" } : { kind: "failed", error: { ...a.error, message: `mcp/connect ${this.serverId}: ${a.error.message}` } };
        return;
      }
      const id = isObject(a.result) ? a.result.connectionId : undefined;
      this.#mode =
        typeof id === "string" && id !== ""
          ? { kind: "connect", connectionId: id }
          : { kind: "failed", error: { code: INTERNAL_ERROR, message: `mcp/connect ${this.serverId} was answered without a connectionId` } };
    });
    return this.#opening;
  }

  /** The answer to `mcp/connect`, or "timeout" when connectTimeoutMs passed first. */
  #connectAnswer(): Promise<OuterAnswer | "timeout"> {
    const asked = this.peer.request("mcp/connect", { serverId: this.serverId });
    if (this.connectTimeoutMs === undefined) return asked;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), this.connectTimeoutMs)));
    return Promise.race([asked, late]).then((a) => {
      clearTimeout(timer);
      if (a === "timeout") {
        // The stateless form is in use now: a connection the provider opens after all is closed again.
        void asked.then((l) => {
          const id = "result" in l && isObject(l.result) ? l.result.connectionId : undefined;
          if (typeof id === "string" && id !== "") void this.peer.request("mcp/disconnect", { connectionId: id });
        });
      }
      return a;
    });
  }

  /** One inner MCP request; resolves with its MCP response (never rejects). */
  async request(id: JsonRpcId, method: string, params: unknown): Promise<InnerResponse> {
    await this.open();
    const m = this.#mode!;
    if (this.#closed) return { jsonrpc: "2.0", id, error: { code: INTERNAL_ERROR, message: `MCP-over-ACP server ${this.serverId}: the connection is closed` } };
    if (m.kind === "failed") return { jsonrpc: "2.0", id, error: m.error };
    if (m.kind === "connect") return innerResponse(id, await this.peer.request("mcp/message", withParams({ connectionId: m.connectionId }, method, params)), false);
    const answer = await this.peer.request("mcp/message", { serverId: this.serverId, requestId: id, method, params: params ?? null });
    return innerResponse(id, answer, true);
  }

  /** One inner MCP notification (dropped when the connection failed or closed). */
  async notify(method: string, params: unknown): Promise<void> {
    await this.open();
    const m = this.#mode!;
    if (this.#closed || m.kind === "failed") return;
    if (m.kind === "connect") this.peer.notify("mcp/message", withParams({ connectionId: m.connectionId }, method, params));
    else this.peer.notify("mcp/message", { serverId: this.serverId, method, params: params ?? null });
  }

  /** Closes the connection: `mcp/disconnect` (a request) in the connect form; nothing to say in the stateless one. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#opening === undefined) return;
    await this.#opening;
    const m = this.#mode!;
    if (m.kind === "connect") await this.peer.request("mcp/disconnect", { connectionId: m.connectionId });
  }
}

/** The inner message a provider's `mcp/message` notification carries, and the key it names (connectionId or serverId). */
export function providerNotification(params: unknown): { key: string; message: ProviderNotice } | undefined {
  if (!isObject(params) || typeof params.method !== "string") return undefined;
  const key = typeof params.connectionId === "string" ? params.connectionId : typeof params.serverId === "string" ? params.serverId : undefined;
  if (key === undefined) return undefined;
  return { key, message: { jsonrpc: "2.0", method: params.method, ...(isObject(params.params) ? { params: params.params } : {}) } };
}

/** A provider's request to the consumer: the inner request it carries, or why it cannot be delivered. */
export type ProviderRequest = { connectionId: string; method: string; params?: Record<string, unknown> };

/**
 * Reads a provider's `mcp/message` request (the MCP server asking its client): the connect dialect
 * names its connection (`{connectionId, method, params?}`, params an object or null, as the Rust SDK's
 * `MessageMcpRequest`). The stateless dialect carries no such requests (its provider only notifies).
 */
export function providerRequest(params: unknown): ProviderRequest | { error: JsonRpcError } {
  const bad = (message: string) => ({ error: { code: INVALID_PARAMS, message: `mcp/message: ${message}` } });
  if (!isObject(params)) return bad("params must be an object");
  if (typeof params.method !== "string") return bad("method (the inner MCP method) must be a string");
  if (typeof params.connectionId !== "string") return bad("a provider's request must name the connectionId it was opened with (mcp/connect)");
  const inner = params.params;
  if (inner !== undefined && inner !== null && !isObject(inner)) return bad("params (the inner MCP params) must be an object or null");
  return { connectionId: params.connectionId, method: params.method, ...(isObject(inner) ? { params: inner } : {}) };
}

/** What a provider's `mcp/message` notification carries to the MCP client of its connection. */
export type ProviderNotice = { jsonrpc: "2.0"; method: string; params?: Record<string, unknown> };

/**
 * A provider's messages by the connection they name: its requests to each open connection's
 * ClientRequests (by connectionId), its notifications to the listeners of their key (connectionId, or
 * the stateless form's serverId). Both relays (the agent's transport, the conductor's bridge) route
 * through one of these.
 */
export class ConnectionRoutes {
  readonly #open = new Map<string, ClientRequests>();
  readonly #listeners = new Map<string, Set<(message: ProviderNotice) => void>>();

  /** Hears the provider's notifications for `key` until the returned function is called. */
  listen(key: string, listener: (message: ProviderNotice) => void): () => void {
    const set = this.#listeners.get(key) ?? new Set();
    set.add(listener);
    this.#listeners.set(key, set);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(key) === set) this.#listeners.delete(key);
    };
  }

  /** A provider's `mcp/message` notification, to every listener of the key it names: false when none hears it. */
  notify(params: unknown): boolean {
    const n = providerNotification(params);
    const set = n ? this.#listeners.get(n.key) : undefined;
    if (!n || !set) return false;
    for (const l of set) l(n.message);
    return true;
  }

  /** Takes the provider's requests for `connectionId` until the returned function is called. */
  serve(connectionId: string, asked: ClientRequests): () => void {
    this.#open.set(connectionId, asked);
    return () => {
      if (this.#open.get(connectionId) === asked) this.#open.delete(connectionId);
    };
  }

  /**
   * A provider's `mcp/message` request: the answer of the MCP client of the connection it names, or
   * -32602 for a request that is malformed or names no open connection (`whose` ends that message:
   * whose connections these are).
   */
  route(params: unknown, whose: string, signal?: AbortSignal): Promise<OuterAnswer> {
    const r = providerRequest(params);
    if ("error" in r) return Promise.resolve(r);
    const asked = this.#open.get(r.connectionId);
    if (!asked) return Promise.resolve({ error: { code: INVALID_PARAMS, message: `mcp/message: no open MCP-over-ACP connection ${JSON.stringify(r.connectionId)} ${whose}` } });
    return asked.ask(r.method, r.params, signal);
  }
}

/** An inner request as our MCP client reads it. */
export type InnerRequest = { jsonrpc: "2.0"; id: JsonRpcId; method: string; params?: Record<string, unknown> };

/**
 * The provider's requests on one connection, waiting for our MCP client: each gets an inner id of this
 * connection's, goes to the client through `deliver`, and settles with the client's response (its result,
 * or its error). A cancelled one tells the client (`notifications/cancelled`) and settles -32800; closing
 * settles every waiting one with an error.
 */
export class ClientRequests {
  /** Ids from 1, as an MCP client's own would be. */
  readonly #waiting = new PendingRequests<(answer: OuterAnswer) => void>(1);
  #closed?: string;

  constructor(private readonly deliver: (message: InnerRequest | { jsonrpc: "2.0"; method: string; params: Record<string, unknown> }) => void) {}

  ask(method: string, params: Record<string, unknown> | undefined, signal?: AbortSignal): Promise<OuterAnswer> {
    if (this.#closed !== undefined) return Promise.resolve({ error: { code: INTERNAL_ERROR, message: this.#closed } });
    return new Promise<OuterAnswer>((resolve) => {
      const onAbort = () => {
        if (!this.#waiting.take(id)) return;
        this.deliver({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "the provider cancelled its request" } });
        resolve({ error: { code: REQUEST_CANCELLED, message: `${method} was cancelled by the provider` } });
      };
      const id = this.#waiting.add((answer) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(answer);
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.deliver(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
      if (signal?.aborted) onAbort();
    });
  }

  /** A response of our MCP client: true when it answers one of the waiting requests (which it settles). */
  answered(message: { id?: unknown; result?: unknown; error?: unknown }): boolean {
    const id = message.id;
    if (typeof id !== "number" && typeof id !== "string") return false;
    const settle = this.#waiting.take(id);
    if (!settle) return false;
    settle(message.error !== undefined ? { error: outerFailure(message.error) } : { result: message.result });
    return true;
  }

  /** Settles every waiting request with `why` as its error; later ones get it at once. */
  close(why: string): void {
    this.#closed ??= why;
    for (const settle of this.#waiting.takeAll()) settle({ error: { code: INTERNAL_ERROR, message: why } });
  }
}
