// Owns the `rg` shim's built-in search as a process: ripgrep's arguments and config file, standard input
// when ripgrep would read it, the output cap from the limits, exit codes. Does not search (tools/search/).
// The process (environment, cwd, stdin, descriptors 1 and 2) is a parameter: tests run it in memory.
import { fstatSync, readFileSync } from "node:fs";
import { loadLimits } from "../../core/limits.ts";
import { pinHotPaths } from "../../tools/search/jit-tier.ts";
import { configArgs, parseRgArgs, rgUsage } from "../../tools/search/rg-args.ts";
import { runRg } from "../../tools/search/rg-run.ts";
import { ShimOutput } from "../../tools/search/shim-output.ts";
import { readAll, writeAll } from "../process/stdio.ts";

const HINT = "narrow the search with -g/-t or a path";

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

/** What the built-in search reads of its process and where it writes. */
export interface RgProcess {
  env: Record<string, string | undefined>;
  cwd: string;
  /** Standard input's bytes (at most `max` and one more) when it is a pipe, file or socket; else undefined. */
  stdin(max: number): Buffer | undefined;
  /** Writes all of `text` to descriptor 1 or 2; false when it is closed. */
  write(fd: 1 | 2, text: string): boolean;
}

function thisProcess(): RgProcess {
  return { env: process.env, cwd: process.cwd(), stdin: (max) => (stdinIsReadable() ? readAll(0, max) : undefined), write: writeAll };
}

export async function runBuiltinRg(args: string[], proc: RgProcess = thisProcess()): Promise<number> {
  pinHotPaths();
  const config = readConfig(proc.env.RIPGREP_CONFIG_PATH, args);
  const parsed = parseRgArgs([...configArgs(config), ...args]);
  if (!parsed.ok) {
    proc.write(2, parsed.message + "\n");
    return 2;
  }
  const o = parsed.options;
  if (o.help || o.version) {
    proc.write(1, o.version ? "rg (tendril built-in search)\n" : rgUsage());
    return 0;
  }
  let limits;
  try {
    limits = loadLimits(proc.env);
  } catch (err) {
    proc.write(2, `rg: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const maxFileBytes = limits.RG_MAX_FILE_BYTES;
  const wantsStdin = o.patternFiles.includes("-") || (o.paths.length === 0 && o.mode !== "files" && o.mode !== "type-list");
  const stdin = wantsStdin ? proc.stdin(maxFileBytes) : undefined;
  // Written straight to the descriptors: starting process.stdout's stream costs more (about 12 ms) than
  // the search of a small tree. A closed pipe (`rg x | head -1`) ends output quietly.
  let broken = false;
  const emit = (chunk: string) => {
    if (!broken) broken = !proc.write(1, chunk);
  };
  const out = new ShimOutput(emit, { maxBytes: limits.SHIM_OUTPUT_BYTES, maxLines: limits.SHIM_OUTPUT_LINES }, "rg", HINT);
  const warn = (line: string) => void proc.write(2, line + "\n");
  const parallel = { minFiles: limits.RG_PARALLEL_MIN_FILES, maxWorkers: limits.RG_MAX_WORKERS, batchFiles: limits.RG_BATCH_FILES, workerQueue: limits.RG_WORKER_QUEUE };
  let code: number;
  try {
    code = await runRg(o, { cwd: proc.cwd, stdin, out, warn, maxFileBytes, parallel });
  } catch (err) {
    warn(err instanceof Error ? err.message : String(err));
    code = 2;
  }
  out.finish();
  return code;
}
