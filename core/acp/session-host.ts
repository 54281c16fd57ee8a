// Owns the session manager's contract with what surrounds it: what its host gives it (SessionHost:
// the pool, the provider, settings, stores), what a prompt's connection provides (PromptIo) and what a
// session's client is (ClientLink). The manager itself is session-manager.ts's.
import type { ContentBlock, SessionUpdate } from "@agentclientprotocol/sdk";
import type { TurnTotals } from "../agent/loop.ts";
import type { PermissionAnswer, PermissionAsk } from "../agent/permission-ask.ts";
import type { SessionStore } from "../agent/session-store.ts";
import type { Elicitor } from "../agent/tool-calls.ts";
import type { PermissionRule } from "../config.ts";
import type { Limits } from "../limits.ts";
import type { LlmProvider } from "../llm/types.ts";
import type { Price } from "../llm/prices.ts";
import type { McpServerEntry } from "../mcp-entry.ts";
import type { McpServerSpec } from "../mcp/types.ts";
import type { ApprovalStore } from "../policy/approvals.ts";
import type { PermissionMode } from "../policy/modes.ts";
import type { SandboxMode } from "../sandbox-modes.ts";
import type { ClientSessionCaps } from "./params.ts";
import type { McpPoolLike } from "./tool-server-starts.ts";

export interface SessionHost {
  pool: McpPoolLike;
  provider: LlmProvider;
  model: string;
  maxTokens: number;
  contextWindow: number;
  mode: PermissionMode;
  rules: PermissionRule[];
  systemPrompt?: string;
  limits: Limits;
  /** The default `dev` tools for a session's workspace and its additional roots (cli/ builds them, in
   *  process); undefined = none. `sandboxMode` is the session's `sandbox` option, read at each command. */
  devServer?: (cwd: string, opts: { additionalDirectories: readonly string[]; sandboxMode?: () => SandboxMode }) => McpServerSpec;
  /** The `dev` shell's sandbox setting, switchable per session (the `sandbox` config option), and why a
   *  confined mode cannot work here; undefined = no such option. */
  sandbox?: { mode: SandboxMode; problem(mode: SandboxMode, cwd: string): Promise<string | undefined> };
  /** `[[mcp]]` servers of the config file: every session gets them, after `dev` and before the client's. */
  configServers?: McpServerEntry[];
  home?: string;
  /** Where sessions persist; undefined = sessions live in memory only. */
  store?: SessionStore;
  /** Where `*_always` answers persist per workspace; undefined = per session only. */
  approvals?: ApprovalStore;
  /** Models a session may switch to (config `models`); empty = ask the provider. */
  models?: string[];
  /** With no `models` configured: "eager" (default) asks the provider for its list when the agent
   *  starts, so clients see every choice; "on-demand" offers the current model only and asks the
   *  provider only when a switch names another model (a one-shot run pays nothing otherwise). */
  modelList?: "eager" | "on-demand";
  /** Servers allowed to run `_Stop` / `_PostCompact` hooks: "*" = all; none when undefined. */
  hookServers?: "*" | string[];
  /** Prompt caching (TENDRIL_PROMPT_CACHE); undefined = on. */
  promptCache?: "on" | "off" | "1h";
  /** `[prices."MODEL"]` of the config: added to or overriding the built-in prices. */
  prices?: Record<string, Price>;
}

export interface PromptIo {
  emit(update: SessionUpdate): void;
  askPermission(ask: PermissionAsk, signal: AbortSignal): Promise<PermissionAnswer>;
  /** Aborts when the prompt request itself is cancelled or the connection closes. */
  signal: AbortSignal;
  /** What the client advertised in initialize; undefined = nothing beyond the basics. */
  caps?: ClientSessionCaps;
  /** The client's elicitation, in the modes it advertised; undefined = the permission fallback. */
  elicit?: Elicitor;
  /** ACP v2's `tool_call/cancel`: each tool call's own signal; undefined = calls end with the turn only. */
  toolCallSignal?: (toolCallId: string) => AbortSignal;
  /** The id the prompt's user message goes by (v2 answers it): saved with the prompt, so a replay
   *  shows the message under the id the client was given. Absent: the engine makes one. */
  userMessageId?: string;
  /** The same connection's io for another session of it (a subagent's, under its own id). */
  forSession?(sessionId: string): PromptIo;
  /** Tells the client this session's turn opened or ended (v2's `state_update`); undefined = not told. */
  turn?(e: TurnEvent): void;
}

/** A turn's life as its client hears it: opened (with the user message that opened it, when one did:
 *  a prompt, or steering with no turn running), or ended with its stop reason or its error. `final`:
 *  the session ends with the turn (a subagent's). */
export type TurnEvent =
  | { state: "running"; user?: { messageId: string; prompt: ContentBlock[]; steered: boolean } }
  | { state: "idle"; end: { stopReason: string; usage?: TurnTotals } | { error: { code: number; message: string } }; final?: boolean };

/** The connection that opened a session: what its client shows, and a way to tell it something
 *  outside a prompt (a `notice`). */
export interface ClientLink {
  readonly caps: ClientSessionCaps;
  notify(sessionId: string, update: SessionUpdate): void;
}
