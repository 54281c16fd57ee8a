// Owns `tendril crate-fetch --mcp`: the get_rust_crate_source tool served on MCP stdio through
// core/mcp/server.ts, and the exit path (stdin EOF, SIGTERM/SIGINT/SIGHUP → exit 0).
import type { Limits } from "../../core/limits.ts";
import { log } from "../../core/log.ts";
import { serveMcp } from "../../core/mcp/server.ts";
import { crateSourceInstructions, crateSourceTool } from "../../tools/crates/crate-source-tool.ts";
import type { CrateFetcher } from "../../tools/crates/fetch-crate.ts";
import { VERSION } from "../../core/version.ts";
import { watchStopSignals } from "../process/stop-signals.ts";
import { installExitPolicy } from "../process/fatal.ts";

export async function serveCrateMcp(newFetcher: () => CrateFetcher, limits: Limits): Promise<number> {
  const tool = crateSourceTool(newFetcher, limits.MAX_TOOL_RESULT_BYTES);
  installExitPolicy();
  const serving = await serveMcp({
    name: "tendril-crates",
    version: VERSION,
    instructions: crateSourceInstructions,
    tools: [tool],
    input: process.stdin,
    output: process.stdout,
    maxLineBytes: limits.MAX_LINE_BYTES,
  });
  const signalled = watchStopSignals().stopped;
  const why = await Promise.race([serving.closed, signalled]);
  log.info("stopping", { why });
  await serving.close();
  return 0;
}
