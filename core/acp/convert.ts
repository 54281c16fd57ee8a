// Owns the translation of ACP request payloads into core values: prompt content blocks → LLM user parts
// (with the prompt byte bound), ACP MCP server declarations → McpServerSpec, and the protocol-level
// error type the handlers throw. Does not start anything.
import type { ContentBlock, McpServer } from "@agentclientprotocol/sdk";
import type { UserPart } from "../llm/types.ts";
import type { McpServerSpec } from "../mcp/types.ts";

export const INVALID_PARAMS = -32602;
export const SESSION_NOT_FOUND = -32002;
export const SERVER_ERROR = -32000;

/** An error the client must see with this JSON-RPC code (agent-server turns it into a RequestError). */
export class AcpError extends Error {
  override name = "AcpError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

function bytesOf(part: UserPart): number {
  return part.type === "text" ? Buffer.byteLength(part.text) : part.data.length + part.mimeType.length;
}

function resourceText(uri: string, text: string): string {
  return `<resource uri="${uri}">\n${text}\n</resource>`;
}

function convertBlock(block: ContentBlock): UserPart {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image":
      return { type: "image", mimeType: block.mimeType, data: block.data };
    case "resource_link": {
      const title = block.title ?? block.name;
      return { type: "text", text: `[${title}](${block.uri})` };
    }
    case "resource": {
      const r = block.resource;
      if ("text" in r && typeof r.text === "string") return { type: "text", text: resourceText(r.uri, r.text) };
      const mime = r.mimeType ?? "";
      if ("blob" in r && typeof r.blob === "string" && mime.startsWith("image/")) {
        return { type: "image", mimeType: mime, data: r.blob };
      }
      return { type: "text", text: `[binary resource ${r.uri}${mime ? ` (${mime})` : ""} not shown]` };
    }
    default:
      throw new AcpError(INVALID_PARAMS, `unsupported content block: ${(block as { type: string }).type}`);
  }
}

/** Converts a prompt; throws AcpError(-32602) for an unsupported block or a prompt over `maxBytes`. */
export function convertPrompt(blocks: ContentBlock[], maxBytes: number): UserPart[] {
  const parts: UserPart[] = [];
  let total = 0;
  for (const block of blocks) {
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

/** ACP `mcpServers` → pool specs; stdio servers run in the session's cwd. */
export function convertMcpServers(servers: McpServer[], cwd: string): McpServerSpec[] {
  return servers.map((s): McpServerSpec => {
    if ("type" in s && (s.type === "http" || s.type === "sse")) {
      return { name: s.name, transport: s.type, url: s.url, headers: record(s.headers) };
    }
    const stdio = s as Extract<McpServer, { command: string }>;
    return { name: stdio.name, transport: "stdio", command: stdio.command, args: stdio.args, env: record(stdio.env), cwd };
  });
}
