// Owns the built-in rg's parallel search of a large tree: batches of walked files sent to worker threads
// (rg-worker.ts), their answers printed in walk order through the capped output, the separators ripgrep
// puts between files, and finding the worker's code inside the compiled binary. Does not search.
import type { RgOptions } from "./rg-flags.ts";
import type { BatchResult, WorkerBatch, WorkerInit } from "./rg-worker.ts";
import type { ShimOutput } from "./shim-output.ts";

export interface ParallelJob {
  readonly o: RgOptions;
  readonly patterns: string[];
  readonly withFilename: boolean;
  readonly maxFileBytes: number;
  readonly files: readonly [abs: string, display: string, explicit: boolean][];
  readonly workers: number;
  readonly batchFiles: number;
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

/** Searches `files` on worker threads; resolves with whether any matched and any failed. */
export function searchParallel(job: ParallelJob): Promise<{ matched: boolean; errored: boolean }> {
  const { o, out } = job;
  const batches: WorkerBatch["files"][] = [];
  for (let i = 0; i < job.files.length; i += job.batchFiles) batches.push(job.files.slice(i, i + job.batchFiles));
  const init: WorkerInit = { type: "init", options: o, patterns: job.patterns, withFilename: job.withFilename, maxFileBytes: job.maxFileBytes };
  const results = new Map<number, BatchResult>();
  let [sent, next, inFlight, matched, errored, printedAny] = [0, 0, 0, false, false, false];
  return new Promise((resolve, reject) => {
    const workers: Worker[] = [];
    const finish = () => {
      for (const w of workers) w.terminate();
      resolve({ matched, errored });
    };
    const send = (w: Worker) => {
      if (sent >= batches.length || out.capped) return;
      const batch: WorkerBatch = { type: "batch", id: sent, files: batches[sent]! };
      sent++;
      inFlight++;
      w.postMessage(batch);
    };
    const flush = () => {
      for (let r = results.get(next); r; r = results.get(next)) {
        results.delete(next++);
        matched ||= r.matched;
        errored ||= r.errored;
        if (!o.noMessages) for (const line of r.warnings) job.warn(line);
        if (r.text === "" || out.capped) continue;
        if (printedAny && o.mode === "lines") separate(job);
        printedAny = true;
        const lines = r.text.split("\n");
        lines.pop(); // the text ends with a newline
        for (const line of lines) if (!out.line(line)) break;
      }
    };
    const count = Math.max(1, Math.min(job.workers, batches.length));
    for (let i = 0; i < count; i++) {
      const w = new Worker(workerUrl());
      workers.push(w);
      w.onmessage = (e: MessageEvent) => {
        const r = e.data as BatchResult;
        inFlight--;
        results.set(r.id, r);
        flush();
        send(w);
        if (inFlight === 0) finish();
      };
      w.onerror = (e: ErrorEvent) => {
        for (const x of workers) x.terminate();
        reject(new Error(`rg: a search worker failed: ${e.message}`));
      };
      w.postMessage(init);
      send(w);
    }
    if (inFlight === 0) finish();
  });
}

/** What ripgrep prints between two files' lines: a blank line under --heading, else the context separator. */
function separate(job: ParallelJob): void {
  const o = job.o;
  const eol = o.crlf ? "\r\n" : "\n";
  if (o.heading && job.withFilename) job.out.line("", eol);
  else if ((o.before > 0 || o.after > 0) && o.contextSep !== undefined) job.out.line(o.contextSep, eol);
}
