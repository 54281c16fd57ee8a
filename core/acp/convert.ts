// Owns the translation of ACP request payloads into core values: prompt content blocks → LLM user parts
// (with the prompt byte bound), ACP MCP server declarations → McpServerSpec. Does not read params off
// the wire (params.ts), start anything, or own the error handlers throw (acp-error.ts).
import type { ContentBlock, McpServer } from "@agentclientprotocol/sdk";
import type { UserPart } from "../llm/types.ts";
import { binaryResourceText, linkText, resourceText } from "../content-text.ts";
import type { McpServerSpec } from "../mcp/types.ts";
import type { McpServerEntry } from "../mcp-entry.ts";
import { AcpError, INVALID_PARAMS } from "./acp-error.ts";

function bytesOf(part: UserPart): number {
  return part.type === "text" ? Buffer.byteLength(part.text) : part.data.length + part.mimeType.length;
}


const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Image data must be base64 (RFC 4648, padded): an LLM API would reject anything else mid-turn. */
function checkBase64(data: unknown, what: string): string {
  const text = typeof data === "string" ? data.replace(/\s+/g, "") : "";
  if (text === "" || text.length % 4 !== 0 || !BASE64.test(text)) {
    throw new AcpError(INVALID_PARAMS, `${what}: data must be non-empty base64 (RFC 4648, padded)`);
  }
  return text;
}

function checkImageType(mime: unknown): string {
  if (typeof mime !== "string" || !/^image\/[\w.+-]+$/.test(mime)) {
    throw new AcpError(INVALID_PARAMS, `image: mimeType must be an image type such as image/png, got ${JSON.stringify(mime)}`);
  }
  return mime;
}

/** A field a content block must have as a string; -32602 naming the block and the field otherwise. */
function field(block: unknown, key: string, i: number): string {
  const v = (block as Record<string, unknown>)[key];
  if (typeof v !== "string") throw new AcpError(INVALID_PARAMS, `prompt[${i}] (${(block as { type?: unknown }).type}): ${key} must be a string`);
  return v;
}

/** What the wire gave must be the block its type says before it is read as one. */
function checkBlock(block: unknown, i: number): ContentBlock {
  if (typeof block !== "object" || block === null) throw new AcpError(INVALID_PARAMS, `prompt[${i}] must be a content block (an object with a type)`);
  const b = block as { type?: unknown; resource?: unknown };
  if (b.type === "text") field(b, "text", i);
  if (b.type === "resource_link") field(b, "uri", i);
  if (b.type === "resource") {
    if (typeof b.resource !== "object" || b.resource === null) throw new AcpError(INVALID_PARAMS, `prompt[${i}] (resource): resource must be an object`);
    field(b.resource, "uri", i);
  }
  return block as ContentBlock;
}

function convertBlock(block: ContentBlock): UserPart {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image":
      return { type: "image", mimeType: checkImageType(block.mimeType), data: checkBase64(block.data, "image") };
    case "resource_link": {
      const title = typeof block.title === "string" ? block.title : typeof block.name === "string" ? block.name : block.uri;
      return { type: "text", text: linkText(title, block.uri) };
    }
    case "resource": {
      const r = block.resource;
      if ("text" in r && typeof r.text === "string") return { type: "text", text: resourceText(r.uri, r.text) };
      const mime = r.mimeType ?? "";
      if ("blob" in r && typeof r.blob === "string" && mime.startsWith("image/")) {
        return { type: "image", mimeType: mime, data: checkBase64(r.blob, `resource ${r.uri}`) };
      }
      return { type: "text", text: binaryResourceText(r.uri, mime || undefined) };
    }
    default:
      throw new AcpError(INVALID_PARAMS, `unsupported content block: ${(block as { type: string }).type}`);
  }
}

/** Converts a prompt; throws AcpError(-32602) for an unsupported block or a prompt over `maxBytes`. */
export function convertPrompt(blocks: ContentBlock[], maxBytes: number): UserPart[] {
  const parts: UserPart[] = [];
  let total = 0;
  for (const [i, raw] of blocks.entries()) {
    const block = checkBlock(raw, i);
    const part = convertBlock(block);
    total += bytesOf(part);
    if (total > maxBytes) {
      throw new AcpError(INVALID_PARAMS, `prompt too large: over ${maxBytes} bytes (MAX_PROMPT_BYTES); send less or attach files by link`);
    }
    parts.push(part);
  }
  if (parts.length === 0) throw new AcpError(INVALID_PARAMS, "prompt is empty: send at least one content block");
  return parts;
}

function record(pairs: { name: string; value: string }[]): Record<string, string> {
  return Object.fromEntries(pairs.map((p) => [p.name, p.value]));
}

/** Config `[[mcp]]` entries → pool specs; stdio servers run in the session's cwd, a url without a type is http. */
export function configServerSpecs(entries: McpServerEntry[], cwd: string): McpServerSpec[] {
  return entries.map((e): McpServerSpec => {
    if (e.url !== undefined) return { name: e.name, transport: e.type === "sse" ? "sse" : "http", url: e.url, headers: e.headers ?? {} };
    return { name: e.name, transport: "stdio", command: e.command, args: e.args ?? [], env: e.env ?? {}, cwd, ...(e.sandbox && e.sandbox !== "off" ? { sandbox: e.sandbox } : {}) };
  });
}

/** ACP `mcpServers` → pool specs; stdio servers run in the session's cwd. */
export function convertMcpServers(servers: McpServer[], cwd: string): McpServerSpec[] {
  return servers.map((s): McpServerSpec => {
    if ("type" in s && (s.type === "http" || s.type === "sse")) {
      return { name: s.name, transport: s.type, url: s.url, headers: record(s.headers) };
    }
    const acp = s as { type?: string; name: string; serverId?: string };
    if (acp.type === "acp") return { name: acp.name, transport: "acp", url: `acp:${acp.serverId}` };
    const stdio = s as Extract<McpServer, { command: string }>;
    return { name: stdio.name, transport: "stdio", command: stdio.command, args: stdio.args, env: record(stdio.env), cwd };
  });
}
