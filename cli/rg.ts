// Owns the `rg` shim's process: run a real ripgrep from PATH when there is one (not this binary), else
// the built-in search with the output cap from the limits. Does not search (tools/search/).
import { accessSync, constants, fstatSync, readFileSync, realpathSync } from "node:fs";
import { delimiter, join } from "node:path";
import { readAll, writeAll } from "./stdio.ts";

const HINT = "narrow the search with -g/-t or a path";

function realpathOr(p: string | undefined): string | undefined {
  if (!p) return undefined;
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/** The first `rg` on PATH that is not this binary (a shim link to it would call us again). */
export function findRealRg(env: Record<string, string | undefined> = process.env): string | undefined {
  const self = new Set([realpathOr(process.execPath), realpathOr(process.argv[1])].filter(Boolean));
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, "rg");
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    const real = realpathOr(candidate);
    if (real && !self.has(real)) return candidate;
  }
  return undefined;
}

async function execReal(path: string, args: string[]): Promise<number> {
  // Loaded only here: the built-in search needs neither (node:os alone costs ~0.3 ms of its start-up).
  const [{ spawn }, { constants: osConstants }] = await Promise.all([import("node:child_process"), import("node:os")]);
  return new Promise((resolvePromise) => {
    // The marker stops a wrapper script that calls this shim again from looping back to it.
    const child = spawn(path, args, { stdio: "inherit", env: { ...process.env, TENDRIL_RG_BUILTIN: "1" } });
    const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
    const handlers = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((s) => [s, forward(s)] as const);
    for (const [s, h] of handlers) process.on(s, h);
    const done = (code: number) => {
      for (const [s, h] of handlers) process.off(s, h);
      resolvePromise(code);
    };
    child.on("error", (err) => {
      process.stderr.write(`rg: could not run ${path}: ${err.message}\n`);
      done(2);
    });
    child.on("exit", (code, signal) => {
      const signo = signal ? osConstants.signals[signal] : 0;
      done(code ?? 128 + (signo ?? 0));
    });
  });
}


/** ripgrep searches standard input when no path is given and it is a pipe, file or socket. */
function stdinIsReadable(): boolean {
  try {
    const st = fstatSync(0);
    return st.isFIFO() || st.isFile() || st.isSocket();
  } catch {
    return false;
  }
}

/** The text of ripgrep's config file (RIPGREP_CONFIG_PATH) unless --no-config; ripgrep ignores a missing one. */
function readConfig(path: string | undefined, args: readonly string[]): string {
  if (!path || args.includes("--no-config")) return "";
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

export async function run(args: string[]): Promise<number> {
  if (process.env.TENDRIL_RG_BUILTIN !== "1") {
    const real = findRealRg();
    if (real) return execReal(real, args);
  }
  const { loadLimits } = await import("../core/limits.ts");
  const { configArgs, parseRgArgs, rgUsage } = await import("../tools/search/rg-args.ts");
  const config = readConfig(process.env.RIPGREP_CONFIG_PATH, args);
  const parsed = parseRgArgs([...configArgs(config), ...args]);
  if (!parsed.ok) {
    writeAll(2, parsed.message + "\n");
    return 2;
  }
  const o = parsed.options;
  if (o.help || o.version) {
    writeAll(1, o.version ? "rg (tendril built-in search)\n" : rgUsage());
    return 0;
  }
  let limits;
  try {
    limits = loadLimits(process.env);
  } catch (err) {
    writeAll(2, `rg: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const { ShimOutput } = await import("../tools/search/shim-output.ts");
  const { runRg } = await import("../tools/search/rg-run.ts");
  const maxFileBytes = limits.RG_MAX_FILE_BYTES;
  const wantsStdin =
    (o.patternFiles.includes("-") || (o.paths.length === 0 && o.mode !== "files" && o.mode !== "type-list")) && stdinIsReadable();
  const stdin = wantsStdin ? readAll(0, maxFileBytes) : undefined;
  // Written straight to the descriptors: starting process.stdout's stream costs more (about 12 ms) than
  // the search of a small tree. A closed pipe (`rg x | head -1`) ends output quietly.
  let broken = false;
  const emit = (chunk: string) => {
    if (!broken) broken = !writeAll(1, chunk);
  };
  const out = new ShimOutput(emit, { maxBytes: limits.SHIM_OUTPUT_BYTES, maxLines: limits.SHIM_OUTPUT_LINES }, "rg", HINT);
  const warn = (line: string) => void writeAll(2, line + "\n");
  const parallel = { minFiles: limits.RG_PARALLEL_MIN_FILES, maxWorkers: limits.RG_MAX_WORKERS, batchFiles: limits.RG_BATCH_FILES, workerQueue: limits.RG_WORKER_QUEUE };
  let code: number;
  try {
    code = await runRg(o, { cwd: process.cwd(), stdin, out, warn, maxFileBytes, parallel });
  } catch (err) {
    warn(err instanceof Error ? err.message : String(err));
    code = 2;
  }
  out.finish();
  return code;
}
