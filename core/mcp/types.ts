// Owns the MCP client pool's interface as the agent sees it: a per-session tool namespace
// (`server__tool`), calls that never throw, and the server declarations that open one.
import type { log } from "../log.ts";
import type { ToolDefinition } from "./tool-definition.ts";

/** Where the pool and its clients log (tests pass a quiet one). */
export type McpLog = Pick<typeof log, "error" | "warn" | "info" | "debug">;

/** What a local server's factory builds for one session. */
export interface LocalTools {
  tools: ToolDefinition[];
  instructions: string;
  /** Stops whatever the tools still run (shell process groups) and frees their state. */
  close(): Promise<void>;
}

export type LocalToolsFactory = () => Promise<LocalTools>;

export interface McpServerSpec {
  /** A label only; identity is structural (fingerprint of the rest). */
  name: string;
  /** `acp`: MCP-over-ACP through the agent's client, `url` = `acp:SERVER_ID` (acp-transport.ts). */
  transport: "stdio" | "http" | "sse" | "local" | "acp";
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  /** The session's own server (dev-mcp holds session state): never shared across sessions. */
  private?: boolean;
  /** transport "local": builds the tools that run inside the agent (always private). */
  local?: LocalToolsFactory;
  /** stdio: run the server in the sandbox with this setting (SPEC §3.8); unset or "off": unconfined. */
  sandbox?: "off" | "read-only" | "workspace-write";
}

/** What a stdio server start becomes in the sandbox (cli/ builds it from tools/dev/sandbox.ts): the
 *  program to run instead, and what to undo once it is gone. Throws, saying why, when it cannot. */
export type StdioConfine = (req: {
  mode: "read-only" | "workspace-write";
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** The session's workspace: writable under workspace-write. */
  root: string;
}) => Promise<{ command: string; args: string[]; env: Record<string, string>; cleanup?: () => Promise<void> }>;

export interface McpToolInfo {
  /** `server__tool`, letters/digits/_/- only, ≤ 64 bytes. */
  qualifiedName: string;
  server: string;
  tool: string;
  title?: string;
  /** Clamped to MAX_TOOL_DESCRIPTION_BYTES with a visible marker. */
  description: string;
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
  /** Tools whose MCP name starts with `_` (hooks): never offered to the LLM. */
  hook: boolean;
  /** It hands its output to McpCallOptions.onOutput while it runs (the in-process shell). */
  liveOutput?: true;
}

export type McpContent =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string }
  | { type: "audio"; data: string; mimeType: string }
  | { type: "resource_link"; uri: string; name: string; mimeType?: string }
  | { type: "resource"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } };

export interface McpCallResult {
  content: McpContent[];
  /** All text content joined, for the LLM. */
  text: string;
  isError: boolean;
  structured?: unknown;
}

export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** A server's question during a call (MCP elicitation): a form to fill in, or a URL to visit. */
export type McpElicitation =
  | {
      mode: "form";
      message: string;
      /** The requested form: a flat JSON Schema object of primitive fields. */
      requestedSchema: Record<string, unknown>;
      /** Its required fields; none = a plain confirmation. */
      required: string[];
    }
  | { mode: "url"; message: string; url: string; elicitationId: string };

/** The user's answer: form content comes only with `accept`. */
export interface McpElicitAnswer {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, unknown>;
  /** An accepted URL question: called when the server says the interaction completed. */
  onComplete?: () => void;
}

export interface McpCallOptions {
  /** The model's id of this call (the client's toolCallId), for a question asked on the call's behalf. */
  callId?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Asks the server for progress (a progress token) and receives its notifications. */
  onProgress?: (p: McpProgress) => void;
  /** Answers the server's questions during this call (elicitation); without it they are declined. */
  onElicit?: (e: McpElicitation) => Promise<McpElicitAnswer>;
  /** The call's raw output as it arrives, from a `liveOutput` tool (in process: a callback, not MCP). */
  onOutput?: (chunk: Uint8Array) => void;
  /** The end of a command the call left running in the background (in process, as onOutput). */
  onEnd?: (exit: { code: number; signal: string | null }) => void;
}

/** A change in a running server's life, as one session names the server (for the client's notices). */
export interface McpServerEvent {
  server: string;
  /** `died`: its connection was lost (it restarts on next use); `restarted`; `gone`: restarts failed,
   *  its tools are withdrawn. */
  kind: "died" | "restarted" | "gone";
  detail: string;
}

/** One prompt an MCP server offers (prompts/list), as one session names its server. */
export interface McpPromptInfo {
  server: string;
  name: string;
  title?: string;
  description?: string;
  arguments: { name: string; description?: string; required: boolean }[];
}

/** One message of a prompts/get result; content as MCP gives it (text, image, audio, resource, resource_link). */
export interface McpPromptMessage {
  role: "user" | "assistant";
  content: McpContent;
}

export interface McpSessionTools {
  /** Every tool of every live server of this session, hooks included (callers filter on `hook`). */
  tools(): McpToolInfo[];
  /** Calls a tool by qualified name. Never throws: unknown tool, dead server, timeout → isError result. */
  call(qualifiedName: string, args: Record<string, unknown>, opts?: McpCallOptions): Promise<McpCallResult>;
  /** Server `instructions` from initialize, by server name. */
  instructions(): Record<string, string>;
  onToolsChanged(listener: () => void): void;
  /** Hears its servers die, restart and go (one event per change; none after close). */
  onServerEvent?(listener: (e: McpServerEvent) => void): void;
  /** Every prompt of every live server of this session (servers without prompts: none). */
  prompts?(): McpPromptInfo[];
  /** prompts/get on one of this session's servers (by its session name); throws an Error naming the cause. */
  getPrompt?(server: string, name: string, args: Record<string, string>, signal?: AbortSignal): Promise<McpPromptMessage[]>;
  /** Hears a server's prompt list change (notifications/prompts/list_changed, a restart, a withdrawal). */
  onPromptsChanged?(listener: () => void): void;
  /** Releases this session's servers (refcounted); private ones are killed as process groups. */
  close(): Promise<void>;
}

export class McpStartError extends Error {
  override name = "McpStartError";
  constructor(
    readonly server: string,
    message: string,
  ) {
    super(`MCP server ${server}: ${message}`);
  }
}

/** Starts, shares (by fingerprint, refcounted) and stops MCP servers for sessions. */
export interface McpPool {
  /** Starts the servers in parallel; rejects with McpStartError (stopping the ones it started) if any fails. */
  openTools(specs: McpServerSpec[], opts: { cwd: string }): Promise<McpSessionTools>;
  /** Stops every server of every session. */
  closeAll(): Promise<void>;
}

/** The connection itself failed during a call (process gone, HTTP endpoint unreachable): restart material.
 * The message is the bare cause; the caller names the server as its session knows it. */
export class McpLinkLost extends Error {
  override name = "McpLinkLost";
}
