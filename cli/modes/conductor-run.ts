// Owns the `tendril conductor agent|proxy` mode: argv, environment, stdio and signals → one chain run
// (core/conductor/runner.ts), and Tendril's own components run in process (`tendril:NAME`). Usage
// errors, including a component that cannot start, exit 2 before anything runs. Routing, processes and
// the trace live in core/conductor.
import { ComponentError, type InProcessComponent, parseComponents } from "../../core/conductor/components.ts";
import { runChain } from "../../core/conductor/runner.ts";
import { openTrace } from "../../core/conductor/trace.ts";
import { LimitError, loadLimits } from "../../core/limits.ts";
import { isLogLevel, setLogLevel, setLogScope } from "../../core/log.ts";
import { setKillLimits } from "../../core/process-group.ts";
import { processEnv } from "../process/environment.ts";
import { installExitPolicy } from "../process/fatal.ts";
import { selfCommand } from "../process/self.ts";
import { stdinChunks, stdoutSink } from "../process/stdio.ts";
import { releaseOnStop, signalExitCode, watchStopSignals } from "../process/stop-signals.ts";

export interface ChainFlags {
  trace?: string;
  log?: string;
}

/**
 * Tendril's own components, run inside the conductor (`tendril:NAME`): the same code as their spawned
 * form on in-memory pipes. Each loads its chunk only when a chain names it.
 */
const IN_PROCESS: Record<string, InProcessComponent> = {
  "crate-sources": async (io, ctx) => {
    const [{ crateFetchers }, { runCrateSources }] = await Promise.all([import("./crate-fetch-run.ts"), import("./crate-fetch-proxy.ts")]);
    const fetchers = await crateFetchers({});
    const end = await Promise.race([await runCrateSources(io, fetchers.make, fetchers.limits), new Promise<undefined>((r) => ctx.signal.addEventListener("abort", () => r(undefined)))]);
    if (end === undefined || end.reason === "eof") return 0;
    ctx.stderrLine(`the conductor connection ended: ${end.reason}`);
    return 1;
  },
};

function usage(message: string): number {
  process.stderr.write(`tendril conductor: ${message}\n`);
  return 2;
}

export async function runChainMode(mode: "agent" | "proxy", texts: string[], flags: ChainFlags): Promise<number> {
  setLogScope(`tendril conductor ${mode}`);
  installExitPolicy();
  const env = processEnv();
  const level = flags.log ?? env.TENDRIL_LOG;
  if (level !== undefined) {
    if (!isLogLevel(level)) return usage(`--log must be error, warn, info or debug, got ${JSON.stringify(level)}`);
    setLogLevel(level);
  }
  const stray = texts.find((t) => t.startsWith("-"));
  if (stray) return usage(`${JSON.stringify(stray)} looks like an option: options come before the component strings`);
  let limits;
  let specs;
  try {
    limits = loadLimits(env);
    specs = parseComponents(texts, env, process.cwd(), Object.keys(IN_PROCESS));
  } catch (err) {
    if (err instanceof LimitError || err instanceof ComponentError) return usage(err.message);
    throw err;
  }
  setKillLimits(limits);
  let trace;
  if (flags.trace !== undefined) {
    try {
      trace = await openTrace(flags.trace, specs.map((s) => s.name));
    } catch (err) {
      return usage(`--trace ${flags.trace}: ${(err as Error).message}`);
    }
  }
  // As the agent does: the first Ctrl-C cancels the running turns and the chain serves on; a second
  // within INTERRUPT_REPEAT_S, or one while idle, stops it. SIGHUP (the terminal closed) is a SIGTERM.
  let cancelTurns: (() => number) | undefined;
  const signals = watchStopSignals({ interrupt: { absorb: () => (cancelTurns?.() ?? 0) > 0, repeatMs: limits.INTERRUPT_REPEAT_S * 1000 } });
  const code = await runChain({
    mode,
    specs,
    // a gone client shows up as stdin EOF; a failed write only stops further writes
    client: { input: stdinChunks(), sink: stdoutSink() },
    env,
    limits,
    stderrLine: (line) => void process.stderr.write(line + "\n"),
    trace: trace ? (hop, dir, message) => trace.record(hop, dir, message) : undefined,
    stop: signals.stopped.then((signal) => ({ signal, code: signalExitCode(signal) })),
    releaseOnStop,
    onInterrupt: (cancel) => void (cancelTurns = cancel),
    self: selfCommand(),
    inProcess: IN_PROCESS,
  });
  await trace?.close();
  return code;
}

