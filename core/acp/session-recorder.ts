// Owns what one live session writes to its file: the prompt as the user chunks a reloading client
// replays, the updates the client saw (consecutive text chunks merged), the history the LLM gained,
// mode, option and title changes. Buffered; written when a prompt starts, when tools start running (the
// model's response is complete), at each tool result and at turn end; fsync'd at turn end. So a
// kill -9 loses at most the step in flight.
// Does not choose the file (session-store.ts) or decide what a turn does (agent/loop.ts).
import type { ContentBlock, SessionUpdate } from "@agentclientprotocol/sdk";
import type { SessionEvent, SessionFile } from "../agent/session-store.ts";
import type { Message } from "../llm/types.ts";
import type { SessionUsage } from "../llm/prices.ts";
import { cutChars } from "../text-bounds.ts";

const TITLE_CHARS = 80;

/** Chunk updates whose consecutive texts can be merged into one line without changing what replays. */
const MERGEABLE = new Set(["agent_message_chunk", "agent_thought_chunk", "user_message_chunk"]);

/** A session's title: the first non-blank line of the first text block, its spaces collapsed, at
 *  most TITLE_CHARS characters (code points, so no emoji is cut in half; `…` marks a cut). */
export function titleOf(blocks: readonly ContentBlock[]): string | undefined {
  const text = blocks.find((b) => b.type === "text")?.text;
  const line = text?.split(/\r?\n|\r/).map((l) => l.replace(/\s+/g, " ").trim()).find((l) => l !== "");
  if (!line) return undefined;
  return cutChars(line, TITLE_CHARS);
}

export class SessionRecorder {
  /** Events to write, an update already serialized (a line) where no later chunk can merge into it. */
  #pending: (SessionEvent | string)[] = [];
  /** History messages already written (or buffered). */
  #historyWritten: number;
  #titled: boolean;
  #titledBeforeTurn: boolean;

  constructor(
    private readonly file: SessionFile,
    /** The session's live history (mutated in place by the turn). */
    private readonly history: Message[],
    titled: boolean,
  ) {
    this.#historyWritten = history.length;
    this.#titled = titled;
    this.#titledBeforeTurn = titled;
  }

  /** The user's prompt, replayed on load as user_message_chunk updates under its message id; the
   *  first one names the session. */
  prompt(blocks: ContentBlock[], messageId: string): void {
    this.#titledBeforeTurn = this.#titled;
    this.#pending.push({ type: "turn" });
    for (const content of blocks) this.update({ sessionUpdate: "user_message_chunk", messageId, content });
    const title = this.#titled ? undefined : titleOf(blocks);
    if (title !== undefined) {
      this.#pending.push({ type: "title", title });
      this.#titled = true;
    }
    this.#write();
  }

  /** One update the client saw. A finished tool call is a write point: a crash later loses no more. */
  update(u: SessionUpdate): void {
    if (u.sessionUpdate === "usage_update") return; // about the moment, not the conversation
    const last = this.#pending.at(-1);
    if (typeof last === "object" && last.type === "update" && mergeable(last.update, u)) {
      const a = last.update as { content: { text: string } };
      a.content = { ...a.content, text: a.content.text + (u as { content: { text: string } }).content.text };
    } else {
      // As it is now, whatever its emitter changes later: a chunk as a copy (the next chunk may be
      // merged into it), any other update as its line, serialized once rather than copied and then
      // serialized (a few per cent of a tool round trip's CPU).
      const event: SessionEvent = { type: "update", update: u };
      this.#pending.push(MERGEABLE.has(u.sessionUpdate) ? { type: "update", update: structuredClone(u) } : JSON.stringify(event));
    }
    if (u.sessionUpdate === "tool_call_update" && u.status !== undefined && u.status !== "pending") this.#write();
  }

  /** A handoff replaced the history: a loaded session continues from the new one. */
  compacted(history: Message[]): void {
    this.#pending.push({ type: "compact", history: structuredClone(history) });
    this.#historyWritten = history.length;
    this.#write();
  }

  /** The session's totals after a response; written with the next write point (one line per write). */
  usage(totals: SessionUsage): void {
    const last = this.#pending.at(-1);
    const event: SessionEvent = { type: "usage", usage: { ...totals } };
    if (typeof last === "object" && last.type === "usage") this.#pending[this.#pending.length - 1] = event;
    else this.#pending.push(event);
  }

  model(model: string): void {
    this.#pending.push({ type: "model", model });
    this.#write();
  }

  option(id: string, value: string): void {
    this.#pending.push({ type: "option", id, value });
    this.#write();
  }

  mode(mode: string): void {
    this.#pending.push({ type: "mode", mode });
    this.#write();
  }

  /** Turn end: everything to disk, and fsync. */
  endTurn(): void {
    this.#write();
    this.file.sync();
  }

  /** A prompt that failed before any output leaves no trace, in memory or on disk. */
  discardTurn(): void {
    this.#pending = [{ type: "retract" }];
    this.#historyWritten = Math.min(this.#historyWritten, this.history.length);
    this.#titled = this.#titledBeforeTurn;
  }

  close(): void {
    this.#write();
    this.file.close();
  }

  /** Appends what is pending plus the history the turn added since the last write. */
  #write(): void {
    for (const message of this.history.slice(this.#historyWritten)) this.#pending.push({ type: "history", message });
    this.#historyWritten = this.history.length;
    this.file.append(this.#pending);
    this.#pending = [];
  }
}

function mergeable(a: SessionUpdate, b: SessionUpdate): boolean {
  if (a.sessionUpdate !== b.sessionUpdate || !MERGEABLE.has(a.sessionUpdate)) return false;
  // Chunks of two messages stay two: a reloading client tells messages apart by their ids.
  if ((a as { messageId?: unknown }).messageId !== (b as { messageId?: unknown }).messageId) return false;
  const ca = (a as { content?: { type?: string } }).content;
  const cb = (b as { content?: { type?: string } }).content;
  return ca?.type === "text" && cb?.type === "text";
}
