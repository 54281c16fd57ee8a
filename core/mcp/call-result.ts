// Owns the shapes that cross from an MCP server into Tendril: a listed tool as the server sent it, and
// a tools/call result mapped onto McpCallResult (unknown content kinds kept as text, never dropped silently).
// Does not clamp or name tools (catalog.ts, naming.ts do).
import type { McpCallResult, McpContent } from "./types.ts";
import { binaryResourceText, linkText, resourceText } from "../content-text.ts";
import { wellFormedDeep } from "../text-bounds.ts";

/** A tool as tools/list returned it (fields Tendril reads; the rest is ignored). */
export interface RawTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; title?: string };
  /** Set by an in-process server only (never listed over MCP): the tool streams its output (ToolDefinition.liveOutput). */
  liveOutput?: true;
}

export function errorResult(text: string): McpCallResult {
  return { content: [{ type: "text", text }], text, isError: true };
}

function toContent(block: unknown): McpContent {
  const b = (block ?? {}) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  switch (b.type) {
    case "text":
      return { type: "text", text: str(b.text) };
    case "image":
    case "audio":
      return { type: b.type, data: str(b.data), mimeType: str(b.mimeType) };
    case "resource_link": {
      const link: McpContent = { type: "resource_link", uri: str(b.uri), name: str(b.name) };
      if (typeof b.mimeType === "string") link.mimeType = b.mimeType;
      return link;
    }
    case "resource": {
      const r = (b.resource ?? {}) as Record<string, unknown>;
      const resource: { uri: string; mimeType?: string; text?: string; blob?: string } = { uri: str(r.uri) };
      for (const k of ["mimeType", "text", "blob"] as const) if (typeof r[k] === "string") resource[k] = r[k] as string;
      return { type: "resource", resource };
    }
    default:
      return { type: "text", text: `[unsupported ${String(b.type)} content: ${JSON.stringify(block).slice(0, 200)}]` };
  }
}

/** What the model reads of a block; images travel as images (see ToolResult.images), audio not at all. */
function textOf(c: McpContent): string[] {
  if (c.type === "text") return [c.text];
  if (c.type === "resource_link") return [linkText(c.name || c.uri, c.uri)];
  if (c.type === "resource") {
    const r = c.resource;
    return [r.text !== undefined ? resourceText(r.uri, r.text) : binaryResourceText(r.uri, r.mimeType)];
  }
  return [];
}

/** Maps a tools/call result (current or the 2024-10-07 `toolResult` form) onto McpCallResult. */
export function toCallResult(sent: Record<string, unknown>): McpCallResult {
  // Well-formed where it enters (SPEC §3.10): a result under its byte bound reaches the request as it is.
  const res = wellFormedDeep(sent);
  const raw = Array.isArray(res.content) ? res.content : [];
  const content = raw.map(toContent);
  if (content.length === 0 && res.toolResult !== undefined) {
    content.push({ type: "text", text: JSON.stringify(res.toolResult) });
  }
  const text = content.flatMap((c) => textOf(c)).join("\n");
  const out: McpCallResult = { content, text, isError: res.isError === true };
  if (res.structuredContent !== undefined) out.structured = res.structuredContent;
  return out;
}
