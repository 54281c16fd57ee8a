// Owns one view per tool call of a `tendril prompt` run: tool_call, tool_call_update and permission
// requests merged by id, with the tool's own name when the agent declares one. Does not render.
import type * as acp from "@agentclientprotocol/sdk";

/** A tool call as the updates so far describe it (tool_call merged with its tool_call_updates). */
export interface ToolCallView {
  id: string;
  title: string;
  kind: string;
  status: string;
  /** The agent's own tool name when it declares one (`_meta` or rawInput), e.g. `dev__shell`. */
  name?: string;
  rawInput?: unknown;
  meta?: Record<string, unknown>;
}

// ACP tool calls carry no tool name; agents that share one put it in `_meta` (flat, or one level down
// as in `{vendor: {toolName}}`) or in rawInput.
function declaredToolName(call: ToolCallView): string | undefined {
  const pick = (o: unknown, keys: string[]): string | undefined => {
    if (!o || typeof o !== "object") return undefined;
    for (const k of keys) {
      const v = (o as Record<string, unknown>)[k];
      if (typeof v === "string" && v !== "") return v;
    }
    return undefined;
  };
  const meta = call.meta;
  const nested = meta ? Object.values(meta).map((v) => pick(v, ["toolName"])).find((v) => v !== undefined) : undefined;
  return pick(meta, ["toolName", "tool", "name"]) ?? nested ?? pick(call.rawInput, ["toolName", "tool"]);
}

/** Merges tool_call / tool_call_update / permission requests into one view per id. */
export class ToolCallTable {
  private readonly calls = new Map<string, ToolCallView>();

  merge(u: acp.ToolCallUpdate | acp.ToolCall): ToolCallView {
    const prev = this.calls.get(u.toolCallId);
    const next: ToolCallView = prev ? { ...prev } : { id: u.toolCallId, title: "", kind: "other", status: "pending" };
    if (u.title != null) next.title = u.title;
    if (u.kind != null) next.kind = u.kind;
    if (u.status != null) next.status = u.status;
    if (u.rawInput != null) next.rawInput = u.rawInput;
    if (u._meta != null) next.meta = { ...next.meta, ...u._meta };
    const name = declaredToolName(next);
    if (name !== undefined) next.name = name;
    this.calls.set(u.toolCallId, next);
    return next;
  }

  list(): ToolCallView[] {
    return [...this.calls.values()];
  }
}
