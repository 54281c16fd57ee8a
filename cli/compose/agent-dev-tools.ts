// Owns the agent's in-process `dev` tools: one shim folder for the agent's life, made with its first
// shell command (`rg` and `tree` first on the shell's PATH), the environment of shell commands
// (core/child-env.ts's shellEnv and the shims — never the agent's API keys), and a fresh tool set per
// session (its own todo list and artifacts, its shell confined by the `sandbox` setting) behind the
// pool's local-server spec. `tendril dev-mcp` serves the same tools.
import { realpathSync } from "node:fs";
import { shellEnv } from "../../core/child-env.ts";
import { resolvePaths, type SandboxConfig } from "../../core/config.ts";
import type { SandboxMode } from "../../core/sandbox-modes.ts";
import type { Limits } from "../../core/limits.ts";
import type { McpServerSpec, StdioConfine } from "../../core/mcp/types.ts";
import type { Launch } from "../../tools/dev/exec.ts";
import { lazyShims } from "./lazy-shims.ts";
import { selfCommand } from "../process/self.ts";

export interface AgentDevTools {
  /** The `dev` server of a session working in `cwd`, with its additional workspace roots; `sandboxMode`:
   *  the session's setting, read at each command. */
  spec(cwd: string, opts?: { additionalDirectories?: readonly string[]; sandboxMode?: () => SandboxMode }): McpServerSpec;
  /** Removes the shim folder (every exit path calls it; idempotent and synchronous). */
  dispose(): void;
}

/**
 * The agent's dev tools. The shim folder is made when the first shell command runs (sweeping stale
 * ones reads all of TMPDIR): a session that runs none, like most CI prompts, never pays for it.
 */
export function startDevTools(limits: Limits, cacheDir: string, passEnv: readonly string[] = [], sandbox?: { settings: SandboxConfig; configDir: string }, shellOutput: "digest" | "raw" = "digest"): AgentDevTools {
  const shims = lazyShims(() => shellEnv(process.env, passEnv));
  return {
    spec: (cwd, { additionalDirectories = [], sandboxMode } = {}) => ({
      name: "dev",
      transport: "local",
      private: true,
      local: async () => {
        const { buildDevTools } = await import("../../tools/dev/tool-list.ts");
        const extraRoots = additionalDirectories.map((d) => realpathSync(d));
        const dev = await buildDevTools({ root: realpathSync(cwd), extraRoots, unsandboxedRetry: true, limits, cacheDir, env: shims.env, sandbox: sandbox && sandboxContext(sandbox), ...(sandboxMode ? { sandboxMode } : {}), shellOutput });
        return { tools: dev.tools, instructions: dev.instructions, close: () => dev.shell.stopAll() };
      },
    }),
    dispose: () => shims.dispose(),
  };
}

/**
 * The pool's way to start `[[mcp]] sandbox = …` servers: the shell's sandbox (same settings but the
 * mode), one confiner per mode and workspace so bwrap is probed once for each.
 */
export function mcpConfine(s: { settings: SandboxConfig; configDir: string }): StdioConfine {
  const confiners = new Map<string, Promise<(req: { argv: string[]; cwd: string; env: Record<string, string> }) => Promise<Launch>>>();
  return async (req) => {
    const root = realpathSync(req.root);
    const key = `${req.mode}\0${root}`;
    let confiner = confiners.get(key);
    if (!confiner) {
      confiner = import("../../tools/dev/sandbox.ts").then((sb) => sb.sandboxConfiner({ ...sandboxContext({ ...s, settings: { ...s.settings, mode: req.mode } }), root }));
      confiners.set(key, confiner);
    }
    const launch = await (await confiner)({ argv: [req.command, ...req.args], cwd: req.cwd, env: req.env });
    return { command: launch.command, args: launch.args, env: launch.env, ...(launch.cleanup ? { cleanup: launch.cleanup } : {}) };
  };
}

/** Why a confined `mode` cannot work for a session in `cwd` (no bwrap, user namespaces refused), or undefined when it can. */
export async function sandboxProblem(s: { settings: SandboxConfig; configDir: string }, mode: SandboxMode, cwd: string): Promise<string | undefined> {
  if (mode === "off") return undefined;
  const sb = await import("../../tools/dev/sandbox.ts");
  return sb.prepareSandbox({ ...sandboxContext({ ...s, settings: { ...s.settings, mode } }), root: realpathSync(cwd) }).then(
    () => undefined,
    (err: Error) => err.message,
  );
}

/**
 * The sandbox of shell commands as tools/dev/sandbox.ts needs it: bwrap is looked up on the agent's own
 * PATH, Tendril's state dir (every session's transcript, remembered approvals) is hidden wherever XDG
 * puts it, and the agent's ssh-agent socket is hidden too (the read-only root would show it, and through
 * it a command could sign as the user).
 */
export function sandboxContext(s: { settings: SandboxConfig; configDir: string }) {
  const sock = process.env.SSH_AUTH_SOCK;
  const settings = sock?.startsWith("/") ? { ...s.settings, hide: [...s.settings.hide, sock] } : s.settings;
  return { settings, configDir: s.configDir, stateDir: resolvePaths(process.env).stateDir, pathVar: process.env.PATH, home: process.env.HOME, self: selfCommand() };
}
