// Owns `tendril dev-mcp`: flags and environment → the shell, str_replace and todo tools (plus the
// `_Stop`/`_PostCompact` hooks) served over stdio, the shell's environment (the agent's whitelist plus
// `--pass-env` names, the `--sandbox` setting), and the exit path (stdin EOF, SIGTERM/SIGINT/SIGHUP) that kills every process
// group and removes the shim dir.
import type { Command } from "commander";
import type { ExitBox } from "./exit-box.ts";
import { readFileOrUndefined } from "./optional-file.ts";

interface DevMcpFlags {
  root?: string;
  config?: string;
  log?: string;
  passEnv?: string;
  sandbox?: string;
}

export function describeDevMcp(program: Command, exit: ExitBox): void {
  program
    .command("dev-mcp")
    .description("run the MCP tool server on stdio: shell, str_replace, todo (+ _Stop/_PostCompact hooks)")
    .option("--root <DIR>", "workspace root the tools are confined to (default: the current directory)")
    .option("--config <file>", "config file (TENDRIL_CONFIG)")
    .option("--log <level>", "error | warn | info | debug (TENDRIL_LOG)")
    .option("--pass-env <NAMES>", "also give shell commands these variables, e.g. GITHUB_TOKEN,NPM_TOKEN (TENDRIL_PASS_ENV)")
    .option("--sandbox <setting>", "off | read-only | workspace-write: confine shell commands with bubblewrap (TENDRIL_SANDBOX)")
    .addHelpText("after", PASS_ENV_HELP)
    .action(async (flags: DevMcpFlags) => {
      exit.code = await runDevMcp(flags);
    });
}

const PASS_ENV_HELP = `
Shell commands get PATH, HOME, USER, LANG, TERM, SHELL, TMPDIR, LC_* and TENDRIL_* from this server's
environment, as the agent's own dev tools do, plus the variables --pass-env names; never the rest
(API keys, cloud credentials). stdout carries only MCP messages; logs go to stderr.
Limits: TENDRIL_<LIMIT>, e.g. TENDRIL_SHELL_TIMEOUT_S=30.`;

async function resolveRoot(input: string): Promise<string> {
  const { realpath, stat } = await import("node:fs/promises");
  const { resolve } = await import("node:path");
  const real = await realpath(resolve(input)).catch(() => undefined);
  if (real === undefined || !(await stat(real)).isDirectory()) throw new Error(`--root ${input}: not a directory`);
  return real;
}

async function runDevMcp(flags: DevMcpFlags): Promise<number> {
  const { loadConfig } = await import("../core/config.ts");
  const { log, setLogLevel, setLogScope } = await import("../core/log.ts");
  setLogScope("tendril dev-mcp");
  let cfg;
  let root: string;
  let passEnv: string[];
  const { passEnvNames, shellEnv } = await import("../core/child-env.ts");
  try {
    cfg = await loadConfig({ config: flags.config, log: flags.log, sandbox: flags.sandbox }, process.env, readFileOrUndefined);
    if (cfg.sandbox.hide.length > 0) (await import("../tools/dev/sandbox.ts")).checkHidePaths(cfg.sandbox.hide);
    setLogLevel(cfg.logLevel);
    root = await resolveRoot(flags.root ?? process.cwd());
    passEnv = passEnvNames(flags.passEnv, process.env);
  } catch (err) {
    process.stderr.write(`tendril dev-mcp: ${(err as Error).message}\n`);
    return 2;
  }
  // A stray rejection must not take the server (and its children's cleanup) down with it.
  process.on("unhandledRejection", (err) => log.error("unhandled rejection", { error: err }));
  const { killAllGroups, killAllGroupsNow, setKillGrace } = await import("../core/process-group.ts");
  const { lazyShims } = await import("./lazy-shims.ts");
  const { releaseOnStop, watchStopSignals } = await import("./stop-signals.ts");
  setKillGrace(cfg.limits.KILL_GRACE_MS);
  // The shim folder is made with the first shell command, and goes the moment a stop is decided,
  // before any wait: whoever stops us (the agent's kill ladder) may SIGKILL us a grace period later,
  // while our own ladder still runs.
  const shims = lazyShims(() => shellEnv(process.env, passEnv));
  releaseOnStop(() => shims.dispose());
  // Caught for as long as the process lives: a signal during start-up, or a second one during
  // shutdown, must not skip the cleanup. An MCP server stopped by its client exits 0.
  const signals = watchStopSignals();
  // Last resort for paths that skip the orderly shutdown below (an uncaught error, process.exit elsewhere).
  process.once("exit", () => killAllGroupsNow());
  const { buildDevTools } = await import("./dev-mcp-tools.ts");
  const { sandboxContext } = await import("./agent-dev-tools.ts");
  const sandbox = sandboxContext({ settings: cfg.sandbox, configDir: cfg.paths.configDir });
  const dev = await buildDevTools({ root, limits: cfg.limits, cacheDir: cfg.paths.cacheDir, env: shims.env, sandbox });
  const { serveMcp } = await import("../core/mcp/server.ts");
  const { VERSION } = await import("../core/version.ts");
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
