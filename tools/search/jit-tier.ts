// Owns every JavaScriptCore tier pin: the list of the shims' functions that never reach the top tier (FTL)
// and `pinHotPaths()`, which the rg and tree shims' main threads and each rg worker call once at start (a pin
// holds in its own thread only; no other mode runs this code). Never pins a shared builtin: a pin is
// process-wide. Under another runtime (`deno run main.ts`) there is no such control and this does nothing.
import { FileReader } from "./file-bytes.ts";
import { RuleSet, ruleVerdict } from "./ignore-rules.ts";
import { decode, FileSearch } from "./rg-file.ts";
import { BatchSearcher, packFiles, unpackFiles } from "./rg-parallel.ts";
import { Printer } from "./rg-print.ts";
import { Subjects } from "./rg-run.ts";
import { countMatchedLines, matchedLines, plainLines } from "./rg-search.ts";
import { ShimOutput } from "./shim-output.ts";
import { FileWalk, keep, kindOf, readDir } from "./walk.ts";

type Pinned = (...args: never[]) => unknown;

/**
 * The pinned functions, by how often they run. A shim's run is short, and on a machine with few cores the
 * top tier's compiles (tens of milliseconds each for the walk's) compete with the search for the same cores
 * and cost more than the faster code saves; the tier below (DFG) still optimises them.
 * Worth, measured by leaving pins out of a build (the shims benchmark's 20,000-file rows, interleaved runs):
 * see each group. node:fs's readdirSync/openSync/readSync/closeSync were pinned once and showed no gain
 * beyond noise (15 runs a row), which is why no builtin is here.
 */
export const HOT_PATHS = {
  /** Asked about every walked entry (rg and tree): the deepest ignore rule that speaks. Alone ×1.14–1.18
   *  on the literal and regex rows. */
  ignoreRules: [RuleSet.prototype.verdict, RuleSet.prototype["own"], RuleSet.prototype["dirIgnored"], ruleVerdict],
  /** Once per directory read (`readDir`) or entry walked (rg and tree; the two `next`s are rg's). */
  walk: [readDir, kindOf, keep, FileWalk.prototype.next, Subjects.prototype.next],
  /** Once per file read (rg's whole files, tree's line counts) and searched (rg, every thread). */
  file: [
    FileReader.prototype.read, FileReader.prototype.countLines,
    FileSearch.prototype.file, FileSearch.prototype.bytes, FileSearch.prototype["cannotMatch"], decode,
    matchedLines, countMatchedLines, plainLines,
  ],
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
