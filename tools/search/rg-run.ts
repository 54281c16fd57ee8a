// Owns one built-in rg run: which paths are searched and how they print (ripgrep's rules for explicit
// files, directories, stdin and `./`), -f pattern files, --ignore-file, --sort/--sortr, --stats and the
// exit code (0 match, 1 none, 2 error). Does not parse arguments (rg-args.ts), search a file (rg-file.ts)
// nor own the process (cli/modes/rg.ts).
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { loadIgnoreFile } from "./ignore-rules.ts";
import { caseless, globError, globVerdict } from "./rg-globs.ts";
import type { RgOptions } from "./rg-flags.ts";
import { errorText } from "./file-bytes.ts";
import { FileSearch, type SearchStats } from "./rg-file.ts";
import { JsonPrinter } from "./rg-json.ts";
import { availableThreads, parallelFits, searchParallel, type FileRef, type ParallelJob } from "./rg-parallel.ts";
import { Printer, printOptionsFor } from "./rg-print.ts";
import { compilePatterns, type CompiledPattern } from "./rg-regex.ts";
import type { ShimOutput } from "./shim-output.ts";
import { FileWalk, rootHandle, type WalkOptions } from "./walk.ts";

export interface RgEnv {
  readonly cwd: string;
  /** Standard input's bytes when it is a pipe or file and no path was given (ripgrep then searches it). */
  readonly stdin: Buffer | undefined;
  readonly out: ShimOutput;
  readonly warn: (line: string) => void;
  /** Files larger than this are skipped with a message. */
  readonly maxFileBytes: number;
  /**
   * A walk of more than `minFiles` files is searched on this thread and up to `maxWorkers` worker threads,
   * `batchFiles` at a time, each worker holding `workerQueue` batches.
   */
  readonly parallel?: { readonly minFiles: number; readonly maxWorkers: number; readonly batchFiles: number; readonly workerQueue: number };
}


const NOTHING_SEARCHED =
  "No files were searched, which means ripgrep probably applied a filter you didn't expect.\n" +
  "Running with --debug will show why files are being skipped.";

/** Patterns from -f files, one a line (`-` reads standard input), or why one could not be read. */
function patternsFrom(o: RgOptions, env: RgEnv): string[] | string {
  const out = [...o.patterns];
  for (const f of o.patternFiles) {
    let text: string;
    try {
      text = f === "-" ? (env.stdin ?? Buffer.alloc(0)).toString("utf8") : readFileSync(resolve(env.cwd, f), "utf8");
    } catch (err) {
      return `${f}: ${errorText(err)}`;
    }
    if (text.endsWith("\n")) text = text.slice(0, -1);
    if (text !== "") out.push(...text.split("\n").map((l) => l.replace(/\r$/, "")));
  }
  return out;
}

interface Subject {
  readonly abs: string;
  readonly display: string;
  /** Named on the command line (absent: found by walking). */
  readonly explicit?: boolean;
  stdin?: boolean;
  /** Why it cannot be searched: printed after its path. */
  error?: string;
  /** A whole message instead (-L's broken links and loops). */
  message?: string;
}

/** Subjects one at a time: `next()` gives undefined at the end. */
interface SubjectSource {
  next(): Subject | undefined;
}

/** Every file to search, in ripgrep's order, one per `next()`; collected first only when a sort needs them all. */
export class Subjects implements SubjectSource {
  private i = 0;
  private walking: FileWalk | undefined;

  constructor(
    private readonly env: RgEnv,
    private readonly walk: WalkOptions,
    private readonly paths: readonly string[],
    private readonly stop: () => boolean,
  ) {}

  next(): Subject | undefined {
    for (;;) {
      if (this.walking) {
        const e = this.walking.next();
        // The walk's own entry serves (no copy per file); only its errors need the subject's fields.
        if (e) return e.message === undefined ? e : { abs: e.abs, display: e.display, error: e.message, message: e.message };
        this.walking = undefined;
      }
      if (this.i >= this.paths.length || this.stop()) return undefined;
      const p = this.paths[this.i++]!;
      const abs = resolve(this.env.cwd, p);
      const kind = p === "-" ? "stdin" : statOf(abs);
      if (kind === "stdin") return { abs, display: "<stdin>", explicit: true, stdin: true };
      if (kind === "file") return { abs, display: p, explicit: true };
      if (kind !== "dir") return { abs, display: p, explicit: true, error: kind };
      this.walking = new FileWalk(rootHandle(abs, p, this.env.cwd, this.walk), this.walk, this.stop);
    }
  }
}

/** The subjects of an array, in its order. */
function arraySource(all: readonly Subject[]): SubjectSource {
  let i = 0;
  return { next: () => all[i++] };
}

function drain(source: SubjectSource): Subject[] {
  const all: Subject[] = [];
  for (let s = source.next(); s; s = source.next()) all.push(s);
  return all;
}

