// Owns serving a list of tool definitions as an MCP server over one stdio-shaped stream pair.
// The only module importing the MCP SDK's server side. Knows no tool and not the process: callers
// pass the streams in and decide what happens once `closed` settles (kill children, exit).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Readable, Writable } from "node:stream";
import { log, logFailure } from "../log.ts";
import { LineServerTransport } from "./server-transport.ts";
import type { ToolDefinition } from "./tool-definition.ts";
import { replyOf } from "./tool-serving.ts";
import { errorResponse, INVALID_PARAMS } from "../wire/jsonrpc.ts";

export type { ToolDefinition, ToolHints, ToolReply } from "./tool-definition.ts";
export { defineTool } from "./tool-definition.ts";

export interface ServeOptions {
  name: string;
  version: string;
  instructions: string;
  tools: ToolDefinition[];
  input: Readable;
  output: Writable;
  /** One JSON-RPC line; a longer one ends the connection. */
  maxLineBytes: number;
}

/** Why serving ended; `clean` is false for an over-long line and for input or output errors. */
export interface McpEnd {
  why: string;
  clean: boolean;
}

export interface McpServing {
  /** Settles once, with why the connection ended (input EOF, over-long line, I/O error, close()). */
  closed: Promise<McpEnd>;
  /** Stops serving and flushes what was queued for output. */
  close(): Promise<void>;
}

async function runTool(tool: ToolDefinition, args: unknown, signal: AbortSignal) {
  const reply = await replyOf(tool, args, signal);
  return {
    content: [{ type: "text" as const, text: reply.text }],
    ...(reply.isError ? { isError: true } : {}),
    ...(reply.structured ? { structuredContent: reply.structured } : {}),
  };
}

async function register(server: McpServer, tool: ToolDefinition): Promise<void> {
  const inputSchema = await tool.inputSchema();
  server.registerTool(
    tool.name,
    {
      ...(tool.title ? { title: tool.title } : {}),
      description: tool.description,
      inputSchema,
      ...(tool.annotations ? { annotations: tool.annotations } : {}),
    },
    (args: unknown, extra: { signal: AbortSignal }) => runTool(tool, args, extra.signal),
  );
}

/** What is wrong with tools/call params, named for the client (the SDK would answer -32603 with a schema dump). */
function badToolCall(params: unknown): string | undefined {
  if (typeof params !== "object" || params === null || Array.isArray(params)) return "tools/call needs params {name, arguments}";
  const p = params as { name?: unknown; arguments?: unknown };
  if (typeof p.name !== "string" || p.name === "") return "tools/call params.name must be a non-empty string";
  const a = p.arguments;
  if (a !== undefined && (typeof a !== "object" || a === null || Array.isArray(a))) return "tools/call params.arguments must be an object";
  return undefined;
}

/** The first protocol version with `structuredContent` in tool results. */
const STRUCTURED_SINCE = "2025-06-18";

/**
 * What a client is shown depends on who it is: the `_Stop`/`_PostCompact` hooks only to Tendril's
 * own client (another agent would offer them to its model as tools), and no `structuredContent` to
 * a client that negotiated a protocol older than the field. Watches the wire; changes only answers.
 */
function adaptToClient(transport: LineServerTransport): void {
  let hooksWanted = false;
  let structured = true;
  const asked = new Map<string | number, string>();
  const deliver = transport.onmessage;
  transport.onmessage = (m) => {
    const req = m as { id?: string | number; method?: string; params?: { protocolVersion?: unknown; clientInfo?: { name?: unknown } } };
    const bad = req.method === "tools/call" && req.id !== undefined ? badToolCall(req.params) : undefined;
    if (bad !== undefined) {
      void transport.send(errorResponse(req.id!, { code: INVALID_PARAMS, message: `Invalid params: ${bad}` }) as never);
      return;
    }
    if (req.method !== undefined && req.id !== undefined) {
      asked.set(req.id, req.method);
      if (req.method === "initialize") {
        hooksWanted = req.params?.clientInfo?.name === "tendril";
        const v = req.params?.protocolVersion;
        structured = typeof v === "string" && v >= STRUCTURED_SINCE;
      }
    }
    deliver?.(m);
  };
  const send = transport.send.bind(transport);
  transport.send = (m) => {
    const res = m as { id?: string | number; result?: { tools?: { name: string }[]; structuredContent?: unknown } };
    const method = res.id !== undefined ? asked.get(res.id) : undefined;
    if (res.id !== undefined && !("method" in m)) asked.delete(res.id);
    if (res.result && method === "tools/list" && !hooksWanted && res.result.tools) {
      return send({ ...m, result: { ...res.result, tools: res.result.tools.filter((t) => !t.name.startsWith("_")) } } as typeof m);
    }
    if (res.result && method === "tools/call" && !structured && "structuredContent" in res.result) {
      const { structuredContent: _s, ...rest } = res.result;
      return send({ ...m, result: rest } as typeof m);
    }
    return send(m);
  };
}

/** Starts serving; resolves once the transport is listening. */
export async function serveMcp(opts: ServeOptions): Promise<McpServing> {
  const server = new McpServer(
    { name: opts.name, version: opts.version },
    { instructions: opts.instructions, capabilities: { tools: {} } },
  );
  for (const tool of opts.tools) await register(server, tool);
  const transport = new LineServerTransport(opts.input, opts.output, opts.maxLineBytes);
  let settle: (end: McpEnd) => void = () => {};
  const closed = new Promise<McpEnd>((resolve) => {
    let done = false;
    settle = (end) => {
      if (done) return;
      done = true;
      resolve(end);
    };
  });
  transport.onerror = (err) => log.warn("mcp transport error", { error: err });
  void transport.ended.then((end) => {
    if (end.reason === "eof") settle({ why: "input closed", clean: true });
    else if (end.reason === "oversize") settle({ why: `input line of ${end.bytes} bytes over MAX_LINE_BYTES`, clean: false });
    else settle({ why: `input error: ${(end.error as Error)?.message ?? String(end.error)}`, clean: false });
  });
  opts.output.once("error", (err) => settle({ why: `output error: ${err.message}`, clean: false }));
  await server.connect(transport);
  adaptToClient(transport);
  return {
    closed,
    close: async () => {
      settle({ why: "closed", clean: true });
      await server.close().catch((err: unknown) => log.debug("mcp server close failed", { error: err }));
      await transport.flush().catch(logFailure("flushing the MCP server's output"));
    },
  };
}
