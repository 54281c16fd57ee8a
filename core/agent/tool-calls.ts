// Owns running the tool calls of one LLM response: announce each in call order, ask or decide permission,
// run up to MAX_PARALLEL_TOOLS at once, report completions and return results strictly in call order,
// trim results from the middle. Does not talk to the LLM (loop.ts) or the client (the session's io).
import type { PermissionOption, SessionUpdate } from "@agentclientprotocol/sdk";
import type { ToolCall, ToolResult } from "../llm/types.ts";
import type { McpCallResult, McpElicitAnswer, McpElicitation, McpProgress, McpSessionTools, McpToolInfo } from "../mcp/types.ts";
import { log } from "../log.ts";
import { alwaysAllowName, type Policy } from "../policy/policy.ts";
import { createSemaphore } from "../semaphore.ts";
import { retryUnsandboxed } from "./sandbox-retry.ts";
import { middleBytes, utf8Length } from "../text-bounds.ts";
import { isObject } from "../wire/jsonrpc.ts";
import { LiveTerminal, type TerminalShow } from "./live-terminal.ts";
import { type CallView, failedWithText, planFromTodo, resultContent, toolCallStart, toolKind, toolTitle } from "./updates.ts";

import type { PermissionAnswer, PermissionAsk } from "./permission-ask.ts";

export type { PermissionAnswer, PermissionAsk };

/** The client's own elicitation (ACP `elicitation/create`), in the modes it advertised. */
export interface Elicitor {
  modes: readonly ("form" | "url")[];
  ask(toolCallId: string, e: McpElicitation, signal: AbortSignal): Promise<McpElicitAnswer>;
}

export interface ToolRunContext {
  tools: McpSessionTools;
  policy: Policy;
  cwd: string;
  maxParallel: number;
  maxResultBytes: number;
  /** Images a tool returns reach the model up to this many bytes (base64) per result. */
  maxImageBytes: number;
  /** MCP progress notifications shown to the client, per call and second. */
  progressPerS: number;
  toolTimeoutMs: number;
  signal: AbortSignal;
  emit(update: SessionUpdate): void;
  /** Tells the user something outside the conversation (a `notice`); undefined = the client shows none. */
  notice?(n: { severity: "info" | "warning" | "error"; title: string; description?: string }): void;
  askPermission(ask: PermissionAsk, signal: AbortSignal): Promise<PermissionAnswer>;
  /** Asks the client a tool server's question; undefined = it shows no elicitation. */
  elicit?: Elicitor;
  /** The client shows a live terminal for calls of `liveOutput` tools (the shell); undefined = it
   *  gets the captured output as text only. */
  terminal?: TerminalShow;
}

/** One update as recorded, and — for a call with a live terminal — as that client is shown it. */
interface Shown {
  plain: SessionUpdate;
  live?: SessionUpdate;
}

function show(ctx: ToolRunContext, s: Shown): void {
  if (s.live && ctx.terminal) {
    ctx.terminal.record(s.plain);
    ctx.terminal.send(s.live);
  } else ctx.emit(s.plain);
}

/** How a shell result says its command ended: its exit code (null when it never ran) and the signal
 *  that ended it, if one did. */
function exitOf(result: McpCallResult): { code: number | null; signal: string | null } {
  const s = isObject(result.structured) ? result.structured : {};
  return { code: typeof s.exit_code === "number" ? s.exit_code : null, signal: typeof s.signal === "string" ? s.signal : null };
}

/** A call the turn already refused (per-turn cap): it is announced and failed, never run. */
export interface PlannedCall {
  call: ToolCall;
  refusal?: string;
}

const MARKER = (n: number) => `\n\n[… ${n} bytes trimmed from the middle of this tool result …]\n\n`;

/** Trims UTF-8 text from the middle to at most `maxBytes`, with a visible marker; keeps characters whole. */
export function trimMiddle(text: string, maxBytes: number): string {
  const over = utf8Length(text) - maxBytes;
  return over <= 0 ? text : middleBytes(text, maxBytes, MARKER(over));
}

function aborted(signal: AbortSignal): Promise<"aborted"> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve("aborted");
    else signal.addEventListener("abort", () => resolve("aborted"), { once: true });
  });
}

function viewOf(call: ToolCall, info: McpToolInfo | undefined, cwd: string): CallView {
  return { name: call.name, tool: info?.tool ?? call.name, readOnly: info?.readOnly ?? false, input: call.input, cwd };
}

function unknownTool(name: string): string {
  if (name.trim() === "") return "invalid tool call: it has no tool name; call one of the offered tools by its exact name";
  return `unknown tool: ${name}`;
}