function sorted(all: Subject[], o: RgOptions): Subject[] {
  const key = (s: Subject): number | string => {
    if (o.sort === "path") return s.display;
    try {
      const st = statSync(s.abs);
      return (o.sort === "modified" ? st.mtimeMs : o.sort === "accessed" ? st.atimeMs : st.birthtimeMs) || 0;
    } catch {
      return 0;
    }
  };
  const keyed = all.map((s) => [key(s), s] as const);
  keyed.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0) * (o.sortReverse ? -1 : 1));
  return keyed.map(([, s]) => s);
}

/** The compiled patterns (-e, positional, -f files), or the message that says why they cannot be. */
function compileFor(o: RgOptions, env: RgEnv): CompiledPattern | string {
  const patterns = patternsFrom(o, env);
  if (typeof patterns === "string") return patterns;
  return compilePatterns({ ...o, patterns, multilineDotall: o.multiline && o.multilineDotall });
}

function walkOptionsFor(o: RgOptions, env: RgEnv, types: WalkOptions["types"]): WalkOptions {
  const loaded = o.noIgnoreFiles ? [] : o.ignoreFiles.map((f) => ({ f, ...loadIgnoreFile(f, resolve(env.cwd, f)) }));
  for (const { f, why } of loaded) if (why !== undefined && !o.noMessages) env.warn(`${f}: ${why}`);
  const extra = loaded.map((l) => l.verdict);
  const globs = o.globs.map((g, i) => (o.globCaseInsensitive || o.caselessGlobs.has(i) ? caseless(g) : g));
  return {
    hidden: o.hidden, noIgnore: o.noIgnore, maxDepth: o.maxDepth, override: globVerdict(globs), types,
    explicitIgnores: extra.length > 0 ? extra : undefined,
    sources: { custom: true, dot: !o.noIgnoreDot, vcs: !o.noIgnoreVcs, exclude: !o.noIgnoreExclude, parent: !o.noIgnoreParent, requireGit: o.requireGit },
    follow: o.follow,
  };
}

/** A path that could not be searched: an error, said unless --no-messages. */
function failed(run: FileSearch, o: RgOptions, env: RgEnv, sub: Subject): void {
  run.errored = true;
  if (!o.noMessages) env.warn(sub.message ?? `${sub.display}: ${sub.error}`);
}

/** Searches the subjects on this thread; true when there was at least one. */
function searchInline(list: SubjectSource, run: FileSearch, o: RgOptions, env: RgEnv): boolean {
  let searched = false;
  for (let sub = list.next(); sub; sub = list.next()) {
    searched = true;
    if (run.done) break;
    if (sub.stdin) run.bytes(env.stdin ?? Buffer.alloc(0), sub.display, true);
    else if (sub.error === undefined) run.file(sub.abs, sub.display, sub.explicit === true);
    else failed(run, o, env, sub);
  }
  return searched;
}

/** The subjects of an array, then those of a source. */
function followedBy(first: readonly Subject[], rest: SubjectSource): SubjectSource {
  let i = 0;
  return { next: () => (i < first.length ? first[i++] : rest.next()) };
}

/**
 * Searches the subjects on this thread when the walk finds fewer than `minFiles`, or when `workers()`
 * (asked only then) allows none; else all of them in batches shared with worker threads (see
 * rg-parallel.ts), their outcome folded into `run`. The workers start as soon as the walk has passed
 * `minFiles`, so they start up while this thread searches the first batches.
 */
async function searchLarge(
  list: SubjectSource, run: FileSearch, o: RgOptions, env: RgEnv,
  job: Omit<ParallelJob, "nextBatch" | "o" | "out" | "warn" | "workers">, workers: () => Promise<number>,
): Promise<boolean> {
  const { minFiles, batchFiles } = env.parallel!;
  const first: Subject[] = [];
  for (let sub = list.next(); sub; sub = list.next()) {
    first.push(sub);
    if (first.length >= minFiles) break;
  }
  if (first.length < minFiles || run.done) return searchInline(arraySource(first), run, o, env); // a small walk: no worker is worth starting
  const count = await workers();
  if (count < 1) return searchInline(followedBy(first, list), run, o, env);
  const refs = (subs: readonly Subject[]): FileRef[] => {
    const files: FileRef[] = [];
    for (const sub of subs) {
      if (sub.error === undefined) files.push([sub.abs, sub.display, sub.explicit === true]);
      else failed(run, o, env, sub);
    }
    return files;
  };
  const batch = (): FileRef[] | undefined => {
    const subs: Subject[] = [];
    while (subs.length < batchFiles && !run.done) {
      const sub = list.next();
      if (!sub) break;
      subs.push(sub);
    }
    return subs.length > 0 ? refs(subs) : undefined;
  };
  const more = batch();
  if (!more) return searchInline(arraySource(first), run, o, env);
  const pending = [...refs(first), ...more];
  let at = 0;
  const nextBatch = (): FileRef[] | undefined => {
    if (at >= pending.length) return batch();
    const files = pending.slice(at, at + batchFiles);
    at += files.length;
    return files;
  };
  const r = await searchParallel({ ...job, workers: count, o, nextBatch, out: env.out, warn: env.warn });
  run.matched ||= r.matched;
  run.errored ||= r.errored;
  return true;
}

