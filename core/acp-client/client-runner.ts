// Owns one `tendril prompt` run against an ACP agent, as a straight line: start the agent (a process,
// or the built-in agent in this process), hand it to a client session (client-session.ts: the version,
// the session, the prompt, the updates, the outcome), race the conversation against the agent's exit,
// the clock (--timeout) and Ctrl-C and the run's limits, settle, and always leave the agent's process
// group dead. Does not render anything or choose a policy: updates and permission questions go to the
// callbacks in RunPromptOptions.
import { AgentProcess, type AgentEnd } from "./agent-process.ts";
import { ClientSession, type Race, type RunPromptOptions, type RunResult } from "./client-session.ts";

export type { AgentEnd, AgentExit, AgentSpawn } from "./agent-process.ts";
export type { McpStdioServer, PermissionOutcome, RunOutcome, RunPromptOptions, RunResult } from "./client-session.ts";
export type { ResumeWanted } from "./session-open.ts";
export type { ToolCallView } from "./tool-call-table.ts";
export { TurnCounter } from "./run-limits.ts";
export type { PermissionOption, SessionUpdate, StopReason } from "@agentclientprotocol/sdk";

/** Runs one prompt against an agent command and always leaves the agent's process group dead. */
export async function runPrompt(opts: RunPromptOptions): Promise<RunResult> {
  const t0 = performance.now();
  const elapsed = () => Math.round(performance.now() - t0);
  let proc: AgentEnd;
  try {
    proc = opts.agent.start ? opts.agent.start() : new AgentProcess(opts.agent, opts.onStderr);
  } catch (err) {
    return { outcome: { kind: "died", message: (err as Error).message, stderrTail: [] }, toolCalls: [], numTurns: 0, durationMs: elapsed() };
  }
  const session = new ClientSession(proc, opts);
  const stops = stopSignals(opts);
  try {
    const first = await Promise.race<Race>([
      session.conversation.then(
        (response) => ({ kind: "answer", response }),
        (error: unknown) => ({ kind: "failed", error, step: session.step }),
      ),
      proc.exited.then((exit) => ({ kind: "exit", exit })),
      stops.promise,
      session.limitReached,
    ]);
    const outcome = await session.settle(first);
    return session.result(outcome, elapsed());
  } finally {
    stops.dispose();
    // The same deadline tendril agent gives itself to stop its tool servers (SHUTDOWN_DEADLINE_S).
    await proc.shutdown(opts.waits.shutdownMs);
    session.close();
  }
}

/** --timeout's clock and Ctrl-C (the abort signal), as one race entry. */
function stopSignals(opts: RunPromptOptions): { promise: Promise<Race>; dispose: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const promise = new Promise<Race>((resolve) => {
    if (opts.timeoutMs !== undefined) timer = setTimeout(() => resolve({ kind: "timeout" }), opts.timeoutMs);
    if (opts.signal) {
      onAbort = () => resolve({ kind: "interrupted" });
      if (opts.signal.aborted) onAbort();
      else opts.signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  return {
    promise,
    dispose: () => {
      clearTimeout(timer);
      if (onAbort) opts.signal?.removeEventListener("abort", onAbort);
    },
  };
}
