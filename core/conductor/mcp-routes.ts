// Owns what a chain knows of MCP-over-ACP in the connect dialect (`mcp/connect` → `connectionId`), to
// refuse what no provider could answer before it travels: the `acp` server ids declared in the session
// setup requests that passed through the chain (at any hop), and the connections `mcp/connect` opened
// and `mcp/disconnect` has not closed. Every connection of the chain's consumers is opened through it,
// so one it does not know is closed or never existed. Does not route (router.ts asks it).
import { INVALID_PARAMS, isObject, type JsonRpcError } from "../wire/jsonrpc.ts";
import type { Params } from "./dialect.ts";
import { acpDeclaration } from "./mcp-over-acp.ts";

const SESSION_SETUP = new Set(["session/new", "session/load", "session/resume"]);

/** What the router does with an MCP-over-ACP request on its way to a provider. */
export type McpCheck = { refuse: JsonRpcError } | { answer?: (result: unknown) => unknown } | undefined;

export class McpRoutes {
  readonly #declared = new Set<string>();
  readonly #open = new Set<string>();

  /** A message on its way towards the agent: a session setup request declares its `acp` servers. */
  noteDeclared(method: string, params: Params): void {
    if (!SESSION_SETUP.has(method) || !isObject(params) || !Array.isArray(params.mcpServers)) return;
    for (const s of params.mcpServers) {
      const d = acpDeclaration(s);
      if (d?.flavour === "acp") this.#declared.add(d.id);
    }
  }

  /** A message from a consumer towards a provider; cheap for every other method. */
  check(method: string, params: Params): McpCheck {
    if (method.charCodeAt(0) !== 109 /* m */ || !method.startsWith("mcp/")) return undefined;
    const p = isObject(params) ? params : {};
    if (method === "mcp/connect") {
      const id = p.serverId;
      if (typeof id !== "string") return { refuse: { code: INVALID_PARAMS, message: "mcp/connect: serverId must be a string" } };
      if (!this.#declared.has(id)) return { refuse: { code: INVALID_PARAMS, message: `mcp/connect: no MCP-over-ACP server with id ${JSON.stringify(id)} was declared on this chain` } };
      return {
        answer: (r) => {
          if (isObject(r) && typeof r.connectionId === "string") this.#open.add(r.connectionId);
          return r;
        },
      };
    }
    if ((method !== "mcp/message" && method !== "mcp/disconnect") || typeof p.connectionId !== "string") return undefined;
    const c = p.connectionId;
    if (!this.#open.has(c)) {
      // a notification is dropped (it cannot be answered); a request gets the error
      return { refuse: { code: INVALID_PARAMS, message: `${method}: no open MCP-over-ACP connection ${JSON.stringify(c)} (closed by mcp/disconnect, or never opened by mcp/connect)` } };
    }
    if (method === "mcp/disconnect") return { answer: (r) => (this.#open.delete(c), r) };
    return undefined;
  }
}
