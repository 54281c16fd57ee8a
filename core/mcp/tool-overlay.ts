// Owns wrapping a session's tools (McpSessionTools): one wrapper that forwards every member — tools,
// calls, instructions, list and server events, prompts, close — and changes only what its caller
// names: the tool list, how calls are answered, whether it follows the session's changes and close.
// The task tool, plan mode, v2's per-call cancel and a subagent's tools are overlays.
import type { McpCallOptions, McpCallResult, McpSessionTools, McpToolInfo } from "./types.ts";

type Call = (name: string, args: Record<string, unknown>, opts?: McpCallOptions) => Promise<McpCallResult>;

export interface ToolOverlay {
  /** The list the model is offered, from the wrapped one. */
  tools?(inner: McpToolInfo[]): McpToolInfo[];
  /** Answers a call, or hands it on (`next`: the wrapped tools' call). */
  call?(name: string, args: Record<string, unknown>, opts: McpCallOptions | undefined, next: Call): Promise<McpCallResult>;
  /** Borrowed tools: closed by their owner, not through this wrapper, and their changes not followed
   *  through it (a subagent's view of its parent's tools). */
  borrowed?: boolean;
}

export function overlayTools(inner: McpSessionTools, o: ToolOverlay): McpSessionTools {
  const next: Call = (name, args, opts) => inner.call(name, args, opts);
  const out: McpSessionTools = {
    tools: o.tools ? () => o.tools!(inner.tools()) : () => inner.tools(),
    call: o.call ? (name, args, opts) => o.call!(name, args, opts, next) : next,
    instructions: () => inner.instructions(),
    onToolsChanged: o.borrowed ? () => {} : (listener) => inner.onToolsChanged(listener),
    close: o.borrowed ? async () => {} : () => inner.close(),
  };
  // Delegated member by member: the pool's session is a class, whose methods a spread would lose.
  if (inner.onServerEvent && !o.borrowed) out.onServerEvent = (listener) => inner.onServerEvent!(listener);
  if (inner.prompts) out.prompts = () => inner.prompts!();
  if (inner.getPrompt) out.getPrompt = (server, name, args, signal) => inner.getPrompt!(server, name, args, signal);
  if (inner.onPromptsChanged && !o.borrowed) out.onPromptsChanged = (listener) => inner.onPromptsChanged!(listener);
  return out;
}
