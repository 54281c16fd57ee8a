// Owns what `tendril prompt --max-turns` counts as a model turn, for any ACP agent, from the session
// updates a client sees. Does not cancel anything: the client runner does when the count passes the cap.
import type * as acp from "@agentclientprotocol/sdk";

/**
 * What counts as a model turn for any ACP agent, from the updates a client sees: a turn begins with
 * the first agent message, thought or tool call of the prompt, and again when such an update follows
 * a finished tool call (the model answering tool results) or when an agent message arrives with a
 * `messageId` other than the previous message's. An agent that runs several tool calls of one answer
 * one after another may be counted a turn per call: the count errs on the side of stopping early.
 */
export class TurnCounter {
  turns = 0;
  private toolFinished = false;
  private lastMessageId: string | undefined;

  /** A new prompt was sent: its first update begins a turn. */
  nextPrompt(): void {
    if (this.turns > 0) this.toolFinished = true;
  }

  /** True when this update begins a new turn (the count is then already raised). */
  see(u: acp.SessionUpdate): boolean {
    const kind = u.sessionUpdate;
    if (kind === "tool_call_update" && (u.status === "completed" || u.status === "failed")) this.toolFinished = true;
    if (kind !== "agent_message_chunk" && kind !== "agent_thought_chunk" && kind !== "tool_call") return false;
    const id = kind === "agent_message_chunk" ? (u as { messageId?: unknown }).messageId : undefined;
    const newMessage = typeof id === "string" && this.lastMessageId !== undefined && id !== this.lastMessageId;
    if (typeof id === "string") this.lastMessageId = id;
    if (this.turns > 0 && !this.toolFinished && !newMessage) return false;
    this.toolFinished = false;
    this.turns++;
    return true;
  }
}
