// Owns steering a running turn (SPEC §3.10): `_session/steering` read and checked, the messages that
// wait for the turn's next LLM request (MAX_PENDING_STEERING), and their delivery as a user message and
// `user_message_chunk`s on the turn's tap (recorded, so replayed). When the loop takes them is
// agent/loop.ts's; which session session-manager.ts's.
import type { ContentBlock, SessionUpdate } from "@agentclientprotocol/sdk";
import type { Message, UserPart } from "../llm/types.ts";
import { randomId } from "../ids.ts";
import { AcpError, INVALID_PARAMS } from "./acp-error.ts";
import { ParamReader, parsePrompt } from "./params.ts";

export const STEERING_METHOD = "_session/steering";

/** What `initialize` says of steering, at the top level of its answer (`_meta`, a sibling of the
 *  capabilities, where clients that steer look), on v1 and v2 alike. */
export const STEERING_CAPABILITY = { steering: { supported: true } };

/** What a client may ask of steering that finds no turn running (`_meta.steering.idleBehavior`):
 *  absent, a new turn starts with the message. */
export type IdleBehavior = "promptRequired" | undefined;

/** `_session/steering`'s params: a session id, a prompt (an array of content blocks) and the idle
 *  behaviour asked for; anything else is -32602. */
export function parseSteering(raw: unknown): { sessionId: string; prompt: ContentBlock[]; idleBehavior: IdleBehavior } {
  const p = ParamReader.of(STEERING_METHOD, raw);
  const sessionId = p.id("sessionId");
  const prompt = parsePrompt(p);
  const idle = p.object("_meta", "nullable")?.object("steering", "nullable")?.string("idleBehavior", "nullable");
  if (idle !== undefined && idle !== null && idle !== "promptRequired") {
    throw p.fail("_meta.steering.idleBehavior", `${JSON.stringify(idle)} is not an idle behaviour this agent has: "promptRequired" (answer promptRequired when no turn runs), or absent (start a new turn)`);
  }
  return { sessionId, prompt, idleBehavior: idle ?? undefined };
}

interface Waiting {
  blocks: ContentBlock[];
  parts: UserPart[];
  messageId: string;
}

/** The steering messages of one session's running turn, in the order they came. */
export class SteeringInbox {
  #waiting: Waiting[] = [];

  constructor(private readonly max: number) {}

  /** Queues a message (already converted) for the next LLM request; -32602 past the bound. */
  add(blocks: ContentBlock[], parts: UserPart[]): void {
    if (this.#waiting.length >= this.max) {
      throw new AcpError(INVALID_PARAMS, `${this.max} steering messages already wait for this turn's next LLM request (MAX_PENDING_STEERING); wait for them to be taken`);
    }
    this.#waiting.push({ blocks, parts, messageId: randomId() });
  }

  /**
   * Hands what waits to the turn: one user message appended to `history`, each block shown as a
   * `user_message_chunk` (under the message's own id) through `emit`. Whether there was any.
   */
  deliver(history: Message[], emit: (u: SessionUpdate) => void): boolean {
    if (this.#waiting.length === 0) return false;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const w of waiting) for (const content of w.blocks) emit({ sessionUpdate: "user_message_chunk", messageId: w.messageId, content });
    history.push({ role: "user", content: waiting.flatMap((w) => w.parts) });
    return true;
  }

  /** Forgets what was not delivered (the turn ended); how many there were. */
  clear(): number {
    const n = this.#waiting.length;
    this.#waiting = [];
    return n;
  }
}
