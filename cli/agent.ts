// Owns `tendril agent`: flags and environment → Config and the LLM provider (prompt's in-process agent
// takes the same setup), the agent (agent-runtime.ts) on stdio, process-level safety nets (uncaught
// errors, signals through stop-signals.ts, a closed stdout) and the exit path, which always kills
// every process group the agent started. The agent itself lives in core/acp and core/agent.
import type { Command } from "commander";
import type { Config } from "../core/config.ts";
import type { LlmProvider } from "../core/llm/types.ts";
import type { AuthHost } from "../core/acp/auth.ts";
import type { ExitBox } from "./exit-box.ts";
import { describeApprovals } from "./approvals.ts";
import { describeLogin } from "./login.ts";
import { dieOfUncaught } from "./fatal.ts";
import type { OpenAgent } from "./agent-runtime.ts";
import { readFileOrUndefined } from "./optional-file.ts";
import { signalExitCode, watchStopSignals } from "./stop-signals.ts";

const ENV_HELP = `
Configuration (flag > environment > config file > default):
  TENDRIL_PROVIDER            anthropic | openai (any OpenAI-compatible endpoint) | replay
                              (default: the provider whose key is set, else the first one in
                              credentials.toml, else openai)
  TENDRIL_MODEL               model id (default: the provider's current default)
  ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL   as the official SDK reads them
  OPENAI_API_KEY, OPENAI_BASE_URL         e.g. OPENAI_BASE_URL=http://127.0.0.1:11434/v1 for Ollama
  (keys can instead be stored once: tendril agent login; the environment wins over the file)
  TENDRIL_MAX_TOKENS          output token cap (default 32768)
  TENDRIL_CONTEXT_WINDOW      context window in tokens (default 200000)
  TENDRIL_MODE                ask | auto-edit | yolo | read-only | plan (default ask)
  TENDRIL_CONFIG              config file (default $XDG_CONFIG_HOME/tendril/config.toml)
  TENDRIL_PROFILE             agent profile: NAME ($XDG_CONFIG_HOME/tendril/agents/NAME.toml) or a path
  TENDRIL_MCP_HOOK_SERVERS    servers whose _Stop/_PostCompact tools run as hooks: a,b or * (default none)
  TENDRIL_RECORD=FILE         append every LLM exchange to FILE (JSONL)
  TENDRIL_REPLAY=FILE         with TENDRIL_PROVIDER=replay: answer from a recorded FILE
  TENDRIL_LOG                 error | warn | info | debug (stderr; default warn)
  TENDRIL_SANDBOX             off | read-only | workspace-write: confine shell commands (default off)
  TENDRIL_PASS_ENV            NAME,… of ours the dev tools' shell commands also get (default: only
                              PATH, HOME, USER, LANG, TERM, SHELL, TMPDIR, LC_*, TENDRIL_*)
  TENDRIL_<LIMIT>             override any limit, e.g. TENDRIL_MAX_LINE_BYTES=256, TENDRIL_MCP_INIT_TIMEOUT_S=5

Permission rules go in the config file as [[rules]] tables (tool glob, decision allow|deny|ask, optional
when = {arg, prefix|glob|regex|inside_workspace}). stdout carries only ACP messages; logs go to stderr.`;

export interface AgentFlags {
  model?: string;
  provider?: string;
  mode?: string;
  config?: string;
  profile?: string;
  log?: string;
  passEnv?: string;
  sandbox?: string;
  checkSandbox?: boolean;
}

export function describeAgent(program: Command, exit: ExitBox): void {
  const agent = program
    .command("agent")
    .description("run the ACP coding agent on stdio (an editor's agent_servers entry)")
    .option("--model <id>", "model id (TENDRIL_MODEL)")
    .option("--provider <name>", "anthropic | openai | replay (TENDRIL_PROVIDER)")
    .option("--mode <mode>", "ask | auto-edit | yolo | read-only | plan (TENDRIL_MODE)")
    .option("--config <file>", "config file (TENDRIL_CONFIG)")
    .option("--profile <name>", "agent profile: NAME or a .toml path (TENDRIL_PROFILE)")
    .option("--log <level>", "error | warn | info | debug (TENDRIL_LOG)")
    .option("--pass-env <NAMES>", "also give the dev tools' shell commands these variables, e.g. GITHUB_TOKEN,NPM_TOKEN (TENDRIL_PASS_ENV)")
    .option("--sandbox <setting>", "off | read-only | workspace-write: confine shell commands with bubblewrap (TENDRIL_SANDBOX)")
    .option("--check-sandbox", "print whether each sandbox setting works on this machine; exit 0 if all do, else 1")
    .addHelpText("after", ENV_HELP)
    .action(async (flags: AgentFlags) => {
      exit.code = flags.checkSandbox ? await checkSandboxHere() : await runAgent(flags);
    });
  describeApprovals(agent, exit);
  describeLogin(agent, exit);
}

