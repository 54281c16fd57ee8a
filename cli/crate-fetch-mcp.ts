// Owns `tendril crate-fetch --mcp`: the get_rust_crate_source tool served on MCP stdio through
// core/mcp/server.ts, and the exit path (stdin EOF, SIGTERM/SIGINT/SIGHUP → exit 0).
import type { Limits } from "../core/limits.ts";
import { log } from "../core/log.ts";
import { defineTool, serveMcp } from "../core/mcp/server.ts";
import { crateSourceDescription, crateSourceInput, crateSourceInstructions, crateSourceSpec, describeCheckout } from "../tools/crates/crate-source-tool.ts";
import type { CrateFetcher } from "../tools/crates/fetch-crate.ts";
import { VERSION } from "../core/version.ts";

/** `newFetcher` is called per tool call: a fetcher remembers index answers (and failures) for its lifetime. */
export async function serveCrateMcp(newFetcher: () => CrateFetcher, limits: Limits): Promise<number> {
  const tool = defineTool({
    name: "get_rust_crate_source",
    title: "Rust crate source",
    description: crateSourceDescription,
    inputSchema: crateSourceInput,
    // It only fills a cache outside the workspace, so agents need not ask before using it.
    annotations: { readOnlyHint: true, openWorldHint: true },
    run: async (args, signal) => {
      const found = await newFetcher().fetch(crateSourceSpec(args), signal);
      const { text, files } = await describeCheckout(found, limits.MAX_TOOL_RESULT_BYTES);
      return { text, structured: { ...found, files } };
    },
  });
  process.on("unhandledRejection", (err) => log.error("unhandled rejection", { error: err }));
  const serving = await serveMcp({
    name: "tendril-crates",
    version: VERSION,
    instructions: crateSourceInstructions,
    tools: [tool],
    input: process.stdin,
    output: process.stdout,
    maxLineBytes: limits.MAX_LINE_BYTES,
  });
  const signalled = new Promise<string>((resolve) => {
    for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.once(sig, () => resolve(sig));
  });
  const why = await Promise.race([serving.closed, signalled]);
  log.info("stopping", { why });
  await serving.close();
  return 0;
}
