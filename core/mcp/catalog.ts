// Owns a session's tool catalog: from each server's raw tool list to McpToolInfo entries with qualified
// names, clamped descriptions, oversize schemas dropped, the MAX_TOOLS cap (hooks exempt: never offered
// to the LLM) and the route from a qualified name back to (server slot, MCP tool name).
// Does not talk to servers.
import type { Limits } from "../limits.ts";
import { clampBytes } from "../text-bounds.ts";
import type { RawTool } from "./call-result.ts";
import type { McpLog } from "./types.ts";
import { qualifyToolName } from "./naming.ts";
import type { McpToolInfo } from "./types.ts";

export const DESCRIPTION_MARKER = "… [description truncated]";

export interface CatalogSource {
  /** The session's label for the server (its spec name). */
  label: string;
  tools: RawTool[];
}

export interface Catalog {
  infos: McpToolInfo[];
  routes: Map<string, { slot: number; tool: string }>;
}

const encoder = new TextEncoder();

/** Clamps text to maxBytes of UTF-8, cutting on a character boundary and ending in a visible marker. */
export function clampDescription(text: string, maxBytes: number): string {
  return clampBytes(text, maxBytes, DESCRIPTION_MARKER);
}

/**
 * Builds the catalog in server order, then tool order, so names stay stable across refreshes.
 * `warned` dedupes log lines across rebuilds of one session.
 */
export function buildCatalog(sources: CatalogSource[], limits: Limits, log: McpLog, warned: Set<string>): Catalog {
  const infos: McpToolInfo[] = [];
  const routes = new Map<string, { slot: number; tool: string }>();
  const taken = new Set<string>();
  const warnOnce = (key: string, msg: string, fields: Record<string, unknown>) => {
    if (warned.has(key)) return;
    warned.add(key);
    log.warn(msg, fields);
  };
  let offered = 0;
  let dropped = 0;
  sources.forEach((source, slot) => {
    for (const tool of source.tools) {
      if (typeof tool?.name !== "string") continue;
      const hook = tool.name.startsWith("_");
      const schema = tool.inputSchema && typeof tool.inputSchema === "object" ? tool.inputSchema : { type: "object" };
      const schemaBytes = encoder.encode(JSON.stringify(schema)).length;
      if (schemaBytes > limits.MAX_TOOL_SCHEMA_BYTES) {
        warnOnce(`schema:${source.label}:${tool.name}`, "MCP tool dropped: input schema over MAX_TOOL_SCHEMA_BYTES", {
          server: source.label,
          tool: tool.name,
          bytes: schemaBytes,
          limit: limits.MAX_TOOL_SCHEMA_BYTES,
        });
        continue;
      }
      if (!hook && offered >= limits.MAX_TOOLS) {
        dropped++;
        continue;
      }
      if (!hook) offered++;
      const qualifiedName = qualifyToolName(source.label, tool.name, taken);
      taken.add(qualifiedName);
      routes.set(qualifiedName, { slot, tool: tool.name });
      const info: McpToolInfo = {
        qualifiedName,
        server: source.label,
        tool: tool.name,
        description: clampDescription(typeof tool.description === "string" ? tool.description : "", limits.MAX_TOOL_DESCRIPTION_BYTES),
        inputSchema: schema,
        readOnly: tool.annotations?.readOnlyHint === true,
        hook,
      };
      const title = tool.title ?? tool.annotations?.title;
      if (typeof title === "string") info.title = title;
      if (tool.liveOutput === true) info.liveOutput = true;
      infos.push(info);
    }
  });
  if (dropped > 0) {
    warnOnce(`cap:${dropped}`, "MCP tools dropped: over MAX_TOOLS for this session", { dropped, limit: limits.MAX_TOOLS });
  }
  return { infos, routes };
}