/** Runs the calls; resolves with one result per call, in call order (cancelled ones included). */
export async function runToolCalls(planned: PlannedCall[], ctx: ToolRunContext): Promise<ToolResult[]> {
  const n = planned.length;
  const results: (ToolResult | undefined)[] = new Array(n);
  const finals: (Shown[] | undefined)[] = new Array(n);
  const terminals: (LiveTerminal | undefined)[] = new Array(n);
  let emitted = 0;
  const complete = (i: number, result: ToolResult, updates: Shown[]) => {
    if (results[i]) return;
    results[i] = result;
    finals[i] = updates;
    while (emitted < n && finals[emitted]) for (const u of finals[emitted++]!) show(ctx, u);
  };
  const fail = (i: number, text: string) => {
    const plain = failedWithText(planned[i]!.call.id, text);
    complete(i, { callId: planned[i]!.call.id, content: text, isError: true }, [{ plain, live: terminals[i]?.finish(plain, { code: null, signal: null }) }]);
  };

  const slots = createSemaphore(ctx.maxParallel);
  const running: Promise<void>[] = [];
  const stop = aborted(ctx.signal);
  const offered = new Map(ctx.tools.tools().filter((t) => !t.hook).map((t) => [t.qualifiedName, t]));

  for (let i = 0; i < n && !ctx.signal.aborted; i++) {
    const { call, refusal } = planned[i]!;
    const info = offered.get(call.name);
    const view = viewOf(call, info, ctx.cwd);
    const term = info?.liveOutput && ctx.terminal && !refusal ? new LiveTerminal(call.id, ctx.terminal, ctx.cwd) : undefined;
    terminals[i] = term;
    const start = toolCallStart(call.id, view);
    show(ctx, { plain: start, live: term?.start(start) });
    if (refusal) fail(i, refusal);
    else if (!info) fail(i, unknownTool(call.name));
    else {
      const verdict = await Promise.race([decide(view, info, call, ctx), stop]);
      if (verdict === "aborted") break;
      if (verdict !== "run") fail(i, verdict);
      else if (!(await slots.acquire(ctx.signal))) break;
      else running.push(execute(i, call, view, info, ctx, complete, term).finally(() => slots.release()));
    }
  }
  await Promise.race([Promise.all(running), stop]);
  for (let i = 0; i < n; i++) if (!results[i]) fail(i, "cancelled");
  return results as ToolResult[];
}

/** "run", or the error text the LLM sees when the call must not run. */
async function decide(view: CallView, info: McpToolInfo, call: ToolCall, ctx: ToolRunContext): Promise<string> {
  const policyCall = { qualifiedName: call.name, tool: info.tool, input: call.input, readOnly: info.readOnly };
  const d = ctx.policy.decide(policyCall);
  if (d.decision === "deny") return d.why;
  if (d.decision === "allow") return "run";
  const answer = await ctx.askPermission(
    {
      toolCallId: call.id,
      title: toolTitle(view),
      kind: toolKind(view),
      rawInput: call.input,
      _meta: { toolName: call.name },
      allowAlways: alwaysAllowName(policyCall),
    },
    ctx.signal,
  );
  if (answer === "cancelled") return "cancelled";
  if (answer === "allow_always") ctx.policy.remember(policyCall, "allow");
  if (answer === "reject_always") ctx.policy.remember(policyCall, "reject");
  return answer.startsWith("allow") ? "run" : "rejected by user";
}

/**
 * A tool server's question during the call (MCP elicitation). A client that shows elicitation in
 * that mode gets it as is (`ctx.elicit`); otherwise a form becomes a permission question on that call
 * naming the server's message (and the fields it wants): allow → accept, with the form's own defaults
 * as its content (the server judges whether that is enough), reject → decline (SPEC §3.2). A URL the
 * client cannot show is declined without asking (the log says why): nobody could visit it.
 */
async function askOnBehalf(call: ToolCall, e: McpElicitation, ctx: ToolRunContext): Promise<McpElicitAnswer> {
  if (ctx.elicit?.modes.includes(e.mode)) return ctx.elicit.ask(call.id, e, ctx.signal);
  if (e.mode === "url") {
    log.warn("a tool server asked for a URL visit this client cannot show; declined", { tool: call.name, url: e.url });
    return { action: "decline" };
  }
  const fields = Object.keys(formProperties(e.requestedSchema));
  const title = `${call.name} asks: ${e.message}${fields.length > 0 ? ` (form fields: ${fields.join(", ")})` : ""}`;
  const answer = await ctx.askPermission(
    { toolCallId: call.id, title, kind: "other", rawInput: { message: e.message, requestedSchema: e.requestedSchema }, _meta: { toolName: call.name } },
    ctx.signal,
  );
  if (answer === "cancelled") return { action: "cancel" };
  return answer.startsWith("allow") ? { action: "accept", content: formDefaults(e.requestedSchema) } : { action: "decline" };
}

