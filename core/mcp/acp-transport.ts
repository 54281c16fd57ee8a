// Owns the agent's MCP-over-ACP transport (SPEC §4.3): an MCP server declared as
// `{type:"acp", name, serverId}` is reached through the ACP client, in whichever dialect its provider
// speaks (acp-wire.ts: `mcp/connect` → `connectionId`, or the stateless `mcp/message {serverId}`), and
// the provider's `mcp/message` notifications come back through the relay, by connectionId or serverId,
// and so do its `mcp/message` requests (the MCP server asking our MCP client: roots/list, elicitation,
// ping…), by connectionId, answered with the client's answer.
// Does not speak ACP itself: agent-server.ts binds the relay to its connection.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { logFailure } from "../log.ts";
import { INTERNAL_ERROR, isObject } from "../wire/jsonrpc.ts";
import { RpcError } from "../wire/rpc-peer.ts";
import { ClientRequests, ConnectionRoutes, McpOverAcpConnection, type OuterAnswer, type OuterPeer } from "./acp-wire.ts";

/** The ACP connection as the relay needs it (requests reject with the JSON-RPC error). */
export interface AcpPeer {
  request(method: string, params: Record<string, unknown>): Promise<unknown>;
  notify(method: string, params: Record<string, unknown>): void;
}

type Listener = (message: JSONRPCMessage) => void;

/** One per agent process: MCP transports send through it, the ACP side delivers provider notifications to it. */
export class AcpMcpRelay {
  #peer?: AcpPeer;
  /** Open connections: where the provider's requests (by connectionId) and notifications go. */
  readonly #routes = new ConnectionRoutes();

  bind(peer: AcpPeer): void {
    this.#peer = peer;
  }

  /** An `mcp/message` notification from a provider: to the transports of its connection (or server). */
  deliver(params: unknown): void {
    this.#routes.notify(params);
  }

  /**
   * A provider's `mcp/message` request: the answer of the MCP client of the connection it names (its
   * inner result); rejects with an RpcError carrying the client's error, or -32602 for a request that
   * names no connection of ours.
   */
  async answer(params: unknown, signal?: AbortSignal): Promise<unknown> {
    const a = await this.#routes.route(params, "on this agent", signal);
    if ("error" in a) throw new RpcError(a.error.code, a.error.message, a.error.data);
    return a.result;
  }

  /** Takes the provider's requests for `connectionId` until the returned function is called. */
  serve(connectionId: string, asked: ClientRequests): () => void {
    return this.#routes.serve(connectionId, asked);
  }

  listen(key: string, listener: Listener): () => void {
    return this.#routes.listen(key, (m) => listener(m as JSONRPCMessage));
  }

  /** The ACP connection as a consumer connection needs it: answers and errors as values. */
  outer(): OuterPeer {
    const peer = () => {
      if (!this.#peer) throw new Error("MCP-over-ACP: no ACP connection yet");
      return this.#peer;
    };
    return {
      request: (method, params) =>
        Promise.resolve()
          .then(() => peer().request(method, params))
          .then(
            (result): OuterAnswer => ({ result }),
            (err: unknown): OuterAnswer => ({
              error: {
                code: isObject(err) && typeof err.code === "number" ? err.code : INTERNAL_ERROR,
                message: isObject(err) && typeof err.message === "string" ? err.message : err instanceof Error ? err.message : String(err),
                ...(isObject(err) && err.data !== undefined ? { data: err.data } : {}),
              },
            }),
          ),
      notify: (method, params) => peer().notify(method, params),
    };
  }
}

/** An MCP SDK transport for one `acp` server. */
export class AcpMcpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #unlisten = () => {};
  #unserve = () => {};
  readonly #connection: McpOverAcpConnection;
  /** The provider's requests to our client, waiting for its answers. */
  readonly #asked = new ClientRequests((m) => this.onmessage?.(m as JSONRPCMessage));

  constructor(
    serverId: string,
    private readonly relay: AcpMcpRelay,
  ) {
    this.#connection = new McpOverAcpConnection(serverId, relay.outer());
  }

  /** Opens the connection; rejects naming the server when the provider refuses it. */
  async start(): Promise<void> {
    const failure = await this.#connection.open();
    if (failure) throw new Error(failure.message);
    this.#unlisten = this.relay.listen(this.#connection.key!, (m) => this.onmessage?.(m));
    const connectionId = this.#connection.connectionId;
    if (connectionId !== undefined) this.#unserve = this.relay.serve(connectionId, this.#asked);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!("method" in message)) return void this.#asked.answered(message); // our client's answer to the provider
    const params = "params" in message ? message.params : undefined;
    if (!("id" in message)) return this.#connection.notify(message.method, params);
    const id = message.id;
    void this.#connection.request(id, message.method, params).then((r) => this.onmessage?.(r as JSONRPCMessage));
  }

  async close(): Promise<void> {
    this.#unlisten();
    this.#unserve();
    this.#asked.close(`MCP-over-ACP server ${this.#connection.serverId}: the connection closed before the MCP client answered`);
    // mcp/disconnect is a request, but a provider that never answers must not hold the close up.
    void this.#connection.close().catch(logFailure("closing an MCP-over-ACP connection"));
    this.onclose?.();
  }
}
