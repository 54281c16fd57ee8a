// Owns `tendril crate-fetch --proxy`: the crate-sources research proxy (core/research) on this process's
// stdio as a component of a conductor chain, or on the conductor's in-memory pipes (`tendril:crate-sources`),
// with get_rust_crate_source (tools/crates) for its research sessions, and the exit path: the conductor
// closes stdin (0), a malformed or over-long line (1), a signal (0).
import type { HopIo } from "../../core/conductor/router.ts";
import { Proxy } from "../../core/conductor/proxy.ts";
import type { Limits } from "../../core/limits.ts";
import { log } from "../../core/log.ts";
import { attachCrateResearch } from "../../core/research/research-proxy.ts";
import { chunksOf, type LinkEnd } from "../../core/wire/link.ts";
import { nodeSink } from "../../core/wire/writer.ts";
import { crateSourceInstructions, crateSourceTool } from "../../tools/crates/crate-source-tool.ts";
import type { CrateFetcher } from "../../tools/crates/fetch-crate.ts";
import { watchStopSignals } from "../process/stop-signals.ts";
import { installExitPolicy } from "../process/fatal.ts";

/** `newFetcher(cwd)`: a fresh fetcher resolving default versions against the Cargo.lock above `cwd`. */
export async function serveCrateProxy(newFetcher: (cwd: string) => CrateFetcher, limits: Limits): Promise<number> {
  installExitPolicy();
  process.stdout.on("error", () => {}); // a gone conductor shows up as stdin EOF
  const ended = await runCrateSources({ input: chunksOf(process.stdin), sink: nodeSink(process.stdout) }, newFetcher, limits);
  const signalled = watchStopSignals().stopped;
  const end = await Promise.race([ended, signalled]);
  if (typeof end === "string") {
    log.info("stopping", { why: end });
    return 0;
  }
  if (end.reason === "eof") return 0;
  process.stderr.write(`tendril crate-fetch --proxy: the conductor connection ended: ${end.reason}\n`);
  return 1;
}

/** The crate-sources component on `io` (stdio, or the conductor's in-memory pipes); resolves with how its connection ends. */
export async function runCrateSources(io: HopIo, newFetcher: (cwd: string) => CrateFetcher, limits: Limits): Promise<Promise<LinkEnd>> {
  const proxy = new Proxy(io, { maxLineBytes: limits.MAX_LINE_BYTES });
  attachCrateResearch(proxy, {
    sourceTool: (cwd) => crateSourceTool(() => newFetcher(cwd), limits.MAX_TOOL_RESULT_BYTES),
    sourceInstructions: crateSourceInstructions,
    timeoutMs: limits.RESEARCH_TIMEOUT_S * 1000,
    closeWaitMs: limits.SHUTDOWN_DEADLINE_S * 1000,
    readMaxBytes: limits.MAX_TOOL_RESULT_BYTES,
    readFileMaxBytes: limits.RESEARCH_READ_FILE_BYTES,
    cacheEntries: limits.RESEARCH_CACHE_ENTRIES,
    cacheMs: limits.RESEARCH_CACHE_S * 1000,
    defaultCwd: process.cwd(),
  });
  return proxy.ended;
}
