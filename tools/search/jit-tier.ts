// Owns every JavaScriptCore tier pin: `HOT_PATHS`, the shims' functions kept below the top tier (FTL), whose
// compiles cost a short run on few cores more than the faster code saves, and `pinHotPaths()`, which the rg and
// tree shims' main threads and each rg worker call at start (a pin holds in one thread; no other mode runs
// this code). Never pins a shared builtin: a pin is process-wide. Under another runtime this does nothing.
import { FileReader } from "./file-bytes.ts";
import { RuleSet, ruleVerdict } from "./ignore-rules.ts";
import { decode, FileSearch } from "./rg-file.ts";
import { BatchSearcher, packFiles, unpackFiles } from "./rg-parallel.ts";
import { Printer } from "./rg-print.ts";
import { Subjects } from "./rg-run.ts";
import { countMatchedLines, matchedLines, plainLines } from "./rg-search.ts";
import { ShimOutput } from "./shim-output.ts";
import { FileWalk, keep, kindOf, readDir } from "./walk.ts";
import { TreeWalk } from "../tree/tree.ts";

type Pinned = (...args: never[]) => unknown;

/**
 * The pinned functions, grouped by what they run once per. The top tier's compiles (tens of milliseconds
 * each for the walk's) compete with the search for the same cores; the tier below (DFG) still optimises.
 * Worth, measured by building without a group (the shims benchmark's 20,000-file tree, two passes of 13
 * interleaved runs, medians against all pins; noise ±5–8%): without any pin the searches take ×1.04–1.23,
 * `--files` ×1.04–1.09, `tree` ×0.97–1.03. Each group after `ignoreRules` is alone within noise; those four
 * together were worth ×1.03–1.12 (15 runs a row, before they were listed here). node:fs's readdirSync,
 * openSync, readSync and closeSync were pinned once and gained nothing beyond noise: no builtin is here.
 * Naming them here loads rg's modules in the tree shim and the walk's in each worker: within noise (`tree` of
 * one file 8.73 → 8.85 ms median, 120 interleaved runs; the rg rows unchanged).
 */
export const HOT_PATHS = {
  /** Once per walked entry (rg and tree): the deepest ignore rule that speaks. Alone ×1.06–1.17 (searches). */
  ignoreRules: [RuleSet.prototype.verdict, RuleSet.prototype["own"], RuleSet.prototype["dirIgnored"], ruleVerdict],
  /** Once per directory read (`readDir`) or walked entry (rg and tree; the two `next`s are rg's). */
  walk: [readDir, kindOf, keep, FileWalk.prototype.next, Subjects.prototype.next],
  /** Once per file read (rg's whole files, tree's line counts) and searched (rg, every thread). */
  file: [
    FileReader.prototype.read, FileReader.prototype.countLines,
    FileSearch.prototype.file, FileSearch.prototype.bytes, FileSearch.prototype["cannotMatch"], decode,
    matchedLines, countMatchedLines, plainLines,
  ],
  /** Once per walked entry or counted file (tree): its walk, one entry a step (its top-tier compile alone
   *  took 8–12 ms of a 20,000-file tree's run), the budgets' check, and adding a count to the totals. */
  tree: [TreeWalk.prototype.next, TreeWalk.prototype["stop"], TreeWalk.prototype["settle"]],
  /** Once per batch of files (rg's parallel search): packed here, unpacked and searched in a worker. */
  batch: [packFiles, unpackFiles, BatchSearcher.prototype.run],
  /** Once per printed line (rg's paths and lines, every line of tree and --files through the output cap). */
  line: [Printer.prototype.path, Printer.prototype.shown, Printer.prototype.line, ShimOutput.prototype.line],
} as const satisfies Record<string, readonly Pinned[]>;

type NoFtl = (f: Pinned) => unknown;

const noFTL: NoFtl | undefined = (globalThis as { Bun?: unknown }).Bun
  ? (process.getBuiltinModule("bun:jsc") as { noFTL?: NoFtl } | undefined)?.noFTL
  : undefined;

let pinned = false;

/** Keeps every function of `HOT_PATHS` below the top tier in this thread; later calls do nothing. */
export function pinHotPaths(): void {
  if (pinned || !noFTL) return;
  pinned = true;
  for (const group of Object.values(HOT_PATHS)) for (const f of group) noFTL(f);
}
