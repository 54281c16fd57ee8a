// Owns the agent's in-process `dev` tools: one shim folder for the agent's life (`rg` and `tree`
// first on the shell's PATH), the environment of shell commands (the whitelist, TENDRIL_* settings
// and the shims — never the agent's API keys), and a fresh tool set per session (its own todo list
// and artifacts) behind the pool's local-server spec. `tendril dev-mcp` serves the same tools.
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

export async function startDevTools(limits: Limits, cacheDir: string): Promise<AgentDevTools> {
  const { makeShimDir, removeShimDir, sweepStaleShimDirs } = await import("./shim-dir.ts");
  sweepStaleShimDirs();
  const shimDir = await makeShimDir();
  const base = childEnv(process.env, tendrilSettings(process.env));
  // Lets the rg shim skip its own folder when it looks for a real ripgrep on PATH.
  const env = { ...base, PATH: base.PATH ? `${shimDir}:${base.PATH}` : shimDir, TENDRIL_SHIM_DIR: shimDir };
  let disposed = false;
  return {
    spec: (cwd) => ({
      name: "dev",
      transport: "local",
      private: true,
      local: async () => {
        const { buildDevTools } = await import("./dev-mcp-tools.ts");
        const dev = await buildDevTools({ root: realpathSync(cwd), limits, cacheDir, env });
        return { tools: dev.tools, instructions: dev.instructions, close: () => dev.shell.stopAll() };
      },
    }),
    dispose: () => {
      if (disposed) return;
      disposed = true;
      removeShimDir(shimDir);
    },
  };
}
