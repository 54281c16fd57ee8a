// Owns the session's todo list: the `todo` tool (replace and render), the `_Stop` hook's objection
// while items are open, and the `_PostCompact` hook's copy of the list. In memory only: the list
// lives as long as this server, which is one agent session.
import type { z } from "zod";
import { lazySchema, type SchemaOf } from "../../core/zod-issue.ts";

/** The input schemas, built (and zod loaded) at the first call. */
export const todoInput = lazySchema((z) =>
  z.object({
    items: z
      .array(
        z.object({
          text: z.string().describe("what to do, one short line"),
          done: z.boolean().default(false).describe("true once finished"),
        }),
      )
      .optional()
      .describe("the whole new list (replaces the old one); omit to just read the list"),
  }),
);
export type TodoArgs = z.infer<SchemaOf<typeof todoInput>>;

export interface TodoItem {
  text: string;
  done: boolean;
}

export interface TodoLimits {
  maxItems: number;
  maxItemChars: number;
}

export interface TodoReply {
  text: string;
  isError?: boolean;
  structured?: Record<string, unknown>;
}

export function renderItems(items: readonly TodoItem[]): string {
  return items.map((i) => `${i.done ? "[x]" : "[ ]"} ${i.text}`).join("\n");
}

export class TodoList {
  private items: TodoItem[] = [];

  constructor(private readonly limits: TodoLimits) {}

  get open(): TodoItem[] {
    return this.items.filter((i) => !i.done);
  }

  /** The `todo` tool: replaces the list when items are given, then shows it. */
  update(args: TodoArgs): TodoReply {
    let warning = "";
    if (args.items !== undefined) {
      const next = args.items.map((i) => ({ text: i.text.replace(/\s+/g, " ").trim(), done: i.done }));
      const problem = this.check(next);
      if (problem) return { text: problem, isError: true };
      warning = droppedWarning(this.items, next);
      this.items = next;
    }
    const done = this.items.length - this.open.length;
    const head =
      this.items.length === 0
        ? "The todo list is empty."
        : `Todo list (${this.open.length} open, ${done} done):\n${renderItems(this.items)}`;
    return { text: warning + head, structured: { items: this.items.map((i) => ({ ...i })) } };
  }

  private check(next: TodoItem[]): string | undefined {
    if (next.length > this.limits.maxItems) {
      return `too many todo items: ${next.length}, over TODO_ITEMS (${this.limits.maxItems}); merge small steps into larger ones`;
    }
    const empty = next.findIndex((i) => i.text === "");
    if (empty !== -1) return `todo item ${empty + 1} has no text; every item needs a short description`;
    const long = next.findIndex((i) => [...i.text].length > this.limits.maxItemChars);
    if (long !== -1) {
      return `todo item ${long + 1} is ${[...next[long]!.text].length} characters, over TODO_ITEM_CHARS (${this.limits.maxItemChars}); shorten it`;
    }
    return undefined;
  }

  /** `_Stop`: non-empty text is an objection to ending the turn. */
  stopObjection(): string {
    const open = this.open;
    if (open.length === 0) return "";
    return (
      `You still have ${open.length} open todo item${open.length === 1 ? "" : "s"}:\n${renderItems(open)}\n` +
      "Finish them before ending your turn, or update the todo list: mark finished items done, " +
      "and remove items that no longer apply while telling the user why."
    );
  }

  /** `_PostCompact`: the list, so it survives the context handoff (empty text when there is none). */
  afterCompaction(): string {
    if (this.items.length === 0) return "";
    return `Your todo list from before the context was compacted (update it with the todo tool):\n${renderItems(this.items)}`;
  }
}

/** Open items that vanished from the list without being marked done. */
function droppedWarning(prev: readonly TodoItem[], next: readonly TodoItem[]): string {
  const kept = new Set(next.map((i) => i.text));
  const dropped = prev.filter((i) => !i.done && !kept.has(i.text));
  if (dropped.length === 0) return "";
  return (
    `Note: ${dropped.length} open item${dropped.length === 1 ? " was" : "s were"} removed without being marked done:\n` +
    `${renderItems(dropped)}\n` +
    "If they are finished, mark them done instead; if they no longer apply, tell the user why.\n\n"
  );
}
