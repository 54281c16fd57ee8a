// Owns serving a list of tool definitions as an MCP server over one stdio-shaped stream pair.
// The only module importing the MCP SDK's server side. Knows no tool and not the process: callers
// pass the streams in and decide what happens once `closed` settles (kill children, exit).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Readable, Writable } from "node:stream";
import type { z } from "zod";
import { log } from "../log.ts";

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
  /** One JSON-RPC line; a longer one closes the connection (the SDK cannot resynchronise). */
  maxLineBytes: number;
}

export interface McpServing {
  /** Settles once, with why the connection ended (input EOF, input error, output error, close()). */
  closed: Promise<string>;
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
  const transport = new StdioServerTransport(opts.input, opts.output, { maxBufferSize: opts.maxLineBytes });
  let settle: (why: string) => void = () => {};
  const closed = new Promise<string>((resolve) => {
    let done = false;
    settle = (why) => {
      if (done) return;
      done = true;
      resolve(why);
    };
  });
  transport.onerror = (err) => log.warn("mcp transport error", { error: err });
  // The SDK's stdio transport never watches for EOF itself; without these the process would linger.
  const onEnd = () => settle("input closed");
  opts.input.once("end", onEnd);
  opts.input.once("close", onEnd);
  opts.input.once("error", (err) => settle(`input error: ${err.message}`));
  opts.output.once("error", (err) => settle(`output error: ${err.message}`));
  await server.connect(transport);
  const prevOnClose = transport.onclose;
  transport.onclose = () => {
    prevOnClose?.();
    settle("transport closed");
  };
  return {
    closed,
    close: async () => {
      settle("closed");
      await server.close().catch(() => {});
    },
  };
}
