// Owns the `tree` shim's process: `tree [DIR] [-L N] [-a] [--no-ignore]` → the gitignore-aware tree with
// line counts (tools/tree/tree.ts), capped by the shim output limits. Does not walk or count itself.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { loadLimits } from "../../core/limits.ts";
import { pinHotPaths } from "../../tools/search/jit-tier.ts";
import { availableThreads } from "../../tools/search/rg-parallel.ts";
import { ShimOutput } from "../../tools/search/shim-output.ts";
import { buildTreeParallel, renderTree } from "../../tools/tree/tree.ts";
import { writeAll } from "../process/stdio.ts";

const USAGE = "usage: tree [DIR] [-L N] [-a] [--no-ignore]  (gitignore-aware; line counts per file, totals per directory)";

interface TreeArgs {
  dir: string | undefined;
  depth: number | undefined;
  all: boolean;
  noIgnore: boolean;
}

export function parseTreeArgs(args: string[]): TreeArgs | string {
  const o: TreeArgs = { dir: undefined, depth: undefined, all: false, noIgnore: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-a" || a === "--all") o.all = true;
    else if (a === "--no-ignore") o.noIgnore = true;
    else if (a === "-L" || a.startsWith("-L") || a.startsWith("--level")) {
      const v = a === "-L" || a === "--level" ? args[++i] : a.startsWith("-L") ? a.slice(2) : a.split("=")[1];
      if (!v || !/^\d+$/.test(v) || Number(v) < 1) return `tree: -L expects a level of 1 or more, got ${JSON.stringify(v ?? "")}`;
      o.depth = Number(v);
    } else if (a.startsWith("-") && a !== "-") return `tree: unknown flag ${a}; ${USAGE}`;
    else if (o.dir !== undefined) return `tree: one DIR only, got ${JSON.stringify(o.dir)} and ${JSON.stringify(a)}`;
    else o.dir = a;
  }
  return o;
}

export async function run(args: string[]): Promise<number> {
  pinHotPaths();
  if (args.includes("--help") || args.includes("-h")) {
    writeAll(1, USAGE + "\n");
    return 0;
  }
  const parsed = parseTreeArgs(args);
  if (typeof parsed === "string") {
    writeAll(2, parsed + "\n");
    return 2;
  }
  let limits;
  try {
    limits = loadLimits(process.env);
  } catch (err) {
    writeAll(2, `tree: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const cwd = process.cwd();
  const abs = resolve(cwd, parsed.dir ?? ".");
  try {
    if (!statSync(abs).isDirectory()) throw new Error("not a directory");
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such directory" : (err as Error).message;
    writeAll(2, `tree: ${parsed.dir ?? "."}: ${why}\n`);
    return 1;
  }
  // Written straight to the descriptor, as rg's output is; a closed pipe (`tree | head`) ends it quietly.
  let broken = false;
  const emit = (chunk: string) => {
    if (!broken) broken = !writeAll(1, chunk);
  };
  const cap = { maxBytes: limits.SHIM_OUTPUT_BYTES, maxLines: limits.SHIM_OUTPUT_LINES };
  const out = new ShimOutput(emit, cap, "tree", "use -L N or a subdirectory");
  // Past TREE_PARALLEL_MIN_FILES files, counts are shared with one worker per further processor.
  const parallel = {
    minFiles: limits.TREE_PARALLEL_MIN_FILES, batchFiles: limits.RG_BATCH_FILES, workerQueue: limits.RG_WORKER_QUEUE, preload: limits.TREE_WORKER_PRELOAD,
    workers: async () => Math.min((await availableThreads()) - 1, limits.RG_MAX_WORKERS),
  };
  const tree = await buildTreeParallel(abs, parsed.dir ?? ".", cwd, {
    maxDepth: parsed.depth, all: parsed.all, noIgnore: parsed.noIgnore,
    // `tree /` must answer quickly: the walk stops after TREE_MAX_ENTRIES entries or TREE_TIME_S.
    maxEntries: limits.TREE_MAX_ENTRIES, budgetMs: limits.TREE_TIME_S * 1000, maxShown: cap.maxLines, maxShownBytes: cap.maxBytes,
  }, parallel);
  renderTree(tree, out);
  out.finish();
  return 0;
}
