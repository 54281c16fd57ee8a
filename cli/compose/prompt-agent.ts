// Owns `tendril prompt`'s default agent: `tendril agent` run inside the prompt's own process over an
// in-memory pipe, behind the same AgentEnd a spawned agent has. A CI step then costs one process
// start, not two (and no pipes or watchdog hand-shake). Its log lines go through the prompt's output
// like a spawned agent's stderr. Shutting it down is its close sequence; whatever does not finish
// within the grace has its process groups killed. The provider is asked for its models only when
// `--model` (or a `/model` switch) needs the list.
import { AgentStderr } from "../../core/acp-client/agent-process.ts";
import type { AgentEnd, AgentExit } from "../../core/acp-client/client-runner.ts";
import { setLogScope, setLogSink } from "../../core/log.ts";
import { bytePipe } from "../../core/wire/byte-pipe.ts";
import { agentSetup, isSetupError } from "../modes/agent-run.ts";
import { type OpenAgent, openAgent } from "./agent-runtime.ts";

/** The built-in agent's config, provider and key source, read before the run starts: a bad setting
 *  is then the prompt's own usage error (exit 2), not an agent that died during initialize. */
export type InProcessSetup = Awaited<ReturnType<typeof agentSetup>>;

export function prepareInProcessAgent(flags: { sandbox?: string } = {}): Promise<InProcessSetup> {
  return agentSetup(flags.sandbox === undefined ? {} : { sandbox: flags.sandbox });
}

export { isSetupError };

export function startInProcessAgent(stderr: (text: string) => void, prepared: InProcessSetup, flags: { model?: string; persist?: boolean } = {}): AgentEnd {
  const toAgent = bytePipe();
  const fromAgent = bytePipe();
  const tail = new AgentStderr();
  const say = (line: string) => {
    tail.push(`${line}\n`);
    stderr(`${line}\n`);
  };
  let agent: OpenAgent | undefined;
  let settle!: (exit: AgentExit) => void;
  const exited = new Promise<AgentExit>((resolve) => (settle = resolve));
  void (async (): Promise<AgentExit> => {
    // Log lines read as they did from a spawned agent (the prompt itself reports through its output).
    setLogScope("tendril agent");
    setLogSink((line) => say(line.replace(/\n$/, "")));
    try {
      const { cfg, provider, passEnv, auth } = prepared;
      agent = await openAgent(cfg, provider, { input: toAgent.input, sink: fromAgent.sink }, { modelList: flags.model === undefined ? "on-demand" : "eager", passEnv, auth, persist: flags.persist });
    } catch (err) {
      if (!isSetupError(err)) throw err;
      say(`tendril agent: ${err.message}`);
      return { code: 2, signal: null };
    }
    const end = await agent.ended;
    await agent.close(end.reason === "eof");
    return { code: end.reason === "eof" ? 0 : 1, signal: null };
  })()
    .catch((err: unknown) => {
      say(`tendril agent: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      return { code: 1, signal: null };
    })
    .then((exit) => {
      fromAgent.close();
      settle(exit);
    });
  return {
    output: fromAgent.input,
    input: toAgent.sink,
    exited,
    stderrTail: () => tail.lines(),
    async shutdown(graceMs) {
      toAgent.close();
      let timer: Parameters<typeof clearTimeout>[0];
      const done = await Promise.race([exited, new Promise<undefined>((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
      if (done === undefined) agent?.killAllGroupsNow();
    },
  };
}
