// Owns the agent's in-process `dev` tools: one shim folder for the agent's life, made with its first
// shell command (`rg` and `tree` first on the shell's PATH), the environment of shell commands (the
// whitelist, TENDRIL_* settings and the shims — never the agent's API keys), and a fresh tool set per
// session (its own todo list and artifacts) behind the pool's local-server spec. `tendril dev-mcp`
// serves the same tools.
import { realpathSync } from "node:fs";
import { childEnv } from "../core/child-env.ts";
import type { Limits } from "../core/limits.ts";
import type { McpServerSpec } from "../core/mcp/types.ts";

export interface AgentDevTools {
  /** The `dev` server of a session working in `cwd`. */
  spec(cwd: string): McpServerSpec;
  /** Removes the shim folder (every exit path calls it; idempotent and synchronous). */
  dispose(): void;
}

function tendrilSettings(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (k.startsWith("TENDRIL_") && v !== undefined) out[k] = v;
  return out;
}

/**
 * The agent's dev tools. The shim folder is made when the first shell command runs (sweeping stale
 * ones reads all of TMPDIR): a session that runs none, like most CI prompts, never pays for it.
 */
export function startDevTools(limits: Limits, cacheDir: string): AgentDevTools {
  let disposed = false;
  let made: { dir: string; remove: (dir: string) => void } | undefined;
  let ready: Promise<Record<string, string>> | undefined;
  const shellEnv = () =>
    (ready ??= (async () => {
      const { makeShimDir, removeShimDir, sweepStaleShimDirs } = await import("./shim-dir.ts");
      sweepStaleShimDirs();
      const shimDir = await makeShimDir();
      made = { dir: shimDir, remove: removeShimDir };
      if (disposed) removeShimDir(shimDir); // the agent ended while the folder was being made
      const base = childEnv(process.env, tendrilSettings(process.env));
      // Lets the rg shim skip its own folder when it looks for a real ripgrep on PATH.
      return { ...base, PATH: base.PATH ? `${shimDir}:${base.PATH}` : shimDir, TENDRIL_SHIM_DIR: shimDir };
    })().catch((err: unknown) => {
      ready = undefined; // a full TMPDIR now need not fail every later command
      throw err;
    }));
  return {
    spec: (cwd) => ({
      name: "dev",
      transport: "local",
      private: true,
      local: async () => {
        const { buildDevTools } = await import("./dev-mcp-tools.ts");
        const dev = await buildDevTools({ root: realpathSync(cwd), limits, cacheDir, env: shellEnv });
        return { tools: dev.tools, instructions: dev.instructions, close: () => dev.shell.stopAll() };
      },
    }),
    dispose: () => {
      if (disposed) return;
      disposed = true;
      if (made) made.remove(made.dir);
    },
  };
}
