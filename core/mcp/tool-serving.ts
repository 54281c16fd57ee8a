// Owns a tool definition at work: its JSON Schema exactly as an MCP server lists it, and calling it in
// process (validate, run, map the reply), so the agent can run its own tools without loading the MCP
// server, and zod only when a tool is called. Does not serve anything over a wire (server.ts does).
import type { z } from "zod";
import { log } from "../log.ts";
import { isObject } from "../wire/jsonrpc.ts";
import { describeToolArgIssues, loadZod } from "../zod-issue.ts";
import type { RawTool } from "./call-result.ts";
import { noInput, type ToolDefinition, type ToolReply, type ToolRunIo } from "./tool-definition.ts";
import type { McpCallResult } from "./types.ts";

/** Schema getters are module constants shared by every session's tools: each is converted once. */
const jsonSchemas = new WeakMap<ToolDefinition["inputSchema"], Record<string, unknown>>();

/** A tool's input schema as `tools/list` shows it: the JSON Schema the MCP server SDK derives (draft-7, input side). */
export async function inputJsonSchema(schema: z.ZodObject): Promise<Record<string, unknown>> {
  const zod = await loadZod();
  return zod.toJSONSchema(schema, { target: "draft-7", io: "input" }) as Record<string, unknown>;
}

/** The tool as `tools/list` shows it. */
export async function listedTool(def: ToolDefinition): Promise<RawTool> {
  let inputSchema = def.listedSchema ?? jsonSchemas.get(def.inputSchema);
  if (!inputSchema) {
    inputSchema = await inputJsonSchema(await def.inputSchema());
    jsonSchemas.set(def.inputSchema, inputSchema);
  }
  return {
    name: def.name,
    ...(def.title ? { title: def.title } : {}),
    description: def.description,
    inputSchema,
    ...(def.annotations ? { annotations: def.annotations } : {}),
  };
}

/** Runs a reply-producing tool body: a throw becomes an isError reply naming the tool. */
export async function replyOf(def: ToolDefinition, args: unknown, signal: AbortSignal, io?: ToolRunIo): Promise<ToolReply> {
  try {
    return await def.run(args as never, signal, io);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log.error("tool failed", { tool: def.name, error: message });
    return { text: `${def.name} failed: ${message}`, isError: true };
  }
}

/**
 * The text a model gets for arguments that do not fit the schema: the same words, byte for byte, an
 * MCP server built on the SDK answers with, so both ways of serving a tool read alike.
 */
function invalidArguments(tool: string, error: z.ZodError): string {
  return `MCP error -32602: Input validation error: Invalid arguments for tool ${tool}: ${describeToolArgIssues(error)}`;
}

/** Calls a tool in process: arguments checked against its schema as an MCP server would, never throws. */
export async function callInProcess(def: ToolDefinition, args: unknown, signal: AbortSignal, io?: ToolRunIo): Promise<McpCallResult> {
  const input = args ?? {};
  const parsed = def.inputSchema === noInput && isObject(input) ? { success: true as const, data: {} } : (await def.inputSchema()).safeParse(input);
  const reply: ToolReply = parsed.success ? await replyOf(def, parsed.data, signal, io) : { text: invalidArguments(def.name, parsed.error), isError: true };
  const out: McpCallResult = { content: [{ type: "text", text: reply.text }], text: reply.text, isError: reply.isError === true };
  if (reply.structured) out.structured = reply.structured;
  return out;
}
