// Owns the conductor's MCP-over-ACP bridge for agents that do not speak it: at the agent's edge of the
// chain it learns from `initialize` whether the agent advertises `mcpCapabilities.acp` (v2:
// `capabilities.session.mcp.acp`; and advertises it itself when not), rewrites ACP-transport MCP
// declarations in session/new|load|resume to a stdio server (`tendril conductor mcp-bridge`; typed
// `stdio` when the agent answered v2), and relays each bridge process's MCP lines, over a private
// unix socket, as MCP-over-ACP messages sent as if by the agent: in the provider's dialect for `acp`
// servers (core/mcp/acp-wire.ts: `mcp/connect` or stateless `mcp/message`), or sacp `_mcp/*`; and the
// provider's requests to a bridged MCP client (`mcp/message {connectionId}` requests of the Rust dialect,
// `_mcp/message` of sacp) to the bridge process of that connection (takeRequest). Does not serve MCP
// itself (the proxies do) and does not spawn the bridge processes (the agent does).
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomId } from "../ids.ts";
import { ACP_V2, isObject, type JsonRpcError } from "../wire/jsonrpc.ts";
import { nodeSink } from "../wire/writer.ts";
import type { Params } from "./dialect.ts";
import { chunksOf, Link, type WellFormed } from "../wire/link.ts";
import { type AcpMcpDeclaration, acpDeclaration } from "./mcp-over-acp.ts";
import { ClientRequests, ConnectionRoutes, innerResponse, McpOverAcpConnection, type OuterAnswer, type OuterPeer } from "../mcp/acp-wire.ts";
import { AcpDeclarations } from "./acp-declarations.ts";
import type { AgentEdge, AgentSide, EdgeRoute } from "./router.ts";
import type { Cancellation } from "../wire/rpc-peer.ts";

/** A bridge process's first line names its server (`{server}`); the conductor answers on the same
 *  method with `{ok: true}`, or `{error}` for an id it does not know, then closes. */
export const BRIDGE_HELLO = "_tendril/mcp_bridge";
const SESSION_METHODS = new Set(["session/new", "session/load", "session/resume"]);

export interface BridgeOptions {
  /** How to run this binary: the bridge processes are `COMMAND ARGS… conductor mcp-bridge …`. */
  self: { command: string; args: string[] };
  maxLineBytes: number;
  /** MCP_CONNECT_TIMEOUT_S in ms: how long a bridged connection waits for `mcp/connect` before it
   *  speaks the stateless dialect. */
  connectTimeoutMs: number;
}

export class McpBridge implements AgentEdge {
  #native = false;
  /** The agent answered ACP v2: its capabilities and MCP server declarations have v2's shapes. */
  #v2 = false;
  #side?: AgentSide;
  readonly #dir: string;
  readonly #socket: string;
  readonly #server: Server;
  /** Bridged declarations, held while a session that declared them lives. */
  readonly #declared = new AcpDeclarations();
  /** Live bridge connections: what close() flushes. */
  readonly #live = new Set<Link>();
  /** Bridged connections: the provider's requests to their MCP client (by connectionId, connect form and
   *  sacp) and its notifications (by connectionId, or by serverId in the stateless form). */
  readonly #routes = new ConnectionRoutes();

  private constructor(private readonly opts: BridgeOptions) {
    this.#dir = mkdtempSync(join(tmpdir(), "tendril-mcp-bridge-"));
    this.#socket = join(this.#dir, "s");
    this.#server = createServer((sock) => this.#accept(sock));
  }

