// Owns what a tool served by Tendril is, whoever serves it: the definition (name, text, zod input
// schema, hints, run), its JSON Schema exactly as an MCP server lists it, and calling it in process
// (validate, run, map the reply). Free of every SDK, so the agent can run its own tools without
// loading the MCP server, and of zod until a tool is called. Does not serve anything over a wire
// (server.ts does).
import type { z } from "zod";
import { log } from "../log.ts";
import { isObject } from "../wire/jsonrpc.ts";
import { describeToolArgIssues, lazySchema, loadZod } from "../zod-issue.ts";
import type { RawTool } from "./call-result.ts";
import type { McpCallResult } from "./types.ts";

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
  /** The zod input schema, built on first use (lazySchema): listing needs only listedSchema. */
  inputSchema: () => Promise<S>;
  /** inputSchema as JSON Schema, computed ahead (inputJsonSchema at build time): listing then costs no
   *  conversion, nor loading zod. A test holds it equal to the conversion. */
  listedSchema?: Record<string, unknown>;
  annotations?: ToolHints;
  /** `signal` aborts on cancellation and when the server closes. Throwing is allowed (→ isError). */
  run(args: z.infer<S>, signal: AbortSignal): Promise<ToolReply>;
}

/**
 * The input schema of a tool that takes no arguments (the lifecycle hooks, called at every turn's
 * end): called in process, any object is `{}` without loading zod; anything else gets the answer
 * the schema gives.
 */
export const noInput = lazySchema((z) => z.object({}));

/** Erases a definition's argument type so tools with different schemas fit in one list. */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): ToolDefinition {
  return def as unknown as ToolDefinition;
}

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
export async function replyOf(def: ToolDefinition, args: unknown, signal: AbortSignal): Promise<ToolReply> {
  try {
    return await def.run(args as never, signal);
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
export async function callInProcess(def: ToolDefinition, args: unknown, signal: AbortSignal): Promise<McpCallResult> {
  const input = args ?? {};
  const parsed = def.inputSchema === noInput && isObject(input) ? { success: true as const, data: {} } : (await def.inputSchema()).safeParse(input);
  const reply: ToolReply = parsed.success ? await replyOf(def, parsed.data, signal) : { text: invalidArguments(def.name, parsed.error), isError: true };
  const out: McpCallResult = { content: [{ type: "text", text: reply.text }], text: reply.text, isError: reply.isError === true };
  if (reply.structured) out.structured = reply.structured;
  return out;
}
