// Owns one run of a chain from start to exit code: components start on the client's first message,
// the chain routes until the client leaves (0: components get EOF and SHUTDOWN_DEADLINE_S to finish), a
// stop signal arrives (the caller's code for it), or a component exits or misbehaves (1: the client's
// pending requests fail naming it and its last stderr lines). Every path kills every process group.
import { killAllGroups } from "../process-group.ts";
import { flushWithin } from "../exit-flush.ts";
import type { Limits } from "../limits.ts";
import { log } from "../log.ts";
import { type ComponentSpec, type InProcessComponent, type RunningComponent, startComponent, startInProcess } from "./components.ts";
import { type ByteIo, describeEnd, type LinkEnd } from "../wire/link.ts";
import { Chain, type Hop } from "./router.ts";
import { McpBridge } from "./mcp-bridge.ts";

export interface StopRequest {
  signal: string;
  code: number;
}

export interface RunOptions {
  mode: "agent" | "proxy";
  specs: ComponentSpec[];
  client: ByteIo;
  env: Record<string, string>;
  cwd?: string;
  limits: Limits;
  stderrLine: (line: string) => void;
  trace?: (hop: Hop, dir: "in" | "out", message: unknown) => void;
  /** Resolves when the process is told to stop, with the signal and the exit code it means. */
  stop: Promise<StopRequest>;
  /** Receives the synchronous removal of what the chain made on disk (the bridge's folder), to run
   *  first of all on a stop signal and at process exit. */
  releaseOnStop?: (release: () => void) => void;
  /** Receives what an interrupt calls once the chain runs: cancels the client's running turns, returns how many. */
  onInterrupt?: (cancelTurns: () => number) => void;
  /** How to re-run this binary; with it, agent mode bridges MCP-over-ACP for agents without it. */
  self?: { command: string; args: string[] };
  /** The components that run inside this process (`tendril:NAME` specs), by NAME. */
  inProcess?: Record<string, InProcessComponent>;
}

const EXIT_INFO_WAIT_MS = 200; // a component's stdout usually closes just before its exit is reported
const STDERR_SETTLE_MS = 50; // stderr is another pipe: what a failing component just wrote there may lag
const LAST_STDERR_LINES = 5;

type Outcome =
  | { kind: "client"; end: LinkEnd | { reason: "eof" } }
  | { kind: "component"; index: number; end?: LinkEnd }
  | { kind: "signal"; stop: StopRequest };

export async function runChain(opts: RunOptions): Promise<number> {
  const input = opts.client.input[Symbol.asyncIterator]();
  const first = await Promise.race([input.next(), opts.stop.then((stop) => ({ stop }))]);
  if ("stop" in first) return first.stop.code;
  if (first.done) return 0;
  let running: RunningComponent[] = [];
  try {
    const start = { env: opts.env, cwd: opts.cwd, tailBytes: opts.limits.COMPONENT_STDERR_TAIL_BYTES, stderrLine: opts.stderrLine };
    for (const [i, spec] of opts.specs.entries()) {
      const own = spec.inProcess === undefined ? undefined : opts.inProcess?.[spec.inProcess];
      if (spec.inProcess !== undefined && !own) throw new Error(`component ${i + 1} (${spec.name}): not available in this process`);
      running.push(own ? startInProcess(spec, i, own, start) : startComponent(spec, i, start));
    }
  } catch (err) {
    log.error((err as Error).message);
    for (const c of running) c.stop?.();
    await killAllGroups();
    return 1;
  }
  const bridge = opts.mode === "agent" && opts.self ? await startBridge(opts.self, opts.limits.MAX_LINE_BYTES, opts.limits.MCP_CONNECT_TIMEOUT_S * 1000) : undefined;
  if (bridge) opts.releaseOnStop?.(() => bridge.removeFolder());
  const client = { input: prepend(first.value, input), sink: opts.client.sink };
  const chain = new Chain({
    mode: opts.mode,
    client,
    components: running.map((c) => c.io),
    maxLineBytes: opts.limits.MAX_LINE_BYTES,
    maxQueuedBytes: opts.limits.MAX_HOP_QUEUE_BYTES,
    trace: opts.trace,
    agentEdge: bridge,
    names: opts.specs.map((s) => s.name),
  });
  bridge?.attach(chain.agentSide());
  opts.onInterrupt?.(() => chain.interruptTurns());
  const outcome: Outcome = await Promise.race([
    chain.ended.then((e): Outcome => (e.hop === "client" ? { kind: "client", end: e.end } : { kind: "component", index: e.hop, end: e.end })),
    ...running.map((c) => c.exited.then((): Outcome => ({ kind: "component", index: c.index }))),
    opts.stop.then((stop): Outcome => ({ kind: "signal", stop })),
  ]);
  const code = await report(outcome, chain, running);
  await flushWithin(chain.flushClient());
  if (outcome.kind === "client" && code === 0) {
    // The client left: close every component's stdin and give them the cleanup time an agent
    // expects (sessions saved, tool groups killed) before the ladder kills what is left.
    for (const c of running) c.closeInput();
    await Promise.race([Promise.all(running.map((c) => c.exited)), new Promise((r) => setTimeout(r, opts.limits.SHUTDOWN_DEADLINE_S * 1000))]);
  }
  for (const c of running) c.stop?.();
  await killAllGroups();
  bridge?.close();
  return code;
}

