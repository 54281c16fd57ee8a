// Owns an in-memory `tendril agent`: the real stream bridge, ACP app and session manager wired to a
// scripted provider and stand-in tools, driven by raw JSON-RPC lines. No process, no socket. Test-only.
import { PassThrough } from "node:stream";
import { serveAgent } from "../core/acp/agent-server.ts";
import type { AgentAuth } from "../core/acp/auth.ts";
import { SessionManager } from "../core/acp/session-manager.ts";
import type { SessionHost } from "../core/acp/session-host.ts";
import { chunksOf } from "../core/wire/link.ts";
import { loadLimits } from "../core/limits.ts";
import { scriptedProvider, standInPool, type ScriptedProvider } from "./in-memory.ts";
import { WaitList } from "./wait-list.ts";

export interface MemoryAgent {
  provider: ScriptedProvider;
  /** Every message the agent wrote, in order. */
  out: Record<string, any>[];
  send(message: Record<string, unknown>): void;
  sendLine(text: string): void;
  /** The response to request `id`, waiting up to `ms`. */
  response(id: number | string, ms?: number): Promise<Record<string, any>>;
  /** Resolves once `ok()` holds: checked now and each time the agent writes a message; rejects, naming `what`, after `ms`. */
  until(ok: () => boolean, what: string, ms?: number): Promise<void>;
  close(): Promise<void>;
}

/** `lazy`: the sessions are handed over as the agent builds them (once, when it first needs them), and
 *  `lazy.built()` hears when; else they are there from the start. */
export function memoryAgent(over: Partial<SessionHost> = {}, env: Record<string, string> = {}, serve: { auth?: AgentAuth; lazy?: { built: () => void } } = {}): MemoryAgent {
  const provider = scriptedProvider();
  const input = new PassThrough();
  const out: Record<string, any>[] = [];
  /** Waits of `until`, checked after every message written. */
  const waits = new WaitList();
  let partial = "";
  const sink = {
    write(bytes: Uint8Array): Promise<void> {
      partial += Buffer.from(bytes).toString("utf8");
      let nl: number;
      while ((nl = partial.indexOf("\n")) >= 0) {
        out.push(JSON.parse(partial.slice(0, nl)));
        partial = partial.slice(nl + 1);
        waits.changed();
      }
      return Promise.resolve();
    },
  };
  const until = (ok: () => boolean, what: string, ms = 5000) => waits.until(ok, () => `no ${what} within ${ms} ms`, ms);
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
  const conn = serveAgent({ input: chunksOf(input), sink, maxLineBytes: limits.MAX_LINE_BYTES }, {
    version: "test",
    sessions: serve.lazy ? async () => (serve.lazy!.built(), sessions) : sessions,
    mcpCapabilities: { http: true, sse: true },
    persistent: over.store !== undefined,
    ...(serve.auth ? { auth: serve.auth } : {}),
  });
  return {
    provider: (over.provider as ScriptedProvider | undefined) ?? provider,
    out,
    send: (m) => void input.write(JSON.stringify(m) + "\n"),
    sendLine: (t) => void input.write(t + "\n"),
    async response(id, ms = 5000) {
      const answer = () => out.find((m) => m.id === id && (m.result !== undefined || m.error !== undefined));
      await until(() => answer() !== undefined, `response to ${id}`, ms);
      return answer()!;
    },
    until,
    async close() {
      input.end();
      await sessions.closeAll();
      conn.close();
    },
  };
}