/** Runs the built-in rg; returns its exit code. Messages for the user go to `env.warn`. */
export async function runRg(o: RgOptions, env: RgEnv): Promise<number> {
  const started = performance.now();
  // The file types' table loads only for a run that uses it (-t, -T, --type-add/--type-clear, --type-list).
  const usesTypes = o.types.length > 0 || o.typesNot.length > 0 || o.typeChanges.length > 0 || o.mode === "type-list";
  const fileTypes = usesTypes ? await import("./rg-types.ts") : undefined;
  const table = fileTypes?.typeTable(o.typeChanges);
  if (typeof table === "string") return fail(env, table);
  if (fileTypes && o.mode === "type-list") {
    for (const line of fileTypes.typeList(table)) env.out.line(line);
    return 0;
  }
  for (const g of o.globs) {
    const bad = globError(g);
    if (bad) return fail(env, bad);
  }
  const pat = o.mode === "files" ? undefined : compileFor(o, env);
  if (typeof pat === "string") return fail(env, pat);
  const types = fileTypes ? await fileTypes.typeMatcher(o.types, o.typesNot, table) : { ok: true as const, verdict: undefined };
  if (!types.ok) return fail(env, types.message);
  const walk = walkOptionsFor(o, env, types.verdict);
  const useStdin = o.paths.length === 0 && env.stdin !== undefined && o.mode !== "files" && !o.patternFiles.includes("-");
  const paths = o.paths.length > 0 ? o.paths : useStdin ? ["-"] : [""];
  const firstKind = paths[0] === "-" ? "stdin" : statOf(resolve(env.cwd, paths[0]!));
  const withFilename = o.withFilename ?? (paths.length > 1 || firstKind === "dir");
  // ripgrep 13 memory-maps files when asked to, or when it is given at most 10 paths that are all files.
  o.mmap ??= o.paths.length > 0 && o.paths.length <= 10 && o.paths.every((p, i) => (i === 0 ? firstKind : p === "-" ? "stdin" : statOf(resolve(env.cwd, p))) === "file");
  const json = o.json ? new JsonPrinter(env.out) : undefined;
  const run = new FileSearch(o, pat, new Printer(env.out, printOptionsFor(o, withFilename)), env.warn, env.maxFileBytes, () => env.out.capped, json);
  let list: SubjectSource = new Subjects(env, walk, paths, () => run.done);
  if (o.sort !== "none" && (o.sort !== "path" || o.sortReverse)) list = arraySource(sorted(drain(list), o));
  const finish = (searched: boolean) => {
    if (!searched && o.paths.length === 0 && !useStdin && o.mode !== "files") {
      run.errored = true; // ripgrep 13: a search of the working directory that found no file at all is an error
      if (!o.noMessages) env.warn(NOTHING_SEARCHED);
    }
    const ms = performance.now() - started;
    if (json) json.summary(ms);
    else if (o.stats && o.mode !== "files") printStats(env.out, run.stats, ms);
    return run.matched && o.quiet ? 0 : run.errored ? 2 : run.matched ? 0 : 1;
  };
  // -j N counts this thread, which walks, prints and searches too. Without -j the processors are counted
  // only once a walk is large enough for workers: loading node:os costs ~0.3 ms of every small search.
  const workersFor = (threads: number) => Math.min(threads - 1, env.parallel?.maxWorkers ?? 0);
  if (env.parallel && pat && parallelFits(o) && !paths.includes("-") && (o.threads === undefined || workersFor(o.threads) >= 1)) {
    const job = { pat, withFilename, maxFileBytes: env.maxFileBytes, workerQueue: env.parallel.workerQueue };
    const workers = async () => workersFor(o.threads ?? (await availableThreads()));
    return finish(await searchLarge(list, run, o, env, job, workers));
  }
  return finish(searchInline(list, run, o, env));
}

/** ripgrep's --stats block, after the results. */
function printStats(out: ShimOutput, st: SearchStats, ms: number): void {
  const secs = (ms / 1000).toFixed(6);
  const printed = out.written;
  for (const line of [
    "", `${st.matches} matches`, `${st.matchedLines} matched lines`, `${st.filesWithMatch} files contained matches`,
    `${st.filesSearched} files searched`, `${printed} bytes printed`, `${st.bytesSearched} bytes searched`,
    `${secs} seconds spent searching`, `${secs} seconds`,
  ]) out.line(line);
}

function statOf(abs: string): "dir" | "file" | string {
  try {
    return statSync(abs).isDirectory() ? "dir" : "file";
  } catch (err) {
    return errorText(err);
  }
}

function fail(env: RgEnv, message: string): number {
  env.warn(message);
  return 2;
}
