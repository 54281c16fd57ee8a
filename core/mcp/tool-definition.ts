// Owns what a tool served by Tendril is, whoever serves it: the definition (name, text, zod input
// schema, hints, run). A leaf of core/ that tools/ may import: free of every SDK, and of zod until a
// schema is built. Listing and calling a definition is tool-serving.ts's.
import type { z } from "zod";
import { lazySchema } from "../zod-issue.ts";

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
  /** It hands its output to `io.onOutput` while it runs (the shell), so a client can show it live. */
  liveOutput?: true;
  /** `signal` aborts on cancellation and when the server closes. Throwing is allowed (→ isError).
   *  `io`: given only when the tool runs in the agent's own process. */
  run(args: z.infer<S>, signal: AbortSignal, io?: ToolRunIo): Promise<ToolReply>;
}

/** What a tool running in the agent's own process may report while it runs. */
export interface ToolRunIo {
  /** The raw bytes of its output, as they arrive (a `liveOutput` tool only). */
  onOutput?: (chunk: Uint8Array) => void;
  /** A command its call left running (a background shell command) ended: how (a `liveOutput` tool only). */
  onEnd?: (exit: { code: number; signal: string | null }) => void;
}

/**
 * The input schema of a tool that takes no arguments (the lifecycle hooks, called at every turn's
 * end): called in process, any object is `{}` without loading zod; anything else gets the answer
 * the schema gives.
 */
export const noInput = lazySchema((z) => z.object({}));

/** Erases a definition's argument type so tools with different schemas fit in one list. */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): ToolDefinition {
  // Sound as used: a tool's run only ever gets arguments its own schema parsed.
  return def as unknown as ToolDefinition;
}

/** The hook tools (names start with `_`: never offered to a model) a Tendril tool server may serve: the
 *  lifecycle hooks the agent calls, and the sandbox's one-command way out the agent calls after asking. */
export const HOOK = { stop: "_Stop", postCompact: "_PostCompact", shellUnsandboxed: "_ShellUnsandboxed" } as const;
