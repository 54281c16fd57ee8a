// Owns running a session's slash commands: `/mode`, `/model` and `/compact` as turns of their own,
// `/SERVER:PROMPT` fetched (prompts/get) into the user's turn, and telling the client the command list
// (again when a server's prompts change). Reading a prompt as a command, the list itself and an MCP
// prompt's arguments are commands.ts's; `/init` and the expanded prompt run as prompts (session-manager.ts).
import type { AvailableCommand, ContentBlock, SessionUpdate } from "@agentclientprotocol/sdk";
import { compactHistory, emptyTotals } from "../agent/loop.ts";
import { randomId } from "../ids.ts";
import { availableCommands, type Command, CommandInputError, findPrompt, type PromptCommand, promptArguments, promptBlocks } from "./commands.ts";
import { AcpError } from "./acp-error.ts";
import { convertPrompt } from "./convert.ts";
import type { LiveSession } from "./live-session.ts";
import { MODEL_OPTION_ID } from "./model-choice.ts";
import type { PromptIo } from "./session-host.ts";
import { openTurn, type Turn, type TurnAnswer, type TurnContext, turnDeps } from "./session-turn.ts";

/** What commands need from the session manager: a turn's, and set_config_option by id for `/model`. */
export interface CommandContext extends TurnContext {
  setConfigOption(id: string, configId: string, value: unknown): Promise<{ updates: SessionUpdate[] }>;
}

/** A reply in the conversation: how a command answers a person who typed it. */
function say(turn: Turn, text: string): void {
  turn.emit({ sessionUpdate: "agent_message_chunk", messageId: randomId(), content: { type: "text", text } });
}

/**
 * A slash command as a turn of its own (cancellable, one at a time, its updates recorded): `/mode`
 * and `/model` switch as their config options do, `/compact` hands off now. A bad argument is
 * answered in the conversation, not as a protocol error: a person typed it.
 */
export async function runCommand(ctx: CommandContext, s: LiveSession, command: Command, io: PromptIo): Promise<TurnAnswer> {
  const turn = openTurn(s, io);
  const totals = emptyTotals();
  try {
    if (command.name === "mode") {
      for (const u of await ctx.setMode(s.id, command.rest)) io.emit(u);
      say(turn, `Mode: ${s.policy.mode}.`);
    } else if (command.name === "model") {
      for (const u of (await ctx.setConfigOption(s.id, MODEL_OPTION_ID, command.rest)).updates) io.emit(u);
      say(turn, `Model: ${s.model}.`);
    } else if (!(await compactHistory(turnDeps(ctx, s, turn, io, totals), s.history, turn.signal)) && !turn.signal.aborted) {
      say(turn, "Nothing to compact yet.");
    }
  } catch (err) {
    if (!(err instanceof AcpError)) throw err;
    say(turn, err.message);
  } finally {
    turn.end();
  }
  return { stopReason: turn.signal.aborted ? "cancelled" : "end_turn", usage: totals };
}

/**
 * `/SERVER:PROMPT args…`: the MCP prompt fetched (prompts/get, cancellable, one at a time like any
 * turn) and its messages returned as the user's turn, which the caller then runs. An unknown
 * prompt, a missing argument or the server's refusal is answered in the conversation instead.
 */
export async function expandMcpPrompt(ctx: CommandContext, s: LiveSession, c: PromptCommand, io: PromptIo): Promise<{ blocks: ContentBlock[] } | TurnAnswer> {
  const turn = openTurn(s, io);
  try {
    const prompt = findPrompt(c, s.tools.prompts?.() ?? []);
    const args = promptArguments(prompt, c.rest);
    const messages = await s.tools.getPrompt!(c.server, c.prompt, args, turn.signal);
    const blocks = promptBlocks(messages);
    if (blocks.length === 0) throw new CommandInputError(`/${c.server}:${c.prompt} gave no messages; nothing was sent to the model.`);
    convertPrompt(blocks, ctx.host.limits.MAX_PROMPT_BYTES);
    return { blocks };
  } catch (err) {
    if (!turn.signal.aborted) {
      const why = err instanceof CommandInputError ? err.message : `/${c.server}:${c.prompt} failed: ${err instanceof Error ? err.message : String(err)}`;
      say(turn, why);
    }
    return { stopReason: turn.signal.aborted ? "cancelled" : "end_turn", usage: emptyTotals() };
  } finally {
    turn.end();
  }
}

/** The commands `s` offers now (built-in, then its MCP prompts); from now on a change to them is sent to its client. */
export function offerCommands(s: LiveSession): AvailableCommand[] {
  s.announced = true;
  return availableCommands(s.tools.prompts?.() ?? []);
}

/** A server's prompts changed: the client hears the whole command list again (once it had it, while `s` is live). */
export function sendCommandChanges(s: LiveSession, isLive: (s: LiveSession) => boolean): void {
  s.tools.onPromptsChanged?.(() => {
    if (!isLive(s) || !s.announced || !s.client) return;
    s.client.notify(s.id, { sessionUpdate: "available_commands_update", availableCommands: availableCommands(s.tools.prompts?.() ?? []) });
  });
}
