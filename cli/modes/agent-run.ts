// Owns the `tendril agent` mode: flags and environment → Config and the LLM provider (prompt's in-process
// agent takes the same setup), the agent (agent-runtime.ts) on stdio, process-level safety nets (uncaught
// errors, signals through stop-signals.ts, a closed stdout) and the exit path, which always kills
// every process group the agent started. The agent itself lives in core/acp and core/agent.
import type { AuthHost } from "../../core/acp/auth.ts";
import { passEnvNames } from "../../core/child-env.ts";
import { type Config, loadConfig, resolvePaths } from "../../core/config.ts";
import { credentialsPath, keySource } from "../../core/credentials.ts";
import { createProvider } from "../../core/llm/provider.ts";
import type { LlmProvider } from "../../core/llm/types.ts";
import { log, setLogLevel, setLogScope } from "../../core/log.ts";
import { type OpenAgent, openAgent } from "../compose/agent-runtime.ts";
import { installExitPolicy } from "../process/fatal.ts";
import { readFileOrUndefined } from "../process/optional-file.ts";
import { stdinChunks, stdoutSink } from "../process/stdio.ts";
import { signalExitCode, watchStopSignals } from "../process/stop-signals.ts";
import { selfCommand } from "../process/self.ts";

/** The sandbox engine (node:net, node:os, child_process: ~1.5 ms of a 14 ms start) loads only when a
 *  setting needs it; the default `off` never does. */
const loadSandbox = () => import("../../tools/dev/sandbox.ts");

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

/** Config, provider, pass-through names and authentication for an agent; a problem the user must fix is a ConfigError-like error. */
export async function agentSetup(flags: AgentFlags): Promise<{ cfg: Config; provider: LlmProvider; passEnv: string[]; auth: AuthHost }> {
  const cfg = await loadConfig({ ...flags, cwd: process.cwd() }, process.env, readFileOrUndefined);
  setLogLevel(cfg.logLevel);
  if (cfg.sandbox.hide.length > 0) (await loadSandbox()).checkHidePaths(cfg.sandbox.hide);
  const passEnv = passEnvNames(flags.passEnv, process.env);
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
export async function checkSandboxHere(): Promise<number> {
  const { checkSandbox } = await loadSandbox();
  const { lines, ok } = await checkSandbox(process.env.PATH, process.env.HOME, resolvePaths(process.env).configDir, selfCommand());
  process.stdout.write(`${lines.join("\n")}\n`);
  return ok ? 0 : 1;
}

export async function runAgent(flags: AgentFlags): Promise<number> {
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
  installExitPolicy();
  let brokenStdout: (why: string) => void = () => {};
  const broken = new Promise<string>((resolve) => (brokenStdout = resolve));
  const sink = stdoutSink((err) => brokenStdout(`stdout: ${err.message}`));
  const running = await openAgent(cfg, provider, { input: stdinChunks(), sink }, { passEnv, auth });
  agent = running;
  installExitPolicy({ killAllGroups: running.killAllGroupsNow, flush: () => running.flush() });

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
    running.killAllGroupsNow();
    process.exit(code);
  }, cfg.limits.SHUTDOWN_DEADLINE_S * 1000);
  await running.close(end.reason === "eof");
  clearTimeout(deadline);
  return code;
}
