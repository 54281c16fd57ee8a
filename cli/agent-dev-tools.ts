// Owns the agent's in-process `dev` tools: one shim folder for the agent's life, made with its first
// shell command (`rg` and `tree` first on the shell's PATH), the environment of shell commands
// (core/child-env.ts's shellEnv and the shims — never the agent's API keys), and a fresh tool set per
// session (its own todo list and artifacts, its shell confined by the `sandbox` setting) behind the
// pool's local-server spec. `tendril dev-mcp` serves the same tools.
import { realpathSync } from "node:fs";
import { shellEnv } from "../core/child-env.ts";
import type { SandboxConfig } from "../core/config.ts";
import type { Limits } from "../core/limits.ts";
import type { McpServerSpec } from "../core/mcp/types.ts";
import { lazyShims } from "./lazy-shims.ts";

export interface AgentDevTools {
  /** The `dev` server of a session working in `cwd`, with its additional workspace roots. */
  spec(cwd: string, additionalDirectories?: readonly string[]): McpServerSpec;
  /** Removes the shim folder (every exit path calls it; idempotent and synchronous). */
  dispose(): void;
}

/**
 * The agent's dev tools. The shim folder is made when the first shell command runs (sweeping stale
 * ones reads all of TMPDIR): a session that runs none, like most CI prompts, never pays for it.
 */
export function startDevTools(limits: Limits, cacheDir: string, passEnv: readonly string[] = [], sandbox?: { settings: SandboxConfig; configDir: string }): AgentDevTools {
  const shims = lazyShims(() => shellEnv(process.env, passEnv));
  return {
    spec: (cwd, additionalDirectories = []) => ({
      name: "dev",
      transport: "local",
      private: true,
      local: async () => {
        const { buildDevTools } = await import("./dev-mcp-tools.ts");
        const extraRoots = additionalDirectories.map((d) => realpathSync(d));
        const dev = await buildDevTools({ root: realpathSync(cwd), extraRoots, limits, cacheDir, env: shims.env, sandbox: sandbox && sandboxContext(sandbox) });
        return { tools: dev.tools, instructions: dev.instructions, close: () => dev.shell.stopAll() };
      },
    }),
    dispose: () => shims.dispose(),
  };
}

/** The sandbox of shell commands as tools/dev/sandbox.ts needs it: bwrap is looked up on the agent's own PATH. */
export function sandboxContext(s: { settings: SandboxConfig; configDir: string }) {
  return { settings: s.settings, configDir: s.configDir, pathVar: process.env.PATH, home: process.env.HOME };
}
