// Owns building one agent's session layer from its config: the MCP pool and the session manager with
// its stores. Its own chunk: loaded once the first initialize is answered (agent-runtime.ts), so an
// editor's handshake does not wait for the session layer's code. Reads no flags, owns no close sequence.
import { SessionManager } from "../../core/acp/session-manager.ts";
import { SessionStore } from "../../core/agent/session-store.ts";
import type { Config } from "../../core/config.ts";
import type { LlmProvider } from "../../core/llm/types.ts";
import type { AcpMcpRelay } from "../../core/mcp/acp-transport.ts";
import { createMcpPool } from "../../core/mcp/pool.ts";
import type { McpPool } from "../../core/mcp/types.ts";
import { ApprovalStore } from "../../core/policy/approvals.ts";
import { type AgentDevTools, mcpConfine, sandboxProblem } from "./agent-dev-tools.ts";

export interface AgentSessions {
  sessions: SessionManager;
  pool: McpPool;
}

export interface SessionsSetup {
  dev: AgentDevTools | undefined;
  acpRelay: AcpMcpRelay;
  modelList: "eager" | "on-demand";
  /** false: sessions live in memory only. */
  persist: boolean;
}

export function buildSessions(cfg: Config, provider: LlmProvider, o: SessionsSetup): AgentSessions {
  const { dev } = o;
  const pool = createMcpPool({ limits: cfg.limits, env: process.env, acpRelay: o.acpRelay, confine: mcpConfine({ settings: cfg.sandbox, configDir: cfg.paths.configDir }) });
  const sessions = new SessionManager({
    pool,
    provider,
    model: cfg.model,
    maxTokens: cfg.maxTokens,
    contextWindow: cfg.contextWindow,
    mode: cfg.mode,
    rules: cfg.rules,
    systemPrompt: cfg.systemPrompt,
    limits: cfg.limits,
    devServer: dev?.spec,
    ...(dev && { sandbox: { mode: cfg.sandbox.mode, problem: (mode, cwd) => sandboxProblem({ settings: cfg.sandbox, configDir: cfg.paths.configDir }, mode, cwd) } }),
    configServers: cfg.mcp,
    models: cfg.models,
    modelList: o.modelList,
    hookServers: cfg.hookServers,
    promptCache: cfg.promptCache,
    prices: cfg.prices,
    ...(o.persist ? { store: new SessionStore(cfg.paths.stateDir) } : {}),
    approvals: new ApprovalStore(cfg.paths.stateDir),
    home: process.env.HOME,
  });
  return { sessions, pool };
}
