// Owns an in-memory `tendril agent`: the real stream bridge, ACP app and session manager wired to a
// scripted provider and stand-in tools, driven by raw JSON-RPC lines. No process, no socket. Test-only.
import { PassThrough } from "node:stream";
import { serveAgent } from "../core/acp/agent-server.ts";
import type { AgentAuth } from "../core/acp/auth.ts";
import { SessionManager } from "../core/acp/session.ts";
import type { SessionHost } from "../core/acp/session-host.ts";
import { chunksOf } from "../core/wire/link.ts";
import { loadLimits } from "../core/limits.ts";
import { scriptedProvider, standInPool, type ScriptedProvider } from "./in-memory.ts";

export interface MemoryAgent {
  provider: ScriptedProvider;
  /** Every message the agent wrote, in order. */
  out: Record<string, any>[];
  send(message: Record<string, unknown>): void;
  sendLine(text: string): void;
  /** The response to request `id`, waiting up to `ms`. */
  response(id: number | string, ms?: number): Promise<Record<string, any>>;
  close(): Promise<void>;
}

export function memoryAgent(over: Partial<SessionHost> = {}, env: Record<string, string> = {}, serve: { auth?: AgentAuth } = {}): MemoryAgent {
  const provider = scriptedProvider();
  const input = new PassThrough();
  const out: Record<string, any>[] = [];
  let partial = "";
  const sink = {
    write(bytes: Uint8Array): Promise<void> {
      partial += Buffer.from(bytes).toString("utf8");
      let nl: number;
      while ((nl = partial.indexOf("\n")) >= 0) {
        out.push(JSON.parse(partial.slice(0, nl)));
        partial = partial.slice(nl + 1);
      }
      return Promise.resolve();
    },
  };
  const limits = loadLimits(env);
  const sessions = new SessionManager({
    pool: standInPool(),
    provider,
    model: "m",
    maxTokens: 1000,
    contextWindow: 100_000,
    mode: "yolo",
    rules: [],
    limits,
    ...over,
  });
  const conn = serveAgent({ input: chunksOf(input), sink, maxLineBytes: limits.MAX_LINE_BYTES }, { version: "test", sessions, mcpCapabilities: { http: true, sse: true }, persistent: over.store !== undefined, ...serve });
  return {
    provider: (over.provider as ScriptedProvider | undefined) ?? provider,
    out,
    send: (m) => void input.write(JSON.stringify(m) + "\n"),
    sendLine: (t) => void input.write(t + "\n"),
    async response(id, ms = 5000) {
      const end = Date.now() + ms;
      for (;;) {
        const r = out.find((m) => m.id === id && (m.result !== undefined || m.error !== undefined));
        if (r) return r;
        if (Date.now() > end) throw new Error(`no response to ${id} within ${ms} ms`);
        await new Promise((res) => setTimeout(res, 2));
      }
    },
    async close() {
      input.end();
      await sessions.closeAll();
      conn.close();
    },
  };
}