function formProperties(schema: Record<string, unknown>): Record<string, unknown> {
  const p = schema.properties;
  return isObject(p) ? p : {};
}

/** The values a form states as its defaults (MCP's primitive fields may carry `default`). */
function formDefaults(schema: Record<string, unknown>): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(formProperties(schema))) {
    const value = isObject(field) ? field.default : undefined;
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") content[name] = value;
  }
  return content;
}

/** MCP progress of a running call shown as its content, at most `progressPerS` updates a second. */
function progressReporter(toolCallId: string, ctx: ToolRunContext): (p: McpProgress) => void {
  let last = -Infinity;
  return (p) => {
    const now = Date.now();
    if (ctx.signal.aborted || now - last < 1000 / ctx.progressPerS) return;
    last = now;
    const of = p.total !== undefined ? `${p.progress}/${p.total}` : String(p.progress);
    const text = `progress ${of}${p.message ? `: ${p.message}` : ""}`;
    ctx.emit({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress", content: [{ type: "content", content: { type: "text", text } }] });
  };
}

/** The images of a result the model can take, within the byte bound; a note for the ones left out. */
function imagesFor(result: McpCallResult, maxBytes: number): { images: { mimeType: string; data: string }[]; dropped?: string } {
  const images: { mimeType: string; data: string }[] = [];
  let used = 0;
  let left = 0;
  for (const c of result.content) {
    if (c.type !== "image" || !c.mimeType.startsWith("image/") || c.data === "") continue;
    if (used + c.data.length > maxBytes) {
      left++;
      continue;
    }
    used += c.data.length;
    images.push({ mimeType: c.mimeType, data: c.data });
  }
  return left ? { images, dropped: `[${left} image(s) not shown: over MAX_TOOL_IMAGE_BYTES (${maxBytes} bytes)]` } : { images };
}

async function execute(
  i: number,
  call: ToolCall,
  view: CallView,
  info: McpToolInfo | undefined,
  ctx: ToolRunContext,
  complete: (i: number, r: ToolResult, u: Shown[]) => void,
  term: LiveTerminal | undefined,
): Promise<void> {
  if (ctx.signal.aborted) return;
  ctx.emit({ sessionUpdate: "tool_call_update", toolCallId: call.id, status: "in_progress" });
  const opts = {
    callId: call.id,
    signal: ctx.signal,
    timeoutMs: ctx.toolTimeoutMs,
    onProgress: progressReporter(call.id, ctx),
    onElicit: (e: McpElicitation) => askOnBehalf(call, e, ctx),
    ...(term ? { onOutput: term.push, ...(term.keepable ? { onEnd: term.end } : {}) } : {}),
  };
  const first = await ctx.tools.call(call.name, call.input, opts);
  const result = view.tool === "shell" && info ? await retryUnsandboxed(call, info.server, first, ctx, opts) : first;
  if (ctx.signal.aborted) return;
  const { images, dropped } = imagesFor(result, ctx.maxImageBytes);
  const text = trimMiddle(dropped ? `${result.text}\n${dropped}` : result.text, ctx.maxResultBytes);
  const structured = result.structured;
  // What a tool made inert for the user's sake (the git check's moves) is the user's to know too.
  const userNotice = isObject(structured) && typeof structured.user_notice === "string" ? structured.user_notice : undefined;
  if (userNotice !== undefined) ctx.notice?.({ severity: "warning", title: "A planted git setting was moved aside", description: userNotice });
  const small = structured !== undefined && JSON.stringify(structured).length <= ctx.maxResultBytes;
  const last: SessionUpdate = {
    sessionUpdate: "tool_call_update",
    toolCallId: call.id,
    status: result.isError ? "failed" : "completed",
    content: resultContent(view, result, text),
    rawOutput: small ? structured : { text, isError: result.isError },
  };
  // A command that goes on in the background keeps its terminal (the client may cancel it: shell_kill).
  const background = isObject(structured) && structured.running === true && typeof structured.background_id === "string" ? structured.background_id : undefined;
  const server = info?.server;
  const live = term && background !== undefined && term.keepable && server !== undefined
    ? term.keep(last, () => void ctx.tools.call(`${server}__shell_kill`, { id: background }).catch(() => undefined))
    : term?.finish(last, exitOf(result));
  const updates: Shown[] = [{ plain: last, live }];
  const plan = result.isError ? undefined : planFromTodo(view);
  if (plan) updates.push({ plain: plan });
  complete(i, { callId: call.id, content: text, isError: result.isError, ...(images.length ? { images } : {}) }, updates);
}