/** The exit code an outcome means; a failing component is named to the client and in the log. */
async function report(outcome: Outcome, chain: Chain, running: RunningComponent[]): Promise<number> {
  if (outcome.kind === "signal") {
    log.info("stopping", { signal: outcome.stop.signal });
    return outcome.stop.code;
  }
  if (outcome.kind === "client") {
    if (outcome.end.reason === "eof") return 0;
    log.error("client input ended the chain", { reason: describeEnd(outcome.end) });
    return 1;
  }
  const failed = running[outcome.index]!;
  const message = await describeFailure(failed, outcome.end);
  log.error(message);
  chain.failPending(message, { component: outcome.index + 1, stderr: failed.stderrTail().slice(-LAST_STDERR_LINES) });
  return 1;
}

/** The MCP-over-ACP bridge; without one (no socket could be made) the chain still runs, unbridged. */
async function startBridge(self: { command: string; args: string[] }, maxLineBytes: number, connectTimeoutMs: number): Promise<McpBridge | undefined> {
  try {
    return await McpBridge.start({ self, maxLineBytes, connectTimeoutMs });
  } catch (err) {
    log.warn("MCP-over-ACP bridge unavailable; acp MCP servers reach the agent as declared", { error: err });
    return undefined;
  }
}

async function* prepend(first: Uint8Array, rest: AsyncIterator<Uint8Array>): AsyncGenerator<Uint8Array> {
  yield first;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}

/** `component 2 (proxy.ts) exited with code 3; last stderr: …` */
async function describeFailure(c: RunningComponent, end: LinkEnd | undefined): Promise<string> {
  const settle = (ms: number) => new Promise<undefined>((r) => setTimeout(r, ms));
  let what: string;
  if (end && end.reason !== "eof") {
    what = describeEnd(end);
    await Promise.race([c.stderrEnded, settle(STDERR_SETTLE_MS)]);
  } else {
    const exit = await Promise.race([c.exited, settle(EXIT_INFO_WAIT_MS)]);
    what = exit === undefined ? "closed its stdout" : exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
    await Promise.race([c.stderrEnded, settle(EXIT_INFO_WAIT_MS)]);
  }
  const tail = c.stderrTail().slice(-LAST_STDERR_LINES);
  const stderr = tail.length > 0 ? `; last stderr: ${tail.join(" | ")}` : "; no stderr output";
  return `component ${c.index + 1} (${c.spec.name}) ${what}${stderr}`;
}
