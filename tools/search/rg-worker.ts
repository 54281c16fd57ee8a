// Owns one worker thread of the shims (rg-parallel.ts): its first message says the job, the built-in rg's
// search (the patterns compiled once) or tree's line counts; then it answers each batch of files it is sent
// (rg: the batch's text, warnings and counts; tree: each file's line count). Does not walk, order batches
// or apply the output cap.
import { FileReader } from "./file-bytes.ts";
import { pinHotPaths } from "./jit-tier.ts";
import { BatchSearcher, countBatch, epochNow, unpackFiles, unpackPaths, type LineCountInit, type WorkerBatch, type WorkerInit } from "./rg-parallel.ts";
import { compilePatterns } from "./rg-regex.ts";

declare const self: { onmessage: ((e: MessageEvent) => void) | null; postMessage(msg: unknown): void };

pinHotPaths(); // this thread's own copies of the search code

let answer: ((id: number, files: string) => unknown) | undefined;

self.onmessage = (e: MessageEvent) => {
  const msg = e.data as WorkerInit | LineCountInit | WorkerBatch;
  if (msg.type === "init") {
    const o = msg.options;
    const pat = compilePatterns({ ...o, patterns: msg.patterns, multilineDotall: o.multiline && o.multilineDotall });
    if (typeof pat === "string") throw new Error(pat); // the main thread compiled the same patterns first
    const searcher = new BatchSearcher(o, pat, msg.withFilename, msg.maxFileBytes);
    answer = (id, files) => searcher.run(id, unpackFiles(files));
    return;
  }
  if (msg.type === "count-lines") {
    const reader = new FileReader();
    const deadline = msg.deadline;
    const stop = () => epochNow() > deadline;
    answer = (id, files) => countBatch(reader, id, unpackPaths(files), stop);
    return;
  }
  self.postMessage(answer!(msg.id, msg.files));
};
