// Owns one running agent over a pair of byte streams: the in-process `dev` tools, the ACP server, the
// session layer behind it (agent-sessions.ts, its own chunk, built once the first initialize is
// answered) and the one close sequence (turns settled, sessions saved, servers and process groups
// stopped, output flushed). `tendril agent` runs it on stdio; `tendril prompt`
// runs it in its own process over an in-memory pipe (no second process to start).
// Reads no flags, catches no signal and never exits (agent.ts, prompt.ts do).
import { type AgentIo, serveAgent } from "../../core/acp/agent-server.ts";
import { AgentAuth, type AuthHost } from "../../core/acp/auth.ts";
import type { Config } from "../../core/config.ts";
import { flushWithin } from "../../core/exit-flush.ts";
import type { LlmProvider } from "../../core/llm/types.ts";
import { logFailure } from "../../core/log.ts";
import { AcpMcpRelay } from "../../core/mcp/acp-transport.ts";
import { killAllGroupsNow, setKillLimits } from "../../core/process-group.ts";
import { VERSION } from "../../core/version.ts";
import type { LinkEnd } from "../../core/wire/link.ts";
import { startDevTools } from "./agent-dev-tools.ts";
import type { AgentSessions } from "./agent-sessions.ts";
import { releaseOnStop } from "../process/stop-signals.ts";

/** The client's byte streams (the line bound comes from the config). */
type ClientStreams = Omit<AgentIo, "maxLineBytes">;

export interface OpenAgent {
  /** Resolves when the client's input ends or breaks. */
  readonly ended: Promise<LinkEnd>;
  /** Cancels every running turn; returns how many there were. */
  cancelAll(): number;
  /** The close sequence; `eof` gives turns the client's EOF cancelled a moment to send their answers. */
  close(eof: boolean): Promise<void>;
  /** Kills every process group at once (the last resort of every exit path). */
  killAllGroupsNow(): void;
  /** Flushes what is queued for the client (bounded by the caller). */
  flush(): Promise<void>;
}

const SETTLE_AFTER_EOF_MS = 200; // cancelled turns' answers are queued within a moment of the EOF

export interface OpenOptions {
  /** When the config lists no models: ask the provider for its list at start ("eager", the default:
   *  an editor shows every choice), or only when a switch names another model ("on-demand": a
   *  one-shot `tendril prompt` without `--model` is spared the request). */
  modelList?: "eager" | "on-demand";
  /** Variables of ours the dev tools' shell commands also get (`--pass-env`, TENDRIL_PASS_ENV). */
  passEnv?: readonly string[];
  /** Where the agent's key comes from (auth methods, auth_required, authenticate, logout). */
  auth?: AuthHost;
  /** false: sessions live in memory only, no session file is written (`--no-session-persistence`). */
  persist?: boolean;
}

export async function openAgent(cfg: Config, provider: LlmProvider, io: ClientStreams, opts: OpenOptions = {}): Promise<OpenAgent> {
  setKillLimits(cfg.limits);
  const dev = cfg.dev ? startDevTools(cfg.limits, cfg.paths.cacheDir, opts.passEnv, { settings: cfg.sandbox, configDir: cfg.paths.configDir }, cfg.shellOutput) : undefined;
  // The shim folder goes first of all on a stop signal (a conductor's kill ladder SIGKILLs us a grace
  // later), and at exit; at exit every tool process is killed too (the exit policy, cli/process/fatal.ts).
  if (dev) releaseOnStop(() => dev.dispose());
  const acpRelay = new AcpMcpRelay();
  // The session layer is most of the agent's code: it loads while the client reads the initialize answer.
  let parts: AgentSessions | undefined;
  let building: Promise<AgentSessions> | undefined;
  const build = () =>
    (building ??= import("./agent-sessions.ts").then(
      (m) => (parts = m.buildSessions(cfg, provider, { dev, acpRelay, modelList: opts.modelList ?? "eager", persist: opts.persist !== false })),
    ));
  const mcpCapabilities = { http: true, sse: true, acp: true };
  const auth = opts.auth ? new AgentAuth(opts.auth) : undefined;
  const conn = serveAgent({ ...io, maxLineBytes: cfg.limits.MAX_LINE_BYTES }, { version: VERSION, sessions: async () => (await build()).sessions, mcpCapabilities, acpRelay, persistent: opts.persist !== false, auth });
  let closing: Promise<void> | undefined;
  return {
    ended: conn.ended,
    cancelAll: () => parts?.sessions.cancelAll() ?? 0,
    killAllGroupsNow,
    flush: () => conn.flush(),
    close: (eof) =>
      (closing ??= (async () => {
        if (eof) await Promise.race([conn.settled(), new Promise((r) => setTimeout(r, SETTLE_AFTER_EOF_MS))]);
        conn.close();
        // A build still under way finishes first: what it opened is then closed too.
        const built = parts ?? (building && (await building.catch(() => undefined)));
        await built?.sessions.closeAll().catch(logFailure("closing sessions"));
        await built?.pool.closeAll().catch(logFailure("closing the MCP pool"));
        killAllGroupsNow();
        dev?.dispose();
        await flushWithin(conn.flush());
      })()),
  };
}
