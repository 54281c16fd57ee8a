// Owns the shims' worker threads (rg-worker.ts): batches of walked files taken as the walk finds them,
// shared between this thread and workers, answered in walk order; the built-in rg's parallel search on it
// (printed through the capped output, with the separators ripgrep puts between files) and tree's line
// counts; finding the worker's code inside the compiled binary. Does not walk nor search a file (rg-file.ts).
import { shortReadEnds, type FileReader, type LineCount } from "./file-bytes.ts";
import type { RgOptions } from "./rg-flags.ts";
import { FileSearch } from "./rg-file.ts";
import { Printer, printOptionsFor } from "./rg-print.ts";
import type { CompiledPattern } from "./rg-regex.ts";
import { ShimOutput } from "./shim-output.ts";

export type FileRef = [abs: string, display: string, explicit: boolean];

export interface WorkerInit {
  type: "init";
  /** Answer `{ id: READY }` once started (the pool sends more than `preload` batches only then). */
  announce?: boolean;
  options: RgOptions;
  patterns: string[];
  withFilename: boolean;
  maxFileBytes: number;
}

/** The first message of a worker that counts lines (tree): it stops a count between chunks past `deadline`. */
export interface LineCountInit {
  type: "count-lines";
  /** As `WorkerInit`'s. */
  announce?: boolean;
  /** `epochNow()` after which a file's count stops between chunks (and is marked partial). */
  deadline: number;
}

/** A time comparable between threads (each thread's `performance.now()` starts at its own origin). */
export const epochNow = (): number => performance.timeOrigin + performance.now();

export interface WorkerBatch {
  type: "batch";
  id: number;
  /** The files packed into one string (see `packFiles`): copying one string to a thread is far cheaper. */
  files: string;
}

/** Files as `abs\0display\0flag\0…`: no path holds a NUL. */
export function packFiles(files: readonly FileRef[]): string {
  let out = "";
  for (const [abs, display, explicit] of files) out += `${abs}\0${display}\0${explicit ? "1" : ""}\0`;
  return out;
}

export function unpackFiles(packed: string): FileRef[] {
  const parts = packed.split("\0");
  const files: FileRef[] = [];
  for (let i = 0; i + 2 < parts.length; i += 3) files.push([parts[i]!, parts[i + 1]!, parts[i + 2] === "1"]);
  return files;
}

export interface BatchResult {
  id: number;
  text: string;
  warnings: string[];
  matched: boolean;
  errored: boolean;
}

/** One batch's line counts, in the batch's order: each as `FileReader.countLines` answers. */
export interface LineCounts {
  id: number;
  counts: LineCount[];
}

/** Paths packed as `abs\0abs\0…` (a worker that counts lines needs nothing else). */
export const packPaths = (paths: readonly string[]): string => paths.join("\0");
export const unpackPaths = (packed: string): string[] => packed.split("\0");

/** Counts the lines of each file of a batch the walk found (regular files: a short read ends one). */
export function countBatch(reader: FileReader, id: number, paths: readonly string[], stop: () => boolean): LineCounts {
  const counts: LineCount[] = [];
  for (const p of paths) counts.push(reader.countLines(p, stop, shortReadEnds(p)));
  return { id, counts };
}

/** Searches batches of files, each on a fresh printer whose text is kept for printing in walk order. */
export class BatchSearcher {
  private warnings: string[] = [];
  private readonly search: FileSearch;

  constructor(
    private readonly o: RgOptions,
    pat: CompiledPattern,
    private readonly withFilename: boolean,
    maxFileBytes: number,
  ) {
    const placeholder = new Printer(new ShimOutput(() => {}, { maxBytes: 0, maxLines: 0 }, "rg", ""), printOptionsFor(o, withFilename));
    this.search = new FileSearch(o, pat, placeholder, (w) => this.warnings.push(w), maxFileBytes, () => false);
  }

