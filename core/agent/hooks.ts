// Owns lifecycle hooks: the `_Stop` and `_PostCompact` MCP tools of the servers the user allowed
// (TENDRIL_MCP_HOOK_SERVERS), each call bounded by HOOK_TIMEOUT_MS and failing open (a hook that
// hangs, errors or is gone never blocks the agent). Does not decide when they run (loop.ts, handoff.ts).
import { log } from "../log.ts";
import type { McpSessionTools } from "../mcp/types.ts";
import type { HOOK } from "../mcp/tool-definition.ts";

export type HookName = typeof HOOK.stop | typeof HOOK.postCompact;

export interface HookOptions {
  /** Servers allowed to run hooks: "*" = all, else the listed names. */
  allowed: "*" | string[];
  timeoutMs: number;
}

export interface HookReply {
  server: string;
  text: string;
}

/** Calls `name` on every allowed server that has it; non-empty texts come back, in server order. */
export async function runHooks(tools: McpSessionTools, name: HookName, opts: HookOptions, signal?: AbortSignal): Promise<HookReply[]> {
  const hooks = tools
    .tools()
    .filter((t) => t.hook && t.tool === name && (opts.allowed === "*" || opts.allowed.includes(t.server)));
  const replies = await Promise.all(
    hooks.map(async (h): Promise<HookReply | undefined> => {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), opts.timeoutMs);
      const stop = () => ac.abort();
      signal?.addEventListener("abort", stop, { once: true });
      try {
        const r = await tools.call(h.qualifiedName, {}, { signal: ac.signal, timeoutMs: opts.timeoutMs });
        if (ac.signal.aborted) {
          log.warn("lifecycle hook timed out; going on without it", { hook: h.qualifiedName, timeout_ms: opts.timeoutMs });
          return undefined;
        }
        if (r.isError) {
          log.warn("lifecycle hook failed; going on without it", { hook: h.qualifiedName, error: r.text.slice(0, 200) });
          return undefined;
        }
        const text = r.text.trim();
        return text === "" ? undefined : { server: h.server, text };
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener("abort", stop);
      }
    }),
  );
  return replies.filter((r): r is HookReply => r !== undefined);
}
