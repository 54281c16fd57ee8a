// Owns the MCP servers a proxy serves over MCP-over-ACP, in all three dialects (stateless `mcp/message
// {serverId}`, `mcp/connect` → `connectionId` as the Rust conductor 2.x speaks it, sacp `_mcp/*`): which
// server ids and connections are ours, the answers to their inner requests, progress notifications sent back for a
// running tool call, and cancelling one (`notifications/cancelled`, or the conductor connection ending).
// Does not route: proxy.ts hands it the messages addressed to our servers and sends what it asks.
import { randomId } from "../ids.ts";
import { type Flavour, answerMcp, declare, type McpCallContext, type McpToolServer } from "./mcp-over-acp.ts";
import { isObject, type JsonRpcError } from "../wire/jsonrpc.ts";
import { RpcError } from "../wire/rpc-peer.ts";

/** Gives the declaration to put in a session's mcpServers; `stop()` stops serving it. */
export type ServedMcp = (() => Record<string, unknown>) & { stop(): void };

interface Served {
  name: string;
  server: McpToolServer;
}

/** An inner MCP failure of a sacp `_mcp/message`, which has no `{error}` envelope: the outer request fails. */
export class InnerMcpError extends RpcError {
  override name = "InnerMcpError";
  constructor(error: JsonRpcError) {
    super(error.code, error.message, error.data);
  }
}

type Send = (method: string, params: Record<string, unknown>) => void;

export class ProxyMcpHost {
  readonly #servers = new Map<string, Served>();
  /** Connection id (mcp/connect's or sacp's) → server id. */
  readonly #connections = new Map<string, string>();
  /** Running tool calls: `where\0request id` → their abort controller. */
  readonly #running = new Map<string, AbortController>();

  /** `notify` sends a notification to the consumer (the successor); `flavour` is the proxy's dialect's form. */
  constructor(
    private readonly notify: Send,
    private readonly flavour: () => Flavour,
  ) {}

  serve(name: string, server: McpToolServer): ServedMcp {
    const id = randomId();
    this.#servers.set(id, { name, server });
    const stop = () => {
      this.#servers.delete(id);
      for (const [c, s] of this.#connections) if (s === id) this.#connections.delete(c);
    };
    return Object.assign(() => declare(this.flavour(), name, id), { stop });
  }

  /** The answer to a request for one of our servers, in either generation; undefined when it is not ours. */
  answer(method: string, p: Record<string, unknown>): Promise<unknown> | undefined {
    if (method === "mcp/message" && typeof p.connectionId !== "string") {
      const serverId = p.serverId as string;
      const served = this.#servers.get(serverId);
      const send: Send = (m, params) => this.notify("mcp/message", { serverId, requestId: p.requestId, method: m, params });
      return served && this.#call(served, p, `${serverId}\0${String(p.requestId)}`, send);
    }
    if (method === "mcp/connect") {
      if (typeof p.serverId !== "string" || !this.#servers.has(p.serverId)) return undefined;
      const connectionId = `mcp-connection:${randomId()}`;
      this.#connections.set(connectionId, p.serverId);
      return Promise.resolve({ connectionId });
    }
    if (method === "mcp/message" && typeof p.connectionId === "string") {
      const connectionId = p.connectionId;
      const served = this.#servers.get(this.#connections.get(connectionId) ?? "");
      const send: Send = (m, params) => this.notify("mcp/message", { connectionId, method: m, params });
      // The inner request has no id of its own here: the outer request stands for it.
      return served && this.#call(served, p, `${connectionId}\0${randomId()}`, send).then(resultOrThrow);
    }
    if (method === "mcp/disconnect") {
      if (typeof p.connectionId !== "string" || !this.#connections.delete(p.connectionId)) return undefined;
      return Promise.resolve({});
    }
    if (method === "_mcp/connect") {
      const url = String(p.acp_url ?? p.url ?? "");
      if (!url.startsWith("acp:") || !this.#servers.has(url.slice(4))) return undefined;
      const connectionId = randomId();
      this.#connections.set(connectionId, url.slice(4));
      return Promise.resolve({ connectionId, connection_id: connectionId });
    }
    if (method === "_mcp/message") {
      const connectionId = String(p.connectionId ?? p.connection_id);
      const served = this.#servers.get(this.#connections.get(connectionId) ?? "");
      const send: Send = (m, params) => this.notify("_mcp/message", { connectionId, method: m, params });
      const key = p.id === undefined ? randomId() : `${connectionId}\0${String(p.id)}`;
      return served && this.#call(served, p, key, send).then(resultOrThrow);
    }
    return undefined;
  }

  /** Takes a consumer notification addressed to one of our servers (initialized, cancelled); false when not ours. */
  notification(method: string, p: Record<string, unknown>): boolean {
    let where: string | undefined;
    const connectionId = String(p.connectionId ?? p.connection_id);
    if (method === "mcp/message" && this.#servers.has(p.serverId as string)) where = p.serverId as string;
    else if ((method === "mcp/message" || method === "_mcp/message" || method === "_mcp/disconnect") && this.#connections.has(connectionId)) where = connectionId;
    if (where === undefined) return false;
    if (method === "_mcp/disconnect") this.#connections.delete(where);
    const inner = isObject(p.params) ? p.params : {};
    if (p.method === "notifications/cancelled") this.#running.get(`${where}\0${String(inner.requestId)}`)?.abort(new Error("cancelled by the MCP client"));
    return true;
  }

  /** Aborts every running tool call (the conductor connection ended). */
  abortAll(): void {
    for (const c of this.#running.values()) c.abort(new Error("the conductor connection closed"));
  }

  async #call(served: Served, p: Record<string, unknown>, key: string, send: Send) {
    const controller = new AbortController();
    this.#running.set(key, controller);
    const inner = isObject(p.params) ? p.params : {};
    const token = isObject(inner._meta) ? inner._meta.progressToken : undefined;
    const ctx: McpCallContext = {
      signal: controller.signal,
      progress: (progress, message) => {
        if (token === undefined || controller.signal.aborted) return;
        send("notifications/progress", { progressToken: token, progress, ...(message ? { message } : {}) });
      },
    };
    try {
      return await answerMcp(served.server, served.name, String(p.method), p.params, ctx);
    } finally {
      this.#running.delete(key);
    }
  }
}

/** An inner MCP outcome as the outer answer of the dialects without an envelope: the result, or a thrown error. */
function resultOrThrow(a: { result: unknown } | { error: JsonRpcError }): unknown {
  if ("error" in a) throw new InnerMcpError(a.error);
  return a.result;
}
