// Owns `tendril conductor`: `agent` and `proxy` (argv, environment, stdio and signals → one chain run),
// and `trace FILE` (a trace file → a sequence diagram on stdout). Usage errors, including a component
// that cannot start, exit 2 before anything runs. Routing, processes and the trace live in core/conductor.
import type { Command } from "commander";
import type { ExitBox } from "./exit-box.ts";
import type { InProcessComponent } from "../core/conductor/components.ts";

interface ChainFlags {
  trace?: string;
  log?: string;
}

interface TraceFlags {
  session?: string;
  method?: string;
  color?: boolean;
}

const CHAIN_HELP = `
Each component is one argument, shell-split; leading NAME=value words set its environment. Options
come before the component strings. tendril:crate-sources runs the crate-sources proxy (crate-fetch
--proxy) inside the conductor, with no process of its own. Proxies get proxy/initialize (or, if they answer -32601,
_proxy/initialize, then the sacp form: initialize with _meta.proxy = true); the agent gets initialize.
stdout carries only ACP messages; component stderr is copied to stderr as [name] line.

Exit: 0 when the client closes stdin; 1 when a component exits or writes a malformed or over-long line
(the client's pending requests fail with an error naming it and its last stderr lines); 2 usage error;
129/130/143 on SIGHUP/SIGINT/SIGTERM (the first Ctrl-C during a prompt only cancels it). Every exit
kills every component's process group.`;

export function describeConductor(program: Command, exit: ExitBox): void {
  const conductor = program
    .command("conductor")
    .description("run a chain of ACP proxies in front of an agent; the editor sees one agent")
    .enablePositionalOptions();
  for (const mode of ["agent", "proxy"] as const) {
    conductor
      .command(mode)
      .description(
        mode === "agent"
          ? 'run "PROXY CMD"… "AGENT CMD" as one ACP agent on stdio'
          : 'run "PROXY CMD"… as one ACP proxy on stdio (a chain inside a chain)',
      )
      .argument("<COMPONENT...>", mode === "agent" ? "proxy commands, then the agent command" : "proxy commands")
      .option("--trace <FILE>", "write every message of every hop to FILE as JSONL")
      .option("--log <level>", "error | warn | info | debug (TENDRIL_LOG)")
      .passThroughOptions()
      .addHelpText("after", CHAIN_HELP)
      .action(async (components: string[], flags: ChainFlags) => {
        exit.code = await runChainMode(mode, components, flags);
      });
  }
  conductor
    .command("mcp-bridge")
    .description("(started by the conductor) an MCP stdio server relaying to a proxy's MCP-over-ACP server")
    .requiredOption("--socket <PATH>", "the conductor's bridge socket")
    .requiredOption("--server <ID>", "the declared server's id")
    .action(async (flags: { socket: string; server: string }) => {
      exit.code = await runMcpBridge(flags.socket, flags.server);
    });
  conductor
    .command("trace")
    .description("print a --trace file as a sequence diagram")
    .argument("<FILE>", "a trace written by --trace")
    .option("--session <ID>", "only messages of this session")
    .option("--method <GLOB>", "only messages whose method matches GLOB (e.g. 'session/*')")
    .option("--no-color", "no colour even on a terminal")
    .action(async (file: string, flags: TraceFlags) => {
      exit.code = await runTracePrint(file, flags);
    });
}

/**
 * Tendril's own components, run inside the conductor (`tendril:NAME`): the same code as their spawned
 * form on in-memory pipes. Each loads its chunk only when a chain names it.
 */
const IN_PROCESS: Record<string, InProcessComponent> = {
  "crate-sources": async (io, ctx) => {
    const [{ crateFetchers }, { runCrateSources }] = await Promise.all([import("./crate-fetch.ts"), import("./crate-fetch-proxy.ts")]);
    const fetchers = await crateFetchers({});
    const end = await Promise.race([await runCrateSources(io, fetchers.make, fetchers.limits), new Promise<undefined>((r) => ctx.signal.addEventListener("abort", () => r(undefined)))]);
    if (end === undefined || end.reason === "eof") return 0;
    ctx.stderrLine(`the conductor connection ended: ${end.reason}`);
    return 1;
  },
};

function processEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) out[k] = v;
  return out;
}

function usage(message: string): number {
  process.stderr.write(`tendril conductor: ${message}\n`);
  return 2;
}

async function runChainMode(mode: "agent" | "proxy", texts: string[], flags: ChainFlags): Promise<number> {
  const { loadLimits, LimitError } = await import("../core/limits.ts");
  const { setLogLevel, setLogScope, isLogLevel } = await import("../core/log.ts");
  const { parseComponents, ComponentError } = await import("../core/conductor/components.ts");
  const { killAllGroupsNow, setKillGrace } = await import("../core/process-group.ts");
  setLogScope(`tendril conductor ${mode}`);
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
  setKillGrace(limits.KILL_GRACE_MS);
  let trace;
  if (flags.trace !== undefined) {
    const { openTrace } = await import("../core/conductor/trace.ts");
    try {
      trace = await openTrace(flags.trace, specs.map((s) => s.name));
    } catch (err) {
      return usage(`--trace ${flags.trace}: ${(err as Error).message}`);
    }
  }
  const [{ runChain }, { stdinChunks, stdoutSink }, { selfCommand }, { releaseOnStop, signalExitCode, watchStopSignals }] = await Promise.all([
    import("../core/conductor/runner.ts"),
    import("./stdio.ts"),
    import("./self.ts"),
    import("./stop-signals.ts"),
  ]);
  process.on("exit", () => killAllGroupsNow());
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

async function runTracePrint(file: string, flags: TraceFlags): Promise<number> {
  const { traceRecords } = await import("../core/conductor/trace.ts");
  const { TracePrinter } = await import("../core/conductor/trace-print.ts");
  const color = flags.color !== false && process.stdout.isTTY === true && !process.env.NO_COLOR;
  const skipped = { count: 0 };
  try {
    // Two passes: the first finds the hops (the diagram's lanes), the second prints as it reads.
    const hops = new Set<number>();
    const meta = {};
    for await (const r of traceRecords(file, { count: 0 }, meta)) if (typeof r.hop === "number") hops.add(r.hop);
    const printer = new TracePrinter([...hops], { session: flags.session, method: flags.method, color, ...meta });
    const write = (lines: string[]) => lines.length > 0 && process.stdout.write(lines.join("\n") + "\n");
    write([printer.header()]);
    for await (const r of traceRecords(file, skipped)) write(printer.push(r));
    write(printer.end());
  } catch (err) {
    return usage(`cannot read ${file}: ${(err as Error).message}`);
  }
  if (skipped.count > 0) process.stderr.write(`tendril conductor trace: skipped ${skipped.count} lines that are not trace records\n`);
  return 0;
}

/** Relays MCP lines between stdio and the conductor's socket until either side closes. */
async function runMcpBridge(socket: string, server: string): Promise<number> {
  const { runBridgeClient } = await import("../core/conductor/mcp-bridge-client.ts");
  const { loadLimits } = await import("../core/limits.ts");
  let limits;
  try {
    limits = loadLimits(processEnv());
  } catch (err) {
    return bridgeSays((err as Error).message, 2);
  }
  return runBridgeClient(socket, server, {
    input: process.stdin,
    output: process.stdout,
    say: (line) => void bridgeSays(line),
    maxLineBytes: limits.MAX_LINE_BYTES,
    refusalWaitMs: limits.MCP_INIT_TIMEOUT_S * 1000,
  });
}

function bridgeSays(line: string, code = 1): number {
  process.stderr.write(`tendril conductor mcp-bridge: ${line}\n`);
  return code;
}