  run(id: number, files: readonly FileRef[]): BatchResult {
    const parts: string[] = [];
    const out = new ShimOutput((c) => parts.push(c), { maxBytes: Infinity, maxLines: Infinity }, "rg", "");
    const s = this.search;
    s.usePrinter(new Printer(out, printOptionsFor(this.o, this.withFilename)));
    s.matched = s.errored = false;
    this.warnings = [];
    for (const [abs, display, explicit] of files) s.file(abs, display, explicit);
    out.finish();
    return { id, text: parts.join(""), warnings: this.warnings, matched: s.matched, errored: s.errored };
  }
}

export interface ParallelJob {
  readonly o: RgOptions;
  readonly pat: CompiledPattern;
  readonly withFilename: boolean;
  readonly maxFileBytes: number;
  /** The next batch of files in walk order, or undefined once the walk is over. */
  readonly nextBatch: () => FileRef[] | undefined;
  readonly workers: number;
  /** Batches a worker holds at once, so it never idles while this thread is busy. */
  readonly workerQueue: number;
  readonly out: ShimOutput;
  readonly warn: (line: string) => void;
}

/** Which runs may be split across workers: per-file output only, no run-wide state or early stop. */
export function parallelFits(o: RgOptions): boolean {
  const perFileModes = ["lines", "count", "count-matches", "files-with-matches", "files-without-match"];
  return perFileModes.includes(o.mode) && !o.quiet && !o.json && !o.stats && !o.nullAfterPath && !o.passthru && !o.multiline;
}

/**
 * The worker's entry: beside this module when run from source; inside a `bun build --compile` binary it
 * is a second entry point (scripts/build.ts) embedded under the binary's virtual root.
 */
function workerUrl(): string {
  const main = (globalThis as { Bun?: { main: string } }).Bun?.main ?? "";
  if (main.startsWith("/$bunfs/") || main.startsWith("B:/~BUN/")) return `${main.slice(0, main.lastIndexOf("/") + 1)}tools/search/rg-worker.ts`;
  return new URL("./rg-worker.ts", import.meta.url).href;
}

/**
 * The processors this process may use, which worker counts are taken from; node:os loads only when a walk
 * is large enough for workers (~0.3 ms of every small search or tree otherwise).
 */
export async function availableThreads(): Promise<number> {
  return (await import("node:os")).availableParallelism();
}

/** Lets worker replies in (they arrive as events) between two batches this thread handles itself. */
const yieldToEvents = () => new Promise<void>((r) => setImmediate(r));

/** A job shared between this thread and worker threads: batches of `B` taken in order, answered with `R`. */
export interface BatchPool<B, R extends { id: number }> {
  /** The first message each worker gets (see rg-worker.ts). */
  readonly init: WorkerInit | LineCountInit;
  readonly workers: number;
  /** Batches a worker holds at once, so it never idles while this thread is busy. */
  readonly workerQueue: number;
  /**
   * Batches sent to a worker before it has started; the rest wait for its READY (and then for room in its
   * queue). A batch sent early waits for the start-up, and so does this thread if the job ends first.
   */
  readonly preload: number;
  /** The next batch in order, or undefined once there is none (asked no more after that). */
  readonly next: () => B | undefined;
  /** A batch as the one string posted to a worker: copying one string to a thread is far cheaper. */
  readonly pack: (batch: B) => string;
  /** Handles a batch on this thread. */
  readonly local: (id: number, batch: B) => R;
  /** Each answer with its batch, in the order the batches were taken. */
  readonly deliver: (r: R, batch: B) => void;
  /** The error a worker's failure (an uncaught exception in it) ends the job with. */
  readonly failed: (message: string) => Error;
}

/** The id of a worker's first answer, sent once it has taken its init message when asked to `announce`. */
export const READY = -1;

interface Slot {
  readonly w: Worker;
  queued: number;
  /** The worker has started (said READY): batches sent before would wait for its start-up. */
  ready: boolean;
}

/**
 * Runs the pool's batches on this thread and `workers` worker threads until `next()` has no more and every
 * answer is delivered. Each batch goes to a worker with room in its queue (`preload` of them before it has
 * started), else is handled here; a worker that has none when the job ends is stopped, started or not.
 */
