// Owns the in-memory stand-ins for testing the turn and sessions without processes or sockets: a
// scripted LLM provider (each call pops the next scripted response and records the request), a
// stand-in MCP namespace, and a pool handing it out. Test-only.
import type { LlmEvent, LlmProvider, LlmRequest, Message, ToolCall } from "../core/llm/types.ts";
import type { McpCallResult, McpServerEvent, McpServerSpec, McpSessionTools, McpToolInfo } from "../core/mcp/types.ts";
import { toCallResult } from "../core/mcp/call-result.ts";
import { WaitList } from "./wait-list.ts";

export type Scripted =
  | { text?: string; calls?: ToolCall[]; stop?: "end_turn" | "tool_use" | "max_tokens"; usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number } }
  | { error: { kind: "server" | "auth" | "transport"; message: string; status?: number } }
  | { hang: true };

export interface ScriptedProvider extends LlmProvider {
  /** Every request's messages, deep-copied when it was made. */
  readonly requests: Message[][];
  /** Every request's system prompt and tool list (what a provider caches as the prefix), as JSON. */
  readonly prefixes: string[];
  push(...responses: Scripted[]): void;
  /** Resolves once the provider has had `n` requests (a turn is then running); rejects after `ms`. */
  requested(n: number, ms?: number): Promise<void>;
}

export function scriptedProvider(responses: Scripted[] = []): ScriptedProvider {
  const queue = [...responses];
  const requests: Message[][] = [];
  const prefixes: string[] = [];
  /** Waits of `requested`, checked after every request. */
  const waits = new WaitList();
  return {
    name: "scripted",
    requests,
    prefixes,
    push: (...more) => void queue.push(...more),
    requested: (n, ms = 5000) => waits.until(() => requests.length >= n, () => `the provider had ${requests.length} requests, not ${n}, within ${ms} ms`, ms),
    async *stream(req: LlmRequest): AsyncIterable<LlmEvent> {
      requests.push(structuredClone(req.messages));
      prefixes.push(JSON.stringify({ system: req.system, tools: req.tools }));
      waits.changed();
      const next = queue.shift();
      if (!next) {
        yield { type: "error", error: { kind: "replay", message: "the script has no more responses" } };
        return;
      }
      if ("hang" in next) {
        await new Promise<void>((resolve) => req.signal.addEventListener("abort", () => resolve(), { once: true }));
        yield { type: "error", error: { kind: "aborted", message: "aborted" } };
        return;
      }
      if ("error" in next) {
        yield { type: "error", error: next.error };
        return;
      }
      if (next.text) yield { type: "text", text: next.text };
      for (const call of next.calls ?? []) yield { type: "tool_call", call };
      const stopReason = next.stop ?? (next.calls?.length ? "tool_use" : "end_turn");
      const cache = { ...(next.usage?.cacheRead ? { cacheReadTokens: next.usage.cacheRead } : {}), ...(next.usage?.cacheWrite ? { cacheWriteTokens: next.usage.cacheWrite } : {}) };
      yield { type: "done", stopReason, usage: { inputTokens: next.usage?.input ?? 10, outputTokens: next.usage?.output ?? 5, ...cache } };
    },
  };
}

const text = (t: string, isError = false): McpCallResult => ({ content: [{ type: "text", text: t }], text: t, isError });

export interface StandInHooks {
  /** `_Stop`'s answer each time it is called ("" = no objection; "hang" = never answers). */
  stop?: () => string;
  postCompact?: string;
}

/** Server events a test fires at every open stand-in session (as the pool reports a death, a restart). */
export class StandInServerEvents {
  readonly listeners = new Set<(e: McpServerEvent) => void>();
  fire(e: McpServerEvent): void {
    for (const l of this.listeners) l(e);
  }
}

/**
 * `t__echo {text}` echoes; `t__sleep {ms}` waits (abortable); `t__fail` is an isError result; with
 * `hooks`, the server also has `_Stop` and `_PostCompact`.
 */
