// Owns the `tendril crate-fetch` mode: flags and environment → the crate fetcher (tools/crates), results →
// stdout (paths, or JSON), failures → stderr and exit codes, the progress line on a terminal stderr,
// `--mcp` (served by cli/modes/crate-fetch-mcp.ts) and `--proxy` (cli/modes/crate-fetch-proxy.ts), each loaded only
// when asked for. The only place that maps CrateError kinds to exit codes.
import { join } from "node:path";
import { loadConfig } from "../../core/config.ts";
import type { Limits } from "../../core/limits.ts";
import { type LogLevel, setLogLevel, setLogScope } from "../../core/log.ts";
import { VERSION } from "../../core/version.ts";
import { parseCrateSpec } from "../../tools/crates/crate-spec.ts";
import { CrateError, type CrateErrorKind } from "../../tools/crates/errors.ts";
import { CrateFetcher, type CrateProgress, type CrateResult } from "../../tools/crates/fetch-crate.ts";
import { CRATES_IO_INDEX } from "../../tools/crates/index-client.ts";
import { ProgressLine } from "../../tools/crates/progress-line.ts";
import { readFileOrUndefined } from "../process/optional-file.ts";
import { signalExitCode, type StopSignal, watchStopSignals } from "../process/stop-signals.ts";

export interface CrateFetchFlags {
  json?: boolean;
  mcp?: boolean;
  proxy?: boolean;
  config?: string;
  log?: string;
}

export const EXIT_CODES: Record<CrateErrorKind, number> = {
  failed: 1,
  usage: 2,
  "not-found": 3,
  "no-match": 4,
  offline: 5,
  checksum: 6,
  hostile: 7,
};

function usage(message: string): number {
  process.stderr.write(`tendril crate-fetch: ${message}; see 'tendril crate-fetch --help'\n`);
  return 2;
}

interface FetcherFactory {
  /** A fresh fetcher; `cwd` is where the Cargo.lock search starts (default: the process's). */
  make: (cwd?: string) => CrateFetcher;
  limits: Limits;
}

async function fetcherFactory(flags: CrateFetchFlags, onProgress?: (p: CrateProgress) => void): Promise<FetcherFactory> {
  setLogScope("tendril crate-fetch");
  const factory = await crateFetchers(flags, onProgress);
  setLogLevel(factory.logLevel);
  return factory;
}

/** Config and environment → fetchers, without touching the process's logging (the conductor runs the
 *  crate-sources component in-process with this). */
export async function crateFetchers(flags: { config?: string; log?: string }, onProgress?: (p: CrateProgress) => void): Promise<FetcherFactory & { logLevel: LogLevel }> {
  const cfg = await loadConfig({ config: flags.config, log: flags.log }, process.env, readFileOrUndefined);
  const env = process.env;
  const home = env.HOME ?? "";
  const dl = env.TENDRIL_CRATES_DL ? httpUrl("TENDRIL_CRATES_DL", env.TENDRIL_CRATES_DL) : undefined;
  const options = {
    cacheDir: cfg.paths.cacheDir,
    cargoHome: env.CARGO_HOME || (home ? join(home, ".cargo") : undefined),
    cwd: process.cwd(),
    // cargo spells sparse registries `sparse+https://…`; both forms are accepted.
    indexUrl: httpUrl("TENDRIL_CRATES_INDEX", (env.TENDRIL_CRATES_INDEX || CRATES_IO_INDEX).replace(/^sparse\+/, "")),
    ...(dl ? { dl } : {}),
    limits: cfg.limits,
    userAgent: `tendril/${VERSION} (crate-fetch)`,
    ...(onProgress ? { onProgress } : {}),
  };
  return { make: (cwd) => new CrateFetcher({ ...options, cwd: cwd ?? options.cwd }), limits: cfg.limits, logLevel: cfg.logLevel };
}

function httpUrl(variable: string, value: string): string {
  if (!/^https?:\/\//.test(value) || !URL.canParse(value)) throw new Error(`${variable} must be an http(s) URL, got ${JSON.stringify(value)}`);
  return value;
}

export async function runCrateFetch(crates: string[], flags: CrateFetchFlags): Promise<number> {
  const server = flags.mcp ? "--mcp" : flags.proxy ? "--proxy" : undefined;
  if (flags.mcp && flags.proxy) return usage("--mcp and --proxy are two different servers: choose one");
  if (server && (crates.length > 0 || flags.json)) return usage(`${server} takes no crate names and no --json`);
  if (!server && crates.length === 0) return usage("missing crate name (e.g. tendril crate-fetch serde)");
  try {
    for (const c of crates) parseCrateSpec(c);
  } catch (err) {
    if (err instanceof CrateError) return usage(err.message);
    throw err;
  }
  const progress = !server && process.stderr.isTTY ? startProgress() : undefined;
  let fetchers: FetcherFactory;
  try {
    fetchers = await fetcherFactory(flags, progress?.update);
  } catch (err) {
    return usage((err as Error).message);
  }
  if (flags.mcp) {
    const { serveCrateMcp } = await import("./crate-fetch-mcp.ts");
    return serveCrateMcp(() => fetchers.make(), fetchers.limits);
  }
  if (flags.proxy) {
    const { serveCrateProxy } = await import("./crate-fetch-proxy.ts");
    return serveCrateProxy(fetchers.make, fetchers.limits);
  }
  // Ctrl-C, SIGTERM and SIGHUP (a closed terminal) abort the fetches, so locks and temp folders are
  // removed on the way out.
  const stop = new AbortController();
  let signalled: StopSignal | undefined;
  const watch = watchStopSignals();
  void watch.stopped.then((sig) => stop.abort((signalled = sig)));
  const results = await fetchers.make().fetchAll(crates, stop.signal);
  progress?.stop();
  if (signalled) return signalExitCode(signalled);
  return report(crates, results, flags.json === true);
}

function report(crates: string[], results: (CrateResult | CrateError)[], json: boolean): number {
  let code = 0;
  const rows = results.map((r, i) => {
    if (!(r instanceof Error)) return r;
    code ||= EXIT_CODES[r.kind];
    process.stderr.write(`tendril crate-fetch: ${r.message}\n`);
    const name = crates[i]!.split("@")[0]!;
    return { crate_name: name, version: null, checkout_path: null, message: r.message, error: r.kind };
  });
  if (json) process.stdout.write(JSON.stringify(rows.length === 1 ? rows[0] : rows, null, 2) + "\n");
  else for (const r of rows) if (r.checkout_path) process.stdout.write(`${r.checkout_path}\n`);
  return code;
}

/** A redrawn progress line on a terminal stderr, at most ten times a second; erased when done. */
function startProgress(): { update: (p: CrateProgress) => void; stop: () => void } {
  const line = new ProgressLine();
  const draw = () => line.active && process.stderr.write(`\r${line.render().slice(0, (process.stderr.columns || 80) - 1)}\x1b[K`);
  const timer = setInterval(draw, 100);
  timer.unref();
  return {
    update: (p) => line.update(p),
    stop: () => {
      clearInterval(timer);
      if (line.active) process.stderr.write("\r\x1b[K");
    },
  };
}
