// Owns what a chain knows of MCP-over-ACP in the connect dialect (`mcp/connect` → `connectionId`), to
// refuse what no provider could answer before it travels: the `acp` server ids declared by the sessions
// that reached the chain's far end (held while such a session lives: acp-declarations.ts), and the
// connections `mcp/connect` opened and `mcp/disconnect` has not closed (every consumer's connection is
// opened through the chain, so one it does not know is closed or never existed). Does not route.
import { INVALID_PARAMS, isObject, type JsonRpcError } from "../wire/jsonrpc.ts";
import { type AnswerHooks, AcpDeclarations } from "./acp-declarations.ts";
import type { Params } from "./dialect.ts";
import { acpDeclaration, type AcpMcpDeclaration } from "./mcp-over-acp.ts";

const SESSION_REQUESTS = new Set(["session/new", "session/fork", "session/load", "session/resume", "session/close", "session/delete"]);

/** What the router does with an MCP-over-ACP request on its way to a provider. */
export type McpCheck = { refuse: JsonRpcError } | { answer?: (result: unknown) => unknown } | undefined;

export class McpRoutes {
  readonly #declared = new AcpDeclarations();
  readonly #open = new Set<string>();

  /**
   * A session request reaching the chain's far end (the agent, or the successor of a chain that is a
   * proxy): the `acp` servers it declares are held from now on, and for the session once answered;
   * undefined when there is nothing to track.
   */
  track(method: string, params: Params): AnswerHooks | undefined {
    if (!SESSION_REQUESTS.has(method) || !isObject(params)) return undefined;
    const declared: AcpMcpDeclaration[] = [];
    for (const s of Array.isArray(params.mcpServers) ? params.mcpServers : []) {
      const d = acpDeclaration(s);
      if (d?.flavour === "acp") declared.push(d);
    }
    return this.#declared.track(method, params, declared);
  }

  /** A message from a consumer towards a provider; cheap for every other method. */
  check(m: { method: string; params: Params }): McpCheck {
    const method = m.method;
    if (method.charCodeAt(0) !== 109 /* m */ || !method.startsWith("mcp/")) return undefined;
    const params = m.params;
    const p = isObject(params) ? params : {};
    if (method === "mcp/connect") {
      const id = p.serverId;
      if (typeof id !== "string") return { refuse: { code: INVALID_PARAMS, message: "mcp/connect: serverId must be a string" } };
      if (!this.#declared.get(id)) return { refuse: { code: INVALID_PARAMS, message: `mcp/connect: no MCP-over-ACP server with id ${JSON.stringify(id)} is declared by a session on this chain` } };
      return {
        answer: (r) => {
          if (isObject(r) && typeof r.connectionId === "string") this.#open.add(r.connectionId);
          return r;
        },
      };
    }
    if ((method !== "mcp/message" && method !== "mcp/disconnect") || typeof p.connectionId !== "string") return undefined;
    const c = p.connectionId;
    // a notification is dropped (it cannot be answered); a request gets the error
    if (!this.#open.has(c)) return { refuse: { code: INVALID_PARAMS, message: `${method}: no open MCP-over-ACP connection ${JSON.stringify(c)} (closed by mcp/disconnect, or never opened by mcp/connect)` } };
    if (method === "mcp/disconnect") return { answer: (r) => (this.#open.delete(c), r) };
    return undefined;
  }
}
