// Owns request bodies as text, serialized incrementally for the three adapters: a history message's
// items once (messages are never changed once in the history), the frame around the history list
// (model, system prompt, tools, options) once while those stay the same. Each adapter's reference body
// (JSON.stringify of its params) stays the definition: what is built here equals it byte for byte.
import type { LlmRequest, Message, ToolSpec } from "./types.ts";

/** A body's text before its history list's first item (ending with `[` or a leading item) and after its last (from `]`). */
export interface Frame {
  head: string;
  tail: string;
}

/**
 * The frame of `reference` (a body serialized with an empty history list) given the text it must
 * start with up to the list's items. A reference laid out otherwise is a mapping changed without this.
 */
export function splitFrame(reference: string, head: string): Frame {
  if (!reference.startsWith(`${head}]`)) throw new Error(`a request body no longer starts with ${head.slice(0, 40)}…`);
  return { head, tail: reference.slice(head.length) };
}

/** The body: the frame around the items, comma-separated (after a leading item too). */
export function joinBody(f: Frame, items: readonly string[]): string {
  if (items.length === 0) return `${f.head}${f.tail}`;
  return `${f.head}${f.head.endsWith("[") ? "" : ","}${items.join(",")}${f.tail}`;
}

function sameTools(a: readonly ToolSpec[], b: readonly ToolSpec[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.name !== y.name || x.description !== y.description || x.inputSchema !== y.inputSchema) return false;
  }
  return true;
}

/** Request fields a body's frame does not depend on: the history goes between head and tail, the
 *  tools are compared by their parts, and the others never reach a body. */
const NOT_FRAMED = new Set<string>(["messages", "tools", "signal", "onRetry"]);

/** The request's fields that shape the frame, as [name, value, name, value, …]. */
function frameKey(req: LlmRequest): unknown[] {
  const key: unknown[] = [];
  for (const [k, v] of Object.entries(req)) if (!NOT_FRAMED.has(k)) key.push(k, v);
  return key;
}

/** The last frame built, kept while every other field of the request and its tools are the same. */
export class FrameCache {
  #key: unknown[] = [];
  #tools: readonly ToolSpec[] = [];
  #frame?: Frame;

  of(req: LlmRequest, build: () => Frame): Frame {
    const key = frameKey(req);
    const f = this.#frame;
    if (f && key.length === this.#key.length && key.every((k, i) => k === this.#key[i]) && sameTools(req.tools, this.#tools)) return f;
    this.#frame = build();
    this.#key = key;
    this.#tools = req.tools;
    return this.#frame;
  }
}

/** Each history message's items as JSON texts, made once per message (and per `variant`, what else
 *  the mapping depends on). */
export class ItemCache<T> {
  readonly #items = new WeakMap<Message, { variant: unknown; value: T }>();

  of(m: Message, variant: unknown, make: (m: Message) => T): T {
    const known = this.#items.get(m);
    if (known && known.variant === variant) return known.value;
    const value = make(m);
    this.#items.set(m, { variant, value });
    return value;
  }
}
