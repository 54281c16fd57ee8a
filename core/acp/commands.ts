// Owns the session's slash commands: the list clients show (`available_commands_update`: the built-in
// ones, then one `SERVER:PROMPT` per MCP prompt), reading a prompt as one (`/NAME rest…` at the start
// of its first text block), an MCP prompt's arguments from the rest of the line, and its messages as
// the user's turn. Running them is session-commands.ts's. An unknown `/NAME` is no
// command: it goes to the model as text; an unknown `/SERVER:PROMPT` is answered with what there is.
import type { AvailableCommand, ContentBlock } from "@agentclientprotocol/sdk";
import { PERMISSION_MODES } from "../policy/modes.ts";
import type { McpPromptInfo, McpPromptMessage } from "../mcp/types.ts";
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

/** The whole list a session shows: the built-in commands, then its MCP prompts as `SERVER:PROMPT`. */
export function availableCommands(prompts: readonly McpPromptInfo[]): AvailableCommand[] {
  return [
    ...COMMANDS,
    ...prompts.map((p) => {
      const hint = argumentsHint(p);
      return {
        name: `${p.server}:${p.name}`,
        description: p.description ?? p.title ?? `MCP prompt ${p.name} of ${p.server}`,
        ...(hint ? { input: { hint } } : {}),
      };
    }),
  ];
}

/** `<required> [optional]`, in declared order; "" when the prompt takes none. */
function argumentsHint(p: McpPromptInfo): string {
  return p.arguments.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(" ");
}

/** A prompt shaped `/SERVER:PROMPT rest…`: an MCP prompt command, known or not. */
export interface PromptCommand {
  server: string;
  prompt: string;
  rest: string;
}

export function promptCommandOf(blocks: readonly ContentBlock[]): PromptCommand | undefined {
  const first = blocks[0];
  if (first?.type !== "text" || typeof first.text !== "string") return undefined;
  const m = /^\/([^\s:/]+):(\S+)(?:\s+([\s\S]*))?$/.exec(first.text.trim());
  return m ? { server: m[1]!, prompt: m[2]!, rest: (m[3] ?? "").trim() } : undefined;
}

/** Why a prompt command cannot run, as the user reads it. */
export class CommandInputError extends Error {
  override name = "CommandInputError";
}

/** The prompt `c` names among `prompts`, or a CommandInputError saying which there are. */
export function findPrompt(c: PromptCommand, prompts: readonly McpPromptInfo[]): McpPromptInfo {
  const found = prompts.find((p) => p.server === c.server && p.name === c.prompt);
  if (found) return found;
  const names = prompts.map((p) => `/${p.server}:${p.name}`);
  const there = names.length > 0 ? `the MCP prompt commands here are ${names.join(", ")}` : "no MCP server of this session offers prompts";
  throw new CommandInputError(`Unknown command /${c.server}:${c.prompt}: ${there}.`);
}

/**
 * The rest of the line as the prompt's arguments. Words are split on spaces, with "double" or
 * 'single' quotes keeping spaces; a word `NAME=value` sets that declared argument; the other words
 * fill the declared arguments not yet set, in order, and the last of them takes every word left (so
 * free text needs no quotes). A prompt with one argument takes the whole rest as it is. A required
 * argument left unset, or words where the prompt takes none, is a CommandInputError with the usage.
 */
export function promptArguments(p: McpPromptInfo, rest: string): Record<string, string> {
  const usage = `usage: /${p.server}:${p.name}${p.arguments.length ? ` ${argumentsHint(p)}` : ""}`;
  const declared = p.arguments.map((a) => a.name);
  const args: Record<string, string> = {};
  if (declared.length === 1 && rest !== "" && !rest.startsWith(`${declared[0]}=`)) {
    args[declared[0]!] = rest;
  } else if (rest !== "") {
    if (declared.length === 0) throw new CommandInputError(`/${p.server}:${p.name} takes no arguments (${usage}).`);
    const positional: string[] = [];
    for (const word of words(rest)) {
      const eq = word.indexOf("=");
      const key = eq > 0 ? word.slice(0, eq) : "";
      if (declared.includes(key) && !(key in args)) args[key] = word.slice(eq + 1);
      else positional.push(word);
    }
    const open = declared.filter((name) => !(name in args));
    open.forEach((name, i) => {
      const taken = i === open.length - 1 ? positional.slice(i) : positional.slice(i, i + 1);
      if (taken.length > 0) args[name] = taken.join(" ");
    });
    if (open.length === 0 && positional.length > 0) {
      throw new CommandInputError(`/${p.server}:${p.name}: every argument is already set; "${positional.join(" ")}" is left over (${usage}).`);
    }
  }
  const missing = p.arguments.filter((a) => a.required && !(a.name in args)).map((a) => a.name);
  if (missing.length > 0) {
    const what = missing.length === 1 ? `argument ${missing[0]}` : `arguments ${missing.join(", ")}`;
    throw new CommandInputError(`/${p.server}:${p.name} needs the ${what} (${usage}).`);
  }
  return args;
}

/**
 * Splits on whitespace. A quote ("…" or '…') opens only at the start of a word or of its value
 * (after `NAME=`) and keeps spaces up to its match (unmatched: the rest of the line); elsewhere it
 * is a character, so "don't" stays as typed.
 */
function words(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) break;
    let word = "";
    while (i < text.length && !/\s/.test(text[i]!)) {
      const c = text[i]!;
      if ((c === '"' || c === "'") && (word === "" || word.endsWith("="))) {
        const end = text.indexOf(c, i + 1);
        word += end < 0 ? text.slice(i + 1) : text.slice(i + 1, end);
        i = end < 0 ? text.length : end + 1;
      } else {
        word += c;
        i++;
      }
    }
    out.push(word);
  }
  return out;
}

/**
 * A prompts/get result as the user's turn: each message's content as a block, in order; an
 * assistant message's text marked as such (one turn cannot carry two speakers). Audio, which the
 * prompt format has no block for, becomes a note.
 */
export function promptBlocks(messages: readonly McpPromptMessage[]): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const { role, content: c } of messages) {
    if (c.type === "text") blocks.push({ type: "text", text: role === "assistant" ? `(assistant) ${c.text}` : c.text });
    else if (c.type === "image") blocks.push({ type: "image", data: c.data, mimeType: c.mimeType });
    else if (c.type === "resource_link") blocks.push({ type: "resource_link", uri: c.uri, name: c.name, ...(c.mimeType ? { mimeType: c.mimeType } : {}) });
    else if (c.type === "resource" && typeof c.resource.text === "string") {
      blocks.push({ type: "resource", resource: { uri: c.resource.uri, text: c.resource.text, ...(c.resource.mimeType ? { mimeType: c.resource.mimeType } : {}) } });
    } else if (c.type === "resource" && typeof c.resource.blob === "string") {
      blocks.push({ type: "resource", resource: { uri: c.resource.uri, blob: c.resource.blob, ...(c.resource.mimeType ? { mimeType: c.resource.mimeType } : {}) } });
    } else blocks.push({ type: "text", text: `[${c.type} content of the prompt left out: not supported]` });
  }
  return blocks;
}
