// Owns one worker thread of the parallel built-in rg: it compiles the patterns once, then searches each
// batch of files it is sent on a fresh printer and answers with the batch's text, warnings and counts.
// Does not walk, order batches or apply the output cap (rg-parallel.ts).
import type { RgOptions } from "./rg-flags.ts";
import { FileSearch } from "./rg-file.ts";
import { Printer, printOptionsFor } from "./rg-print.ts";
import { compilePatterns } from "./rg-regex.ts";
import { ShimOutput } from "./shim-output.ts";

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
  files: [abs: string, display: string, explicit: boolean][];
}

export interface BatchResult {
  id: number;
  text: string;
  warnings: string[];
  matched: boolean;
  errored: boolean;
}

declare const self: { onmessage: ((e: MessageEvent) => void) | null; postMessage(msg: unknown): void };

let search: FileSearch | undefined;
let init: WorkerInit | undefined;
let warnings: string[] = [];

function onBatch(b: WorkerBatch): BatchResult {
  const parts: string[] = [];
  const out = new ShimOutput((c) => parts.push(c), { maxBytes: Infinity, maxLines: Infinity }, "rg", "");
  const printer = new Printer(out, printOptionsFor(init!.options, init!.withFilename));
  search!.usePrinter(printer);
  search!.matched = search!.errored = false;
  warnings = [];
  for (const [abs, display, explicit] of b.files) search!.file(abs, display, explicit);
  out.finish();
  return { id: b.id, text: parts.join(""), warnings, matched: search!.matched, errored: search!.errored };
}

self.onmessage = (e: MessageEvent) => {
  const msg = e.data as WorkerInit | WorkerBatch;
  if (msg.type === "init") {
    init = msg;
    const o = msg.options;
    const pat = compilePatterns({ ...o, patterns: msg.patterns, multilineDotall: o.multiline && o.multilineDotall });
    if (typeof pat === "string") throw new Error(pat); // the main thread compiled the same patterns first
    const placeholder = new Printer(new ShimOutput(() => {}, { maxBytes: 0, maxLines: 0 }, "rg", ""), printOptionsFor(o, msg.withFilename));
    search = new FileSearch(o, pat, placeholder, (w) => warnings.push(w), msg.maxFileBytes, () => false);
    return;
  }
  self.postMessage(onBatch(msg));
};
