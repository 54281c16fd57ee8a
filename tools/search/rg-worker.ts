// Owns one worker thread of the parallel built-in rg: it compiles the patterns once, then searches each
// batch of files it is sent and answers with the batch's text, warnings and counts (rg-parallel.ts).
// Does not walk, order batches or apply the output cap.
import { pinHotPaths } from "./jit-tier.ts";
import { BatchSearcher, unpackFiles, type WorkerBatch, type WorkerInit } from "./rg-parallel.ts";
import { compilePatterns } from "./rg-regex.ts";

declare const self: { onmessage: ((e: MessageEvent) => void) | null; postMessage(msg: unknown): void };

pinHotPaths(); // this thread's own copies of the search code

let searcher: BatchSearcher | undefined;

self.onmessage = (e: MessageEvent) => {
  const msg = e.data as WorkerInit | WorkerBatch;
  if (msg.type === "init") {
    const o = msg.options;
    const pat = compilePatterns({ ...o, patterns: msg.patterns, multilineDotall: o.multiline && o.multilineDotall });
    if (typeof pat === "string") throw new Error(pat); // the main thread compiled the same patterns first
    searcher = new BatchSearcher(o, pat, msg.withFilename, msg.maxFileBytes);
    return;
  }
  self.postMessage(searcher!.run(msg.id, unpackFiles(msg.files)));
};
