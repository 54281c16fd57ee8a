// Owns `tendril crate-fetch`: flags and environment → the crate fetcher (tools/crates), results → stdout
// (paths, or JSON), failures → stderr and exit codes, the progress line on a terminal stderr, `--mcp`
// (served by cli/crate-fetch-mcp.ts) and `--proxy` (cli/crate-fetch-proxy.ts). The only place that maps CrateError kinds to exit codes.
import type { Command } from "commander";
import { join } from "node:path";
import type { CrateErrorKind, CrateError } from "../tools/crates/errors.ts";
import type { Limits } from "../core/limits.ts";
import type { LogLevel } from "../core/log.ts";
import type { CrateFetcher, CrateProgress, CrateResult } from "../tools/crates/fetch-crate.ts";
import type { ExitBox } from "./exit-box.ts";
import { readFileOrUndefined } from "./optional-file.ts";
import { signalExitCode, type StopSignal, watchStopSignals } from "./stop-signals.ts";

interface CrateFetchFlags {
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

export function describeCrateFetch(program: Command, exit: ExitBox): void {
  program
    .command("crate-fetch")
    .description("find or download a Rust crate's published source and print where it is")
    .argument("[CRATE...]", "NAME or NAME@RANGE, e.g. serde, tokio@1, rand@=0.8.5 (several fetch at once)")
    .option("--json", "print {crate_name, version, checkout_path, message} (an array for several crates)")
    .option("--mcp", "serve the get_rust_crate_source tool on MCP stdio instead")
    .option("--proxy", "be the crate-sources ACP proxy (rust_crate_query) in a tendril conductor chain")
    .option("--config <file>", "config file (TENDRIL_CONFIG)")
    .option("--log <level>", "error | warn | info | debug (TENDRIL_LOG)")
    .addHelpText(
      "after",
      "\nRegistry: TENDRIL_CRATES_INDEX (sparse index, default https://index.crates.io/), TENDRIL_CRATES_DL (download template)." +
        "\nExit codes: 0 ok, 1 other failure, 2 usage, 3 no such crate, 4 no matching version, 5 registry unreachable and" +
        "\nnothing cached, 6 checksum mismatch, 7 refused archive, 130/143 interrupted. With several crates, the first failing one's code.",
    )
    .action(async (crates: string[], flags: CrateFetchFlags) => {
      exit.code = await runCrateFetch(crates, flags);
    });
}

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
  const { setLogLevel, setLogScope } = await import("../core/log.ts");
  setLogScope("tendril crate-fetch");
  const factory = await crateFetchers(flags, onProgress);
  setLogLevel(factory.logLevel);
  return factory;
}

/** Config and environment → fetchers, without touching the process's logging (the conductor runs the
 *  crate-sources component in-process with this). */
export async function crateFetchers(flags: { config?: string; log?: string }, onProgress?: (p: CrateProgress) => void): Promise<FetcherFactory & { logLevel: LogLevel }> {
  const { loadConfig } = await import("../core/config.ts");
  const { CrateFetcher } = await import("../tools/crates/fetch-crate.ts");
  const { CRATES_IO_INDEX } = await import("../tools/crates/index-client.ts");
  const { VERSION } = await import("../core/version.ts");
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

async function runCrateFetch(crates: string[], flags: CrateFetchFlags): Promise<number> {
  const server = flags.mcp ? "--mcp" : flags.proxy ? "--proxy" : undefined;
  if (flags.mcp && flags.proxy) return usage("--mcp and --proxy are two different servers: choose one");
  if (server && (crates.length > 0 || flags.json)) return usage(`${server} takes no crate names and no --json`);
  if (!server && crates.length === 0) return usage("missing crate name (e.g. tendril crate-fetch serde)");
  const { CrateError } = await import("../tools/crates/errors.ts");
  const { parseCrateSpec } = await import("../tools/crates/crate-spec.ts");
  try {
    for (const c of crates) parseCrateSpec(c);
  } catch (err) {
    if (err instanceof CrateError) return usage(err.message);
    throw err;
  }
  const progress = !server && process.stderr.isTTY ? await startProgress() : undefined;
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
async function startProgress(): Promise<{ update: (p: CrateProgress) => void; stop: () => void }> {
  const { ProgressLine } = await import("../tools/crates/progress-line.ts");
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