export function standInTools(calls: string[] = [], hooks?: StandInHooks, events?: StandInServerEvents): McpSessionTools {
  const mine = new Set<(e: McpServerEvent) => void>();
  const info = (tool: string): McpToolInfo => ({
    qualifiedName: `t__${tool}`, server: "t", tool, description: tool, inputSchema: { type: "object" }, readOnly: false, hook: tool.startsWith("_"),
  });
  const hookTools = hooks ? [info("_Stop"), info("_PostCompact")] : [];
  return {
    tools: () => [info("echo"), info("sleep"), info("fail"), info("picture"), ...hookTools],
    instructions: () => ({}),
    onToolsChanged: () => {},
    onServerEvent(listener) {
      mine.add(listener);
      events?.listeners.add(listener);
    },
    close: async () => {
      for (const l of mine) events?.listeners.delete(l);
    },
    async call(name, args, opts) {
      calls.push(name);
      if (name === "t___Stop") {
        const answer = hooks?.stop?.() ?? "";
        if (answer === "hang") await new Promise<void>((resolve) => opts?.signal?.addEventListener("abort", () => resolve(), { once: true }));
        return text(answer === "hang" ? "" : answer);
      }
      if (name === "t___PostCompact") return text(hooks?.postCompact ?? "");
      if (name === "t__fail") return text("boom", true);
      if (name === "t__picture") {
        // As an MCP server sends it, through the same mapping the real client uses.
        return toCallResult({
          content: [
            { type: "text", text: "a picture" },
            { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
            { type: "resource_link", uri: "file:///w/a.txt", name: "a.txt" },
            { type: "resource", resource: { uri: "file:///w/b.txt", text: "B CONTENT" } },
          ],
        });
      }
      if (name === "t__echo") return text(String(args.text ?? ""));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Number(args.ms));
        opts?.signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
      });
      return text(`slept ${args.ms}`);
    },
  };
}

/** A pool whose sessions all get standInTools; `openDelayMs` simulates server start-up. */
export function standInPool(opts: { openDelayMs?: number; opened?: McpServerSpec[][]; hooks?: StandInHooks; calls?: string[]; events?: StandInServerEvents } = {}) {
  return {
    async openTools(specs: McpServerSpec[]): Promise<McpSessionTools> {
      opts.opened?.push(specs);
      if (opts.openDelayMs) await new Promise((r) => setTimeout(r, opts.openDelayMs));
      return standInTools(opts.calls, opts.hooks, opts.events);
    },
  };
}

/**
 * A pool whose sessions get standInTools plus `t__run`, a `liveOutput` tool standing in for the shell:
 * it hands `args.chunks` to the call's onOutput `args.gapMs` apart, then answers as the shell does
 * (`exit_code`, stdout) with everything it printed.
 */
export function liveToolPool() {
  const runInfo: McpToolInfo = { qualifiedName: "t__run", server: "t", tool: "run", description: "run", inputSchema: { type: "object" }, readOnly: false, hook: false, liveOutput: true };
  return {
    async openTools(): Promise<McpSessionTools> {
      const base = standInTools();
      return {
        ...base,
        tools: () => [...base.tools(), runInfo],
        async call(name, args, opts) {
          if (name !== "t__run") return base.call(name, args, opts);
          const chunks = (args.chunks as string[] | undefined) ?? [];
          for (const c of chunks) {
            opts?.onOutput?.(Buffer.from(c));
            await new Promise((r) => setTimeout(r, Number(args.gapMs ?? 0)));
          }
          const stdout = chunks.join("");
          const exit = Number(args.exit ?? 0);
          return { content: [{ type: "text", text: `exit_code: ${exit}\nstdout:\n${stdout}` }], text: `exit_code: ${exit}\nstdout:\n${stdout}`, isError: false, structured: { exit_code: exit, stdout } };
        },
      };
    },
  };
}
