// Owns the agent's MCP-over-ACP transport (SPEC §4.3): an MCP server declared as
// `{type:"acp", name, serverId}` is reached through the ACP client with `mcp/message` requests
// (`{serverId, requestId, method, params}` → `{result}` | `{error}`), and the provider's `mcp/message`
// notifications come back through the relay. Does not speak ACP itself: agent-server.ts binds the relay
// to its connection.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { INTERNAL_ERROR } from "../wire/jsonrpc.ts";

/** The ACP connection as the relay needs it. */
export interface AcpPeer {
  request(method: string, params: Record<string, unknown>): Promise<unknown>;
  notify(method: string, params: Record<string, unknown>): void;
}

type Listener = (message: JSONRPCMessage) => void;

/** One per agent process: MCP transports send through it, the ACP side delivers provider notifications to it. */
export class AcpMcpRelay {
  #peer?: AcpPeer;
  readonly #listeners = new Map<string, Set<Listener>>();

  bind(peer: AcpPeer): void {
    this.#peer = peer;
  }

  /** An `mcp/message` notification from a provider: to the transports of its server. */
  deliver(params: unknown): void {
    if (typeof params !== "object" || params === null) return;
    const p = params as Record<string, unknown>;
    if (typeof p.serverId !== "string" || typeof p.method !== "string") return;
    const message = { jsonrpc: "2.0", method: p.method, ...(p.params == null ? {} : { params: p.params }) } as JSONRPCMessage;
    for (const l of this.#listeners.get(p.serverId) ?? []) l(message);
  }

  listen(serverId: string, listener: Listener): () => void {
    const set = this.#listeners.get(serverId) ?? new Set();
    set.add(listener);
    this.#listeners.set(serverId, set);
    return () => void set.delete(listener);
  }

  peer(): AcpPeer {
    if (!this.#peer) throw new Error("MCP-over-ACP: no ACP connection yet");
    return this.#peer;
  }
}

/** An MCP SDK transport for one `acp` server. */
export class AcpMcpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #unlisten = () => {};

  constructor(
    private readonly serverId: string,
    private readonly relay: AcpMcpRelay,
  ) {}

  async start(): Promise<void> {
    this.#unlisten = this.relay.listen(this.serverId, (m) => this.onmessage?.(m));
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!("method" in message)) return; // providers send this generation no requests to answer
    const params = (message.params ?? null) as Record<string, unknown> | null;
    if (!("id" in message)) {
      this.relay.peer().notify("mcp/message", { serverId: this.serverId, method: message.method, params });
      return;
    }
    const id = message.id;
    this.relay
      .peer()
      .request("mcp/message", { serverId: this.serverId, requestId: id, method: message.method, params })
      .then(
        (answer) => this.onmessage?.(innerAnswer(id, answer)),
        (err: { code?: unknown; message?: unknown; data?: unknown }) =>
          this.onmessage?.({
            jsonrpc: "2.0",
            id,
            error: { code: typeof err?.code === "number" ? err.code : INTERNAL_ERROR, message: String(err?.message ?? err), data: err?.data },
          } as JSONRPCMessage),
      );
  }

  async close(): Promise<void> {
    this.#unlisten();
    this.onclose?.();
  }
}

/** `{result}` or `{error}` (the inner MCP outcome) as the MCP response to request `id`. */
function innerAnswer(id: string | number, answer: unknown): JSONRPCMessage {
  const a = (typeof answer === "object" && answer !== null ? answer : {}) as Record<string, unknown>;
  if (!Object.hasOwn(a, "result") && typeof a.error === "object" && a.error !== null) {
    return { jsonrpc: "2.0", id, error: a.error } as JSONRPCMessage;
  }
  return { jsonrpc: "2.0", id, result: (a.result ?? {}) as Record<string, unknown> } as JSONRPCMessage;
}