export async function runBatches<B, R extends { id: number }>(pool: BatchPool<B, R>): Promise<void> {
  const results = new Map<number, R>();
  const taken = new Map<number, B>();
  let [sent, next, inFlight, ended] = [0, 0, 0, false];
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const flush = () => {
    for (let r = results.get(next); r; r = results.get(next)) {
      const batch = taken.get(next)!;
      results.delete(next);
      taken.delete(next++);
      pool.deliver(r, batch);
    }
  };
  const take = (): B | undefined => {
    if (ended) return undefined;
    const batch = pool.next();
    if (batch === undefined) ended = true;
    else taken.set(sent, batch);
    return batch;
  };
  const workers: Slot[] = [];
  const feed = (slot: Slot) => {
    while (slot.queued < (slot.ready ? pool.workerQueue : pool.preload)) {
      const batch = take();
      if (batch === undefined) return;
      const msg: WorkerBatch = { type: "batch", id: sent++, files: pool.pack(batch) };
      slot.queued++;
      inFlight++;
      slot.w.postMessage(msg);
    }
  };
  for (let i = 0; i < pool.workers; i++) {
    const slot: Slot = { w: new Worker(workerUrl()), queued: 0, ready: false };
    workers.push(slot);
    slot.w.onmessage = (e: MessageEvent) => {
      const r = e.data as R;
      if (r.id === READY) {
        slot.ready = true;
        feed(slot);
        wake?.();
        return;
      }
      slot.queued--;
      inFlight--;
      results.set(r.id, r);
      flush();
      feed(slot);
      wake?.();
    };
    slot.w.onerror = (e: ErrorEvent) => {
      failure = pool.failed(e.message);
      wake?.();
    };
    slot.w.postMessage({ ...pool.init, announce: true });
    feed(slot);
  }
  try {
    for (;;) {
      if (failure) throw failure;
      const batch = take();
      if (batch !== undefined) {
        results.set(sent, pool.local(sent, batch));
        sent++;
        flush();
        await yieldToEvents();
        continue;
      }
      if (inFlight === 0) break;
      await new Promise<void>((r) => (wake = r));
      wake = undefined;
    }
  } finally {
    for (const { w } of workers) w.terminate();
  }
}

/**
 * Searches the walk's batches on this thread and `workers` worker threads; resolves with whether any
 * matched and any failed. Answers print in walk order through the capped output.
 */
export async function searchParallel(job: ParallelJob): Promise<{ matched: boolean; errored: boolean }> {
  const { o, out } = job;
  const local = new BatchSearcher(o, job.pat, job.withFilename, job.maxFileBytes);
  const init: WorkerInit = { type: "init", options: o, patterns: job.pat.patterns, withFilename: job.withFilename, maxFileBytes: job.maxFileBytes };
  let [matched, errored, printedAny] = [false, false, false];
  const deliver = (r: BatchResult) => {
    matched ||= r.matched;
    errored ||= r.errored;
    if (!o.noMessages) for (const line of r.warnings) job.warn(line);
    if (r.text === "" || out.capped) return;
    if (printedAny && o.mode === "lines") separate(job);
    printedAny = true;
    const text = r.text;
    for (let start = 0; start < text.length; ) {
      const end = text.indexOf("\n", start); // the text ends with a newline
      if (!out.line(text.slice(start, end))) break;
      start = end + 1;
    }
  };
  await runBatches<FileRef[], BatchResult>({
    init, workers: job.workers, workerQueue: job.workerQueue, preload: job.workerQueue,
    next: () => (out.capped ? undefined : job.nextBatch()),
    pack: packFiles,
    local: (id, files) => local.run(id, files),
    deliver,
    failed: (message) => new Error(`rg: a search worker failed: ${message}`),
  });
  return { matched, errored };
}

/** What ripgrep prints between two files' lines: a blank line under --heading, else the context separator. */
function separate(job: ParallelJob): void {
  const o = job.o;
  const eol = o.crlf ? "\r\n" : "\n";
  if (o.heading && job.withFilename) job.out.line("", eol);
  else if ((o.before > 0 || o.after > 0) && o.contextSep !== undefined) job.out.line(o.contextSep, eol);
}
