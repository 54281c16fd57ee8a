// Owns cancelling one tool call on its own (ACP v2 `tool_call/cancel`): a session's tools wrapped so a
// call whose own signal aborts stops (its server is told, through the call's signal) and answers the
// model with a cancelled error at once, while the rest of the turn goes on. Does not decide which
// calls may be cancelled (v2/server.ts, the only version with a per-call cancel today) nor how the client hears it (v2/updates.ts).
import type { McpCallResult, McpSessionTools } from "../mcp/types.ts";
import { overlayTools } from "../mcp/tool-overlay.ts";

export const CANCELLED_TEXT = "The user cancelled this tool call.";

/** `tools` where a call with an id whose signal (`signalOf`) aborts ends as cancelled. */
export function withToolCancel(tools: McpSessionTools, signalOf: (callId: string) => AbortSignal): McpSessionTools {
  return overlayTools(tools, {
    call: (name, args, opts, next) => {
      const own = opts?.callId !== undefined ? signalOf(opts.callId) : undefined;
      if (!own) return next(name, args, opts);
      const cancelled: McpCallResult = { content: [{ type: "text", text: CANCELLED_TEXT }], text: CANCELLED_TEXT, isError: true };
      if (own.aborted) return Promise.resolve(cancelled);
      const signal = opts?.signal ? AbortSignal.any([opts.signal, own]) : own;
      return new Promise<McpCallResult>((resolve) => {
        const onAbort = () => resolve(cancelled);
        own.addEventListener("abort", onAbort, { once: true });
        void next(name, args, { ...opts, signal }).then(
          (r) => (own.removeEventListener("abort", onAbort), resolve(own.aborted ? cancelled : r)),
          (err: unknown) => (own.removeEventListener("abort", onAbort), resolve({ content: [], text: String(err), isError: true })),
        );
      });
    },
  });
}
