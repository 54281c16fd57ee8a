// Owns the `tendril dev-mcp` mode: flags and environment → the shell, str_replace and todo tools (plus
// the `_Stop`/`_PostCompact` hooks) served over stdio, the shell's environment (the agent's whitelist
// plus `--pass-env` names, the `--sandbox` setting), and the exit path (stdin EOF, SIGTERM/SIGINT/SIGHUP)
// that kills every process group and removes the shim dir.
import { realpath, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { passEnvNames, shellEnv } from "../../core/child-env.ts";
import { loadConfig } from "../../core/config.ts";
import { log, setLogLevel, setLogScope } from "../../core/log.ts";
import { serveMcp } from "../../core/mcp/server.ts";
import { killAllGroups, setKillLimits } from "../../core/process-group.ts";
import { VERSION } from "../../core/version.ts";
import { checkHidePaths } from "../../tools/dev/sandbox.ts";
import { sandboxContext } from "../compose/agent-dev-tools.ts";
import { buildDevTools } from "../../tools/dev/tool-list.ts";
import { lazyShims } from "../compose/lazy-shims.ts";
import { readFileOrUndefined } from "../process/optional-file.ts";
import { releaseOnStop, watchStopSignals } from "../process/stop-signals.ts";
import { installExitPolicy } from "../process/fatal.ts";

export interface DevMcpFlags {
  root?: string;
  config?: string;
  log?: string;
  passEnv?: string;
  sandbox?: string;
}

async function resolveRoot(input: string): Promise<string> {
  const real = await realpath(resolve(input)).catch(() => undefined);
  if (real === undefined || !(await stat(real)).isDirectory()) throw new Error(`--root ${input}: not a directory`);
  return real;
}

export async function runDevMcp(flags: DevMcpFlags): Promise<number> {
  setLogScope("tendril dev-mcp");
  let cfg;
  let root: string;
  let passEnv: string[];
  try {
    cfg = await loadConfig({ config: flags.config, log: flags.log, sandbox: flags.sandbox }, process.env, readFileOrUndefined);
    if (cfg.sandbox.hide.length > 0) checkHidePaths(cfg.sandbox.hide);
    setLogLevel(cfg.logLevel);
    root = await resolveRoot(flags.root ?? process.cwd());
    passEnv = passEnvNames(flags.passEnv, process.env);
  } catch (err) {
    process.stderr.write(`tendril dev-mcp: ${(err as Error).message}\n`);
    return 2;
  }
  // A stray rejection must not take the server (and its children's cleanup) down with it.
  installExitPolicy();
  setKillLimits(cfg.limits);
  // The shim folder is made with the first shell command, and goes the moment a stop is decided,
  // before any wait: whoever stops us (the agent's kill ladder) may SIGKILL us a grace period later,
  // while our own ladder still runs.
  const shims = lazyShims(() => shellEnv(process.env, passEnv));
  releaseOnStop(() => shims.dispose());
  // Caught for as long as the process lives: a signal during start-up, or a second one during
  // shutdown, must not skip the cleanup. An MCP server stopped by its client exits 0.
  const signals = watchStopSignals();
  const sandbox = sandboxContext({ settings: cfg.sandbox, configDir: cfg.paths.configDir });
  const dev = await buildDevTools({ root, limits: cfg.limits, cacheDir: cfg.paths.cacheDir, env: shims.env, sandbox, shellOutput: cfg.shellOutput });
  const serving = await serveMcp({
    name: "tendril-dev",
    version: VERSION,
    instructions: dev.instructions,
    tools: dev.tools,
    input: process.stdin,
    output: process.stdout,
    maxLineBytes: cfg.limits.MAX_LINE_BYTES,
  });
  log.info("serving", { root, artifacts: dev.artifactDir });
  const end = await Promise.race([serving.closed, signals.stopped.then((sig) => ({ why: sig, clean: true }))]);
  log.info("stopping", { why: end.why, running: dev.shell.running });
  shims.dispose();
  await Promise.all([serving.close(), killAllGroups()]);
  return end.clean ? 0 : 1;
}
