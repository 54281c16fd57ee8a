// Owns the consumer's side of MCP-over-ACP for the agent's transport and the conductor's bridge: the
// dialect of a declared `{type:"acp"}` server (`mcp/connect` → `connectionId`, `mcp/message` by
// connectionId answered with the inner result, `mcp/disconnect` a request: the Rust conductor 2.x; or, on
// -32601, the ACP SDK 2.4 stateless `mcp/message {serverId, requestId}` answered `{result}`|`{error}`),
// and decoding an outer answer into the inner MCP response. Does no I/O of its own.
import { INTERNAL_ERROR, isObject, type JsonRpcError, type JsonRpcId, METHOD_NOT_FOUND } from "../wire/jsonrpc.ts";

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
  if (isObject(error) && typeof error.code === "number" && typeof error.message === "string") return error as unknown as JsonRpcError;
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
 * provider answers `mcp/connect`, the stateless form when it is unknown (-32601); any other error
 * (an unknown server id, say) is the connection's failure, given to every inner request.
 */
export class McpOverAcpConnection {
  #mode: { kind: "connect"; connectionId: string } | { kind: "stateless" } | { kind: "failed"; error: JsonRpcError } | undefined;
  #opening?: Promise<void>;
  #closed = false;

  constructor(
    readonly serverId: string,
    private readonly peer: OuterPeer,
  ) {}

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
    this.#opening ??= this.peer.request("mcp/connect", { serverId: this.serverId }).then((a) => {
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
export function providerNotification(params: unknown): { key: string; message: { jsonrpc: "2.0"; method: string; params?: Record<string, unknown> } } | undefined {
  if (!isObject(params) || typeof params.method !== "string") return undefined;
  const key = typeof params.connectionId === "string" ? params.connectionId : typeof params.serverId === "string" ? params.serverId : undefined;
  if (key === undefined) return undefined;
  return { key, message: { jsonrpc: "2.0", method: params.method, ...(isObject(params.params) ? { params: params.params } : {}) } };
}
