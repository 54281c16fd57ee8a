// Owns what the turn asks the user before a tool call runs (the question) and the answers it reads back;
// the ACP session turns them into session/request_permission and its outcomes.
import type { PermissionOption, ToolKind } from "@agentclientprotocol/sdk";

export type PermissionAnswer = "allow_once" | "allow_always" | "reject_once" | "reject_always" | "cancelled";

export interface PermissionAsk {
  toolCallId: string;
  title: string;
  kind: ToolKind;
  rawInput: Record<string, unknown>;
  /** The `server__tool` name, so clients (and `tendril prompt` policies) can match on it. */
  _meta: { toolName: string };
  /** The "Always allow" option's name, saying what it covers; undefined: not offered. Not sent in the tool call. */
  allowAlways?: string | undefined;
  /** A question of its own (one option per kind, so the answer's kind says which): replaces the four
   *  permission options. Not sent in the tool call. */
  options?: PermissionOption[];
}
