// Owns the session's slash commands: the list clients show (`available_commands_update`) and reading
// a prompt as one (`/NAME rest…` at the start of its first text block). Running them is the session
// manager's (session.ts). An unknown `/NAME` is no command: it goes to the model as text.
import type { AvailableCommand, ContentBlock } from "@agentclientprotocol/sdk";
import { PERMISSION_MODES } from "../config.ts";
import initText from "./commands.md" with { type: "text" };

export type CommandName = "compact" | "mode" | "model" | "init";

export const COMMANDS: readonly AvailableCommand[] = [
  { name: "compact", description: "Summarize the conversation so far, to free the context window" },
  { name: "mode", description: "Switch the permission mode", input: { hint: PERMISSION_MODES.join(" | ") } },
  { name: "model", description: "Switch the model for the next requests", input: { hint: "a model id" } },
  { name: "init", description: "Explore the workspace and write or update AGENTS.md", input: { hint: "anything to add (optional)" } },
];

const NAMES = new Set(COMMANDS.map((c) => c.name));

export interface Command {
  name: CommandName;
  /** The rest of the line after the name, trimmed. */
  rest: string;
}

/** The command a prompt is, if its first block is text starting with `/NAME` (and a space or its end). */
export function commandOf(blocks: readonly ContentBlock[]): Command | undefined {
  const first = blocks[0];
  if (first?.type !== "text" || typeof first.text !== "string") return undefined;
  const m = /^\/([a-z]+)(?:\s+([\s\S]*))?$/.exec(first.text.trim());
  if (!m || !NAMES.has(m[1]!)) return undefined;
  return { name: m[1] as CommandName, rest: (m[2] ?? "").trim() };
}

/** What `/init` asks the model, with the user's words after it. */
export function initPrompt(rest: string): ContentBlock[] {
  const text = rest ? `${initText.trim()}\n\nAlso: ${rest}` : initText.trim();
  return [{ type: "text", text }];
}
