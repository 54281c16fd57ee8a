// Owns how a tool call looks to the editor: its title, kind, locations, result content (text, diffs for
// edits) and the `plan` mirror of the todo tool. Pure functions over ACP types; sends nothing.
import type { Plan, SessionUpdate, ToolCallContent, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";
import { isAbsolute, resolve } from "node:path";
import type { McpCallResult } from "../mcp/types.ts";
import { PLAN_TOOL } from "./plan-mode.ts";
import { TASK_TOOL } from "./task-tool.ts";

export interface CallView {
  /** The tool name the LLM used (`server__tool`). */
  name: string;
  /** The MCP tool name (after `server__`), or the LLM's name when unknown. */
  tool: string;
  readOnly: boolean;
  input: Record<string, unknown>;
  cwd: string;
}

const TITLE_CHARS = 120;

function clip(text: string, max = TITLE_CHARS): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > max ? one.slice(0, max - 1) + "…" : one;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

export function absPath(cwd: string, path: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}

export function toolKind(v: CallView): ToolKind {
  if (v.name === PLAN_TOOL) return "switch_mode"; // presenting the plan asks to leave plan mode
  if (v.name === TASK_TOOL) return "think"; // a subagent works it out
  if (v.tool === "shell" || v.tool === "shell_write" || v.tool === "shell_kill") return "execute";
  if (v.tool === "str_replace") return "edit";
  if (v.tool === "todo") return "think";
  if (v.readOnly) return "read";
  return "other";
}

export function toolTitle(v: CallView): string {
  const command = str(v.input.command);
  const path = str(v.input.path);
  // Titles lead with the tool, so clients whose policies match a title's first word can name it.
  if (v.tool === "shell" && command) return clip(`shell: ${command}`);
  // What is written to a background command runs as a command may: the title shows it.
  if (v.tool === "shell_write" && str(v.input.id)) return clip(`shell_write ${str(v.input.id)}: ${JSON.stringify(str(v.input.text) ?? "")}${v.input.eof === true ? " and end of input" : ""}`);
  if (v.tool === "str_replace" && path) return clip(`str_replace ${path}`);
  if (v.tool === "todo") return "todo: update the list";
  if (v.name === TASK_TOOL && str(v.input.description)) return clip(`task: ${str(v.input.description)}`);
  if (path) return clip(`${v.name} ${path}`);
  return v.name === "" ? "(a tool call with no name)" : v.name;
}

export function toolLocations(v: CallView): ToolCallLocation[] {
  const path = str(v.input.path);
  return path ? [{ path: absPath(v.cwd, path) }] : [];
}

/** The opening `tool_call` update (status pending). */
export function toolCallStart(id: string, v: CallView): SessionUpdate {
  const locations = toolLocations(v);
  return {
    sessionUpdate: "tool_call",
    toolCallId: id,
    title: toolTitle(v),
    kind: toolKind(v),
    status: "pending",
    rawInput: v.input,
    ...(locations.length ? { locations } : {}),
    _meta: { toolName: v.name },
  };
}

function textContent(text: string): ToolCallContent {
  return { type: "content", content: { type: "text", text } };
}

/** Content of the final update: the (trimmed) text, images as they came, and a diff for a successful edit. */
export function resultContent(v: CallView, result: McpCallResult, trimmedText: string): ToolCallContent[] {
  const out: ToolCallContent[] = [];
  const path = str(v.input.path);
  if (v.tool === "str_replace" && path && !result.isError) {
    const oldStr = str(v.input.old_str) ?? "";
    out.push({ type: "diff", path: absPath(v.cwd, path), oldText: oldStr === "" ? null : oldStr, newText: str(v.input.new_str) ?? "" });
  }
  if (trimmedText !== "") out.push(textContent(trimmedText));
  // Everything non-text the tool returned reaches the client as it came.
  for (const c of result.content) {
    if (c.type === "image") out.push({ type: "content", content: { type: "image", data: c.data, mimeType: c.mimeType } });
    else if (c.type === "resource_link") out.push({ type: "content", content: { type: "resource_link", uri: c.uri, name: c.name, ...(c.mimeType ? { mimeType: c.mimeType } : {}) } });
    else if (c.type === "resource") out.push({ type: "content", content: { type: "resource", resource: c.resource as { uri: string; text: string } } });
  }
  return out;
}

/** A final update for a call that never ran (denied, rejected, refused, unknown, cancelled). */
export function failedWithText(id: string, text: string): SessionUpdate {
  return { sessionUpdate: "tool_call_update", toolCallId: id, status: "failed", content: [textContent(text)], rawOutput: { error: text } };
}

/** `plan` mirroring a todo call's list, or undefined when the call did not set a list. */
export function planFromTodo(v: CallView): (Plan & { sessionUpdate: "plan" }) | undefined {
  if (v.tool !== "todo" || !Array.isArray(v.input.items)) return undefined;
  const entries: Plan["entries"] = [];
  for (const item of v.input.items as unknown[]) {
    if (typeof item !== "object" || item === null) continue;
    const it = item as { text?: unknown; done?: unknown };
    if (typeof it.text !== "string") continue;
    entries.push({ content: it.text, priority: "medium", status: it.done === true ? "completed" : "pending" });
  }
  return { sessionUpdate: "plan", entries };
}
