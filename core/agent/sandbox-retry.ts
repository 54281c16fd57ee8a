// Owns the second chance of a command the sandbox stopped (SPEC §3.8): when a confined `shell` call's
// result says the sandbox may have stopped it, and the session asks before running commands, the user
// is asked whether to run that one command again unsandboxed (through its server's `_ShellUnsandboxed`
// hook); an "always" answer is remembered by the policy for that exact command only. Never in yolo or read-only mode.
import { HOOK } from "../mcp/tool-definition.ts";
import type { McpCallResult, McpCallOptions, McpSessionTools } from "../mcp/types.ts";
import { alwaysAllowName, type Policy } from "../policy/policy.ts";
import { isObject } from "../wire/jsonrpc.ts";
import type { PermissionAnswer, PermissionAsk } from "./permission-ask.ts";

/** The hook a tool server with a confined shell offers for running one command unconfined. */
const UNSANDBOXED_HOOK = HOOK.shellUnsandboxed;

export interface RetryContext {
  tools: McpSessionTools;
  policy: Policy;
  signal: AbortSignal;
  askPermission(ask: PermissionAsk, signal: AbortSignal): Promise<PermissionAnswer>;
}

function sandboxNote(result: McpCallResult): string | undefined {
  const s = result.structured;
  const note = isObject(s) ? s.sandbox_note : undefined;
  return typeof note === "string" ? note : undefined;
}

/**
 * The result to keep for a `shell` call: the one given, or — when the sandbox stopped it and the user
 * (or a remembered approval) lets it run unsandboxed — the unsandboxed run's, marked as such.
 */
export async function retryUnsandboxed(
  call: { id: string; name: string; input: Record<string, unknown> },
  server: string,
  result: McpCallResult,
  ctx: RetryContext,
  opts: McpCallOptions,
): Promise<McpCallResult> {
  const note = sandboxNote(result);
  const mode = ctx.policy.mode;
  if (note === undefined || mode === "yolo" || mode === "read-only" || ctx.signal.aborted || typeof call.input.command !== "string") return result;
  const hook = ctx.tools.tools().find((t) => t.hook && t.server === server && t.tool === UNSANDBOXED_HOOK);
  if (!hook) return result;
  const policyCall = { qualifiedName: hook.qualifiedName, tool: UNSANDBOXED_HOOK, input: call.input, readOnly: false };
  const d = ctx.policy.decide(policyCall);
  if (d.decision === "deny") return withLine(result, `[not run again unsandboxed: ${d.why}]`);
  if (d.decision === "ask") {
    const answer = await ctx.askPermission(
      {
        toolCallId: call.id,
        title: `The sandbox stopped this command. Run it once without the sandbox? ${call.input.command}`,
        kind: "execute",
        rawInput: call.input,
        _meta: { toolName: hook.qualifiedName },
        // Remembered for this exact command only (the hook's scope), never by its first word.
        allowAlways: alwaysAllowName(policyCall) === undefined ? undefined : "Always run this exact command without the sandbox",
      },
      ctx.signal,
    );
    if (answer === "cancelled") return result;
    if (answer === "allow_always") ctx.policy.remember(policyCall, "allow");
    if (answer === "reject_always") ctx.policy.remember(policyCall, "reject");
    if (!answer.startsWith("allow")) return withLine(result, "[the user declined to run this command without the sandbox]");
  }
  const again = await ctx.tools.call(hook.qualifiedName, call.input, opts);
  return withLine(again, "[ran again without the sandbox, as the user allowed, after the sandbox stopped it]", true);
}

function withLine(r: McpCallResult, line: string, first = false): McpCallResult {
  const text = first ? `${line}\n${r.text}` : `${r.text}\n${line}`;
  return { ...r, text, content: first ? [{ type: "text", text: line }, ...r.content] : [...r.content, { type: "text", text: line }] };
}
