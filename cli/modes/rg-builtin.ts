// Owns the `rg` shim's built-in search as a process: ripgrep's arguments and config file, standard input
// when ripgrep would read it, the output cap from the limits, exit codes. Does not search (tools/search/).
import { fstatSync, readFileSync } from "node:fs";
import { loadLimits } from "../../core/limits.ts";
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

export async function runBuiltinRg(args: string[]): Promise<number> {
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