  static async start(opts: BridgeOptions): Promise<McpBridge> {
    const b = new McpBridge(opts);
    await new Promise<void>((resolve, reject) => b.#server.once("error", reject).listen(b.#socket, () => resolve()));
    return b;
  }

  /** Connects the bridge to the chain's agent side (the chain is built after the bridge). */
  attach(side: AgentSide): void {
    this.#side = side;
  }

  close(): void {
    if (this.#server.listening) this.#server.close();
    for (const l of this.#live) void l.flush();
    this.removeFolder();
  }

  /** Removes the socket's private folder at once (synchronous, idempotent): a stop signal's first act,
   *  before any wait; bridges already connected keep relaying until the chain ends. */
  removeFolder(): void {
    rmSync(this.#dir, { recursive: true, force: true });
  }

  toAgent(method: string, params: Params, isRequest: boolean): EdgeRoute | undefined {
    if (method === "initialize") return { params, answer: (r) => this.#learn(r) };
    if (SESSION_METHODS.has(method) && isObject(params) && Array.isArray(params.mcpServers)) {
      const bridged: AcpMcpDeclaration[] = [];
      const servers = params.mcpServers.map((s) => this.#rewrite(s, bridged));
      const hooks = this.#declared.track(method, params, bridged);
      return { params: bridged.length > 0 ? { ...params, mcpServers: servers } : params, ...hooks };
    }
    if (method === "session/close" && isObject(params)) return { params, ...this.#declared.track(method, params, []) };
    if (!isRequest && isObject(params) && (method === "mcp/message" || method === "_mcp/message")) {
      if (this.#routes.notify(method === "mcp/message" ? params : { ...params, connectionId: params.connectionId ?? params.connection_id })) return undefined;
    }
    return { params };
  }

  /**
   * A provider's request on its way to the agent that a bridge process's MCP client answers: an
   * `mcp/message` (or sacp `_mcp/message`) request naming a bridged connection (the MCP server asking its
   * client: roots/list, elicitation, ping…), answered with the client's answer. One naming no bridged
   * connection is -32602 when the agent could not answer it either (it does not speak MCP-over-ACP, or
   * the sacp form); undefined for anything else, which goes on to the agent.
   */
  takeRequest(method: string, params: Params, cancellation?: Cancellation): Promise<OuterAnswer> | undefined {
    const sacp = method === "_mcp/message";
    if (!sacp && (method !== "mcp/message" || this.#native)) return undefined;
    const named = sacp && isObject(params) ? { ...params, connectionId: params.connectionId ?? params.connection_id } : params;
    return this.#routes.route(named, "to a bridged MCP client", cancellation?.signal);
  }

  #learn(result: unknown): unknown {
    if (!isObject(result)) return result;
    if (result.protocolVersion === ACP_V2) return this.#learnV2(result);
    const caps = isObject(result.agentCapabilities) ? result.agentCapabilities : {};
    const mcp = isObject(caps.mcpCapabilities) ? caps.mcpCapabilities : {};
    this.#native = mcp.acp === true;
    if (this.#native) return result;
    // The conductor carries acp servers for this agent, so the chain as a whole supports them.
    return { ...result, agentCapabilities: { ...caps, mcpCapabilities: { ...mcp, acp: true } } };
  }

  /** v2: `capabilities.session.mcp.acp` is an object when the agent speaks MCP-over-ACP; an agent
   *  without session methods (no `capabilities.session`) is left as it answered. */
  #learnV2(result: Record<string, unknown>): unknown {
    this.#v2 = true;
    const caps = isObject(result.capabilities) ? result.capabilities : {};
    if (!isObject(caps.session)) return result;
    const mcp = isObject(caps.session.mcp) ? caps.session.mcp : {};
    this.#native = isObject(mcp.acp);
    if (this.#native) return result;
    return { ...result, capabilities: { ...caps, session: { ...caps.session, mcp: { ...mcp, acp: {} } } } };
  }

  #rewrite(server: unknown, bridged: AcpMcpDeclaration[]): unknown {
    const decl = acpDeclaration(server);
    if (!decl || (decl.flavour === "acp" && this.#native)) return server;
    bridged.push(decl);
    const { command, args } = this.opts.self;
    const stdio = { name: decl.name, command, args: [...args, "conductor", "mcp-bridge", "--socket", this.#socket, "--server", decl.id], env: [] };
    return this.#v2 ? { type: "stdio", ...stdio } : stdio;
  }

  #accept(sock: Socket): void {
    sock.on("error", () => {});
    let relay: ((m: WellFormed) => void) | undefined;
    let onClose = () => {};
    const link: Link = new Link({
      input: chunksOf(sock),
      sink: nodeSink(sock),
      maxLineBytes: this.opts.maxLineBytes,
      onMessage: (m) => {
        if (relay) return relay(m);
        const hello = m.kind === "notification" && m.method === BRIDGE_HELLO && isObject(m.params) ? m.params : undefined;
        const id = typeof hello?.server === "string" ? hello.server : undefined;
        const decl = id !== undefined ? this.#declared.get(id) : undefined;
        if (!decl || !this.#side) {
          relay = () => {}; // refused: nothing more is read from this bridge
          link.send(helloAnswer({ error: refusal(id, this.#side !== undefined) }));
          return void link.flush().then(() => sock.end());
        }
        link.send(helloAnswer({ ok: true }));
        [relay, onClose] = decl.flavour === "acp" ? this.#relayAcp(decl, link, this.#side) : this.#relaySacp(decl, link, this.#side);
      },
    });
    void link.ended.then(() => onClose());
  }

  /** Tracks `link` under `key` for provider notifications and, with a connectionId, `asked` for the
   *  provider's requests; the returned function forgets both. */
  #track(key: string, link: Link, connection?: { id: string; asked: ClientRequests }): () => void {
    this.#live.add(link);
    const unlisten = this.#routes.listen(key, (m) => link.send(m));
    const unserve = connection ? this.#routes.serve(connection.id, connection.asked) : () => {};
    return () => {
      this.#live.delete(link);
      unlisten();
      unserve();
    };
  }

  #relayAcp(decl: AcpMcpDeclaration, link: Link, side: AgentSide): [(m: WellFormed) => void, () => void] {
    const connection = new McpOverAcpConnection(decl.id, outerPeer(side), this.opts.connectTimeoutMs);
    const asked = new ClientRequests((m) => link.send(m));
    let untrack = () => {};
    let closed = false;
    void connection.open().then(() => {
      if (closed || connection.key === undefined) return;
      const id = connection.connectionId;
      untrack = this.#track(connection.key, link, id === undefined ? undefined : { id, asked });
    });
    const relay = (m: WellFormed) => {
      if (m.kind === "response") return void asked.answered(m); // the MCP client answering its provider
      if (m.kind === "notification") return void connection.notify(m.method, m.params);
      void connection.request(m.id, m.method, m.params).then((r) => link.send(r));
    };
    const close = () => {
      closed = true;
      untrack();
      asked.close(`MCP-over-ACP server ${decl.id}: the bridge's MCP client went away before it answered`);
      void connection.close();
    };
    return [relay, close];
  }

  #relaySacp(decl: AcpMcpDeclaration, link: Link, side: AgentSide): [(m: WellFormed) => void, () => void] {
    const proposed = randomId();
    const asked = new ClientRequests((m) => link.send(m));
    let untrack = () => {};
    const connected = side.request("_mcp/connect", { connectionId: proposed, url: decl.id, acp_url: decl.id }).then((answer) => {
      const r = isObject(answer.result) ? answer.result : {};
      const id = String(r.connectionId ?? r.connection_id ?? proposed);
      untrack = this.#track(id, link, { id, asked });
      return id;
    });
    const relay = (m: WellFormed) => {
      if (m.kind === "response") return void asked.answered(m); // the MCP client answering its provider
      void connected.then((connectionId) => {
        const params = { connectionId, connection_id: connectionId, method: m.method, params: m.params ?? null };
        if (m.kind === "notification") return side.notify("_mcp/message", params);
        void side.request("_mcp/message", { ...params, id: m.id }).then((answer) => link.send(innerResponse(m.id, outerAnswer(answer), false)));
      });
    };
    const close = () => {
      untrack();
      asked.close(`MCP-over-ACP server ${decl.id}: the bridge's MCP client went away before it answered`);
      void connected.then((connectionId) => {
        untrack(); // a connection that opened after the close
        side.notify("_mcp/disconnect", { connectionId, connection_id: connectionId });
      });
    };
    return [relay, close];
  }
}

function helloAnswer(params: { ok: true } | { error: string }): Record<string, unknown> {
  return { jsonrpc: "2.0", method: BRIDGE_HELLO, params };
}

function refusal(id: string | undefined, ready: boolean): string {
  if (id === undefined) return "the bridge did not say which MCP-over-ACP server it serves (--server ID)";
  if (!ready) return `MCP-over-ACP server ${JSON.stringify(id)}: the conductor's chain is not running yet`;
  return `the conductor has no MCP-over-ACP server with id ${JSON.stringify(id)} (no session declared one)`;
}

/** An answer message of the agent side as an outer answer. */
function outerAnswer(m: Record<string, unknown>): OuterAnswer {
  return m.error !== undefined ? { error: m.error as JsonRpcError } : { result: m.result };
}

/** The agent side as a consumer connection's peer. */
function outerPeer(side: AgentSide): OuterPeer {
  return { request: (method, params) => side.request(method, params).then(outerAnswer), notify: (method, params) => side.notify(method, params) };
}
