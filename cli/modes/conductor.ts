// Owns `tendril conductor` on the command line: `agent` and `proxy` (a chain: conductor-run.ts),
// `mcp-bridge` (conductor-bridge.ts) and `trace FILE` (a sequence diagram: conductor-trace.ts; --html and
// --serve: trace-view.ts), their flags and help. Each sub-mode loads its own module when it runs.
import type { Command } from "commander";
import type { ExitBox } from "../process/exit-box.ts";
import type { TraceFlags } from "./conductor-trace.ts";
import type { ChainFlags } from "./conductor-run.ts";

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
        exit.code = await (await import("./conductor-run.ts")).runChainMode(mode, components, flags);
      });
  }
  conductor
    .command("mcp-bridge")
    .description("(started by the conductor) an MCP stdio server relaying to a proxy's MCP-over-ACP server")
    .requiredOption("--socket <PATH>", "the conductor's bridge socket")
    .requiredOption("--server <ID>", "the declared server's id")
    .action(async (flags: { socket: string; server: string }) => {
      exit.code = await (await import("./conductor-bridge.ts")).runMcpBridge(flags.socket, flags.server);
    });
  conductor
    .command("trace")
    .description("print a --trace file as a sequence diagram, or show it in a browser (--html, --serve)")
    .argument("<FILE>", "a trace written by --trace")
    .option("--session <ID>", "only messages of this session")
    .option("--method <GLOB>", "only messages whose method matches GLOB (e.g. 'session/*')")
    .option("--no-color", "no colour even on a terminal")
    .option("--html <OUT>", "write one self-contained HTML page (lanes, arrows, a click shows the JSON)")
    .option("--serve", "serve a page on 127.0.0.1 that follows the growing trace live; prints its URL")
    .option("--port <N>", "the --serve port (default 0: any free port)")
    .action(async (file: string, flags: TraceFlags) => {
      const view = flags.html !== undefined || flags.serve === true || flags.port !== undefined;
      exit.code = view ? await (await import("./trace-view.ts")).runTraceView(file, flags) : await (await import("./conductor-trace.ts")).runTracePrint(file, flags);
    });
}
