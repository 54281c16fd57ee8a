// Owns the wire facts of MCP-over-ACP declarations: what a proxy puts in `session/new`
// (`{type:"acp", name, serverId}`, reached by `mcp/connect` + `mcp/message` or the stateless `mcp/message`
// — core/mcp/acp-wire.ts speaks both; or the sacp form
// `{type:"http", url:"acp:ID"}`, answered over `_mcp/connect` / `_mcp/message` / `_mcp/disconnect`),
// and a small MCP tool server that answers inner MCP requests (initialize, tools/list, tools/call, ping),
// built by hand or from Tendril tool definitions. Does not route (router.ts, mcp-bridge.ts, proxy-mcp.ts)
// and does not load the MCP SDK (the inner protocol is tiny).
import { INTERNAL_ERROR, INVALID_PARAMS, isObject, type JsonRpcError, METHOD_NOT_FOUND } from "../wire/jsonrpc.ts";
import type { ToolDefinition } from "../mcp/tool-definition.ts";
import { callInProcess, listedTool } from "../mcp/tool-serving.ts";

export type Flavour = "acp" | "sacp";

export interface AcpMcpDeclaration {
  flavour: Flavour;
  name: string;
  /** serverId (acp) or the whole `acp:ID` url (sacp). */
  id: string;
}

/** An MCP server declaration that travels over ACP, or undefined for any other server. */
export function acpDeclaration(server: unknown): AcpMcpDeclaration | undefined {
  if (!isObject(server) || typeof server.name !== "string") return undefined;
  if (server.type === "acp" && typeof server.serverId === "string") return { flavour: "acp", name: server.name, id: server.serverId };
  if (server.type === "http" && typeof server.url === "string" && server.url.startsWith("acp:")) {
    return { flavour: "sacp", name: server.name, id: server.url };
  }
  return undefined;
}

/** The declaration to put in `session/new`, in the form a proxy speaking `flavour` is reached by. */
export function declare(flavour: Flavour, name: string, id: string): Record<string, unknown> {
  return flavour === "acp" ? { type: "acp", name, serverId: id } : { type: "http", name, url: `acp:${id}`, headers: [] };
}

export interface McpTool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

export interface McpToolResult {
  content: { type: string; [k: string]: unknown }[];
  isError?: boolean;
  structuredContent?: unknown;
}

/** What a running tool call may use besides its arguments. */
export interface McpCallContext {
  /** Aborts when the MCP client cancels the call or the connection to the conductor ends. */
  signal: AbortSignal;
  /** Reports progress to the caller (an MCP progress notification; nothing when it asked for none). */
  progress(progress: number, message?: string): void;
}

/** What a proxy implements to offer tools over MCP-over-ACP. */
export interface McpToolServer {
  tools: McpTool[];
  call(name: string, args: Record<string, unknown>, ctx: McpCallContext): Promise<McpToolResult> | McpToolResult;
  instructions?: string;
}

const NO_CONTEXT: McpCallContext = { signal: new AbortController().signal, progress: () => {} };

/** Tendril tool definitions (core/mcp/tool-definition.ts) as an MCP-over-ACP server, checked and answered as --mcp servers do. */
export async function toolServer(defs: ToolDefinition[], instructions?: string): Promise<McpToolServer> {
  return {
    tools: await Promise.all(defs.map(listedTool)),
    ...(instructions ? { instructions } : {}),
    call: async (name, args, ctx) => {
      const r = await callInProcess(defs.find((d) => d.name === name)!, args, ctx.signal);
      return { content: r.content, ...(r.isError ? { isError: true } : {}), ...(r.structured !== undefined ? { structuredContent: r.structured } : {}) };
    },
  };
}

const DEFAULT_MCP_VERSION = "2025-06-18";

/** Answers one inner MCP request: its result, or an MCP error. A failing tool is an isError result. */
export async function answerMcp(
  server: McpToolServer,
  name: string,
  method: string,
  params: unknown,
  ctx: McpCallContext = NO_CONTEXT,
): Promise<{ result: unknown } | { error: JsonRpcError }> {
  const p = isObject(params) ? params : {};
  switch (method) {
    case "initialize":
      return {
        result: {
          protocolVersion: typeof p.protocolVersion === "string" ? p.protocolVersion : DEFAULT_MCP_VERSION,
          capabilities: { tools: {} },
          serverInfo: { name, version: "1" },
          ...(server.instructions ? { instructions: server.instructions } : {}),
        },
      };
    case "ping":
      return { result: {} };
    case "tools/list":
      return { result: { tools: server.tools.map((t) => ({ inputSchema: { type: "object" }, ...t })) } };
    case "tools/call": {
      const tool = typeof p.name === "string" ? server.tools.find((t) => t.name === p.name) : undefined;
      if (!tool) return { error: { code: INVALID_PARAMS, message: `unknown tool: ${String(p.name)}` } };
      try {
        return { result: await server.call(tool.name, isObject(p.arguments) ? p.arguments : {}, ctx) };
      } catch (err) {
        return { result: { content: [{ type: "text", text: err instanceof Error ? err.message : String(err) }], isError: true } };
      }
    }
    default:
      return { error: { code: METHOD_NOT_FOUND, message: `Method not found: ${method}` } };
  }
}
