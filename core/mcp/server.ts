// Owns serving a list of tool definitions as an MCP server over one stdio-shaped stream pair.
// The only module importing the MCP SDK's server side. Knows no tool and not the process: callers
// pass the streams in and decide what happens once `closed` settles (kill children, exit).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Readable, Writable } from "node:stream";
import type { z } from "zod";
import { log } from "../log.ts";
import { LineServerTransport } from "./server-transport.ts";

/** What a tool hands back: text for the model, optionally the same facts as an object. */
export interface ToolReply {
  text: string;
  isError?: boolean;
  structured?: Record<string, unknown>;
}

export interface ToolHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface ToolDefinition<S extends z.ZodObject = z.ZodObject> {
  name: string;
  title?: string;
  description: string;
  inputSchema: S;
  annotations?: ToolHints;
  /** `signal` aborts on MCP cancellation and when the server closes. Throwing is allowed (→ isError). */
  run(args: z.infer<S>, signal: AbortSignal): Promise<ToolReply>;
}

/** Erases a definition's argument type so tools with different schemas fit in one list. */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): ToolDefinition {
  return def as unknown as ToolDefinition;
}

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
  let reply: ToolReply;
  try {
    reply = await tool.run(args as never, signal);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log.error("tool failed", { tool: tool.name, error: message });
    reply = { text: `${tool.name} failed: ${message}`, isError: true };
  }
  return {
    content: [{ type: "text" as const, text: reply.text }],
    ...(reply.isError ? { isError: true } : {}),
    ...(reply.structured ? { structuredContent: reply.structured } : {}),
  };
}

function register(server: McpServer, tool: ToolDefinition): void {
  server.registerTool(
    tool.name,
    {
      ...(tool.title ? { title: tool.title } : {}),
      description: tool.description,
      inputSchema: tool.inputSchema,
      ...(tool.annotations ? { annotations: tool.annotations } : {}),
    },
    (args: unknown, extra: { signal: AbortSignal }) => runTool(tool, args, extra.signal),
  );
}

/** Starts serving; resolves once the transport is listening. */
export async function serveMcp(opts: ServeOptions): Promise<McpServing> {
  const server = new McpServer(
    { name: opts.name, version: opts.version },
    { instructions: opts.instructions, capabilities: { tools: {} } },
  );
  for (const tool of opts.tools) register(server, tool);
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
  return {
    closed,
    close: async () => {
      settle({ why: "closed", clean: true });
      await server.close().catch((err: unknown) => log.debug("mcp server close failed", { error: err }));
      await transport.flush().catch(() => {});
    },
  };
}
