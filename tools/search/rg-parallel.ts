// Owns the built-in rg's parallel search of a large tree: batches of walked files taken as the walk finds
// them, shared between this thread and worker threads (rg-worker.ts), their answers printed in walk order
// through the capped output, the separators ripgrep puts between files, and finding the worker's code
// inside the compiled binary. Does not walk nor search a file (rg-file.ts).
import type { RgOptions } from "./rg-flags.ts";
import { FileSearch } from "./rg-file.ts";
import { Printer, printOptionsFor } from "./rg-print.ts";
import type { CompiledPattern } from "./rg-regex.ts";
import { ShimOutput } from "./shim-output.ts";

export type FileRef = [abs: string, display: string, explicit: boolean];

export interface WorkerInit {
  type: "init";
  options: RgOptions;
  patterns: string[];
  withFilename: boolean;
  maxFileBytes: number;
}

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

/** Lets worker replies in (they arrive as events) between two batches this thread searches itself. */
const yieldToEvents = () => new Promise<void>((r) => setImmediate(r));

/**
 * Searches the walk's batches on this thread and `workers` worker threads; resolves with whether any
 * matched and any failed. Each batch goes to a worker with room in its queue, else is searched here.
 */
export async function searchParallel(job: ParallelJob): Promise<{ matched: boolean; errored: boolean }> {
  const { o, out } = job;
  const local = new BatchSearcher(o, job.pat, job.withFilename, job.maxFileBytes);
  const init: WorkerInit = { type: "init", options: o, patterns: job.pat.patterns, withFilename: job.withFilename, maxFileBytes: job.maxFileBytes };
  const results = new Map<number, BatchResult>();
  let [sent, next, inFlight, matched, errored, printedAny, walked] = [0, 0, 0, false, false, false, false];
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const flush = () => {
    for (let r = results.get(next); r; r = results.get(next)) {
      results.delete(next++);
      matched ||= r.matched;
      errored ||= r.errored;
      if (!o.noMessages) for (const line of r.warnings) job.warn(line);
      if (r.text === "" || out.capped) continue;
      if (printedAny && o.mode === "lines") separate(job);
      printedAny = true;
      const text = r.text;
      for (let start = 0; start < text.length; ) {
        const end = text.indexOf("\n", start); // the text ends with a newline
        if (!out.line(text.slice(start, end))) break;
        start = end + 1;
      }
    }
  };
  const take = (): FileRef[] | undefined => {
    if (walked || out.capped) return undefined;
    const batch = job.nextBatch();
    if (!batch) walked = true;
    return batch;
  };
  const workers: { w: Worker; queued: number }[] = [];
  const feed = (slot: { w: Worker; queued: number }) => {
    while (slot.queued < job.workerQueue) {
      const files = take();
      if (!files) return;
      const batch: WorkerBatch = { type: "batch", id: sent++, files: packFiles(files) };
      slot.queued++;
      inFlight++;
      slot.w.postMessage(batch);
    }
  };
  for (let i = 0; i < job.workers; i++) {
    const slot = { w: new Worker(workerUrl()), queued: 0 };
    workers.push(slot);
    slot.w.onmessage = (e: MessageEvent) => {
      const r = e.data as BatchResult;
      slot.queued--;
      inFlight--;
      results.set(r.id, r);
      flush();
      feed(slot);
      wake?.();
    };
    slot.w.onerror = (e: ErrorEvent) => {
      failure = new Error(`rg: a search worker failed: ${e.message}`);
      wake?.();
    };
    slot.w.postMessage(init);
    feed(slot);
  }
  try {
    for (;;) {
      if (failure) throw failure;
      const files = take();
      if (files) {
        results.set(sent, local.run(sent, files));
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
  return { matched, errored };
}

/** What ripgrep prints between two files' lines: a blank line under --heading, else the context separator. */
function separate(job: ParallelJob): void {
  const o = job.o;
  const eol = o.crlf ? "\r\n" : "\n";
  if (o.heading && job.withFilename) job.out.line("", eol);
  else if ((o.before > 0 || o.after > 0) && o.contextSep !== undefined) job.out.line(o.contextSep, eol);
}