/** Config, provider, pass-through names and authentication for an agent; a problem the user must fix is a ConfigError-like error. */
export async function agentSetup(flags: AgentFlags): Promise<{ cfg: Config; provider: LlmProvider; passEnv: string[]; auth: AuthHost }> {
  const { loadConfig } = await import("../core/config.ts");
  const { setLogLevel } = await import("../core/log.ts");
  const { passEnvNames } = await import("../core/child-env.ts");
  const cfg = await loadConfig({ ...flags, cwd: process.cwd() }, process.env, readFileOrUndefined);
  setLogLevel(cfg.logLevel);
  if (cfg.sandbox.hide.length > 0) (await import("../tools/dev/sandbox.ts")).checkHidePaths(cfg.sandbox.hide);
  const passEnv = passEnvNames(flags.passEnv, process.env);
  const { createProvider } = await import("../core/llm/provider.ts");
  const { credentialsPath, keySource } = await import("../core/credentials.ts");
  // The key is looked up per use (environment first, then credentials.toml), so a login or logout
  // while the agent runs counts from the next session or request.
  const p = cfg.provider;
  const { endpoint, auth } = keySource(p, p === "anthropic" ? cfg.anthropic : cfg.openai, credentialsPath(cfg.paths.configDir));
  return { cfg, provider: await createProvider(cfg, readFileOrUndefined, p === "replay" ? undefined : endpoint), passEnv, auth };
}

/** True for the errors that mean "fix your flags, environment or config" (exit 2). */
export function isSetupError(err: unknown): err is Error {
  return err instanceof Error && (err.name === "ConfigError" || err.name === "LimitError" || err.name === "PassEnvError" || err.name === "SandboxError");
}

/** `tendril agent --check-sandbox`: one line per setting, exit 0 when every setting works here. */
async function checkSandboxHere(): Promise<number> {
  const [{ resolvePaths }, { checkSandbox }] = await Promise.all([import("../core/config.ts"), import("../tools/dev/sandbox.ts")]);
  const { lines, ok } = await checkSandbox(process.env.PATH, process.env.HOME, resolvePaths(process.env).configDir);
  process.stdout.write(`${lines.join("\n")}\n`);
  return ok ? 0 : 1;
}

export async function runAgent(flags: AgentFlags): Promise<number> {
  const { log, setLogScope } = await import("../core/log.ts");
  setLogScope("tendril agent");
  let setup;
  try {
    setup = await agentSetup(flags);
  } catch (err) {
    if (!isSetupError(err)) throw err;
    process.stderr.write(`tendril agent: ${err.message}\n`);
    return 2;
  }
  const { cfg, provider, passEnv, auth } = setup;
  // Caught from here on: a stop during start-up, or a second one during shutdown, still takes the exit path.
  // A client started from a terminal shares its process group with us, so its Ctrl-C reaches us too:
  // the first one cancels the running turns (each answers `cancelled`) and we keep serving; a second
  // within INTERRUPT_REPEAT_S, or one while idle, exits 130. SIGHUP (the terminal closed) is a SIGTERM.
  let agent: OpenAgent | undefined;
  const absorb = () => {
    if (!agent || agent.cancelAll() === 0) return false;
    log.warn("interrupted: running turns cancelled; interrupt again to stop the agent");
    return true;
  };
  const signals = watchStopSignals({ interrupt: { absorb, repeatMs: cfg.limits.INTERRUPT_REPEAT_S * 1000 } });
  const [{ openAgent }, { stdinChunks, stdoutSink }] = await Promise.all([import("./agent-runtime.ts"), import("./stdio.ts")]);
  process.on("unhandledRejection", (reason) => log.error("unhandled rejection (continuing)", { error: reason }));
  let brokenStdout: (why: string) => void = () => {};
  const broken = new Promise<string>((resolve) => (brokenStdout = resolve));
  const sink = stdoutSink((err) => brokenStdout(`stdout: ${err.message}`));
  const running = await openAgent(cfg, provider, { input: stdinChunks(), sink }, { passEnv, auth });
  agent = running;
  process.on("uncaughtException", (err) =>
    void dieOfUncaught(err, {
      logError: (m, f) => log.error(m, f),
      killAllGroups: running.killAllGroups,
      flush: () => running.flush(),
      exit: (code) => process.exit(code),
    }),
  );

  // A stop from outside the protocol: a signal (its exit code) or a stdout the client closed (1).
  const stop = Promise.race([
    signals.stopped.then((sig): { why: string; code: number } => ({ why: sig, code: signalExitCode(sig) })),
    broken.then((why) => ({ why, code: 1 })),
  ]);
  const end = await Promise.race([running.ended, stop.then((s) => ({ reason: "signal" as const, ...s }))]);
  if (end.reason === "oversize") log.error("input line over MAX_LINE_BYTES; closing the connection", { bytes: end.bytes, limit: cfg.limits.MAX_LINE_BYTES });
  log.info("shutting down", { reason: end.reason, ...(end.reason === "signal" ? { why: end.why } : {}) });
  const code = end.reason === "signal" ? end.code : end.reason === "eof" ? 0 : 1;
  // Bounded cleanup: a wedged server must not keep the agent alive (SPEC: exit within 5 s of an over-long line).
  const deadline = setTimeout(() => {
    running.killAllGroups();
    process.exit(code);
  }, cfg.limits.SHUTDOWN_DEADLINE_S * 1000);
  await running.close(end.reason === "eof");
  clearTimeout(deadline);
  return code;
}
