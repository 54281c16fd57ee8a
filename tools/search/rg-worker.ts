// Owns one worker thread of the shims (rg-parallel.ts): its first message says the job, the built-in rg's
// search (the patterns compiled once) or tree's line counts; then it answers each batch of files it is sent
// (rg: the batch's text, warnings and counts; tree: each file's line count). Does not walk, order batches
// or apply the output cap.
import { FileReader } from "./file-bytes.ts";
import { pinHotPaths } from "./jit-tier.ts";
import { BatchSearcher, countBatch, epochNow, READY, unpackFiles, unpackPaths, type LineCountInit, type WorkerBatch, type WorkerInit } from "./rg-parallel.ts";
import { compilePatterns } from "./rg-regex.ts";

declare const self: { onmessage: ((e: MessageEvent) => void) | null; postMessage(msg: unknown): void };

pinHotPaths(); // this thread's own copies of the search code

/** The rg search's answer to a batch, its patterns compiled once. */
function searching(msg: WorkerInit): (id: number, files: string) => unknown {
  const o = msg.options;
  const pat = compilePatterns({ ...o, patterns: msg.patterns, multilineDotall: o.multiline && o.multilineDotall });
  if (typeof pat === "string") throw new Error(pat); // the main thread compiled the same patterns first
  const searcher = new BatchSearcher(o, pat, msg.withFilename, msg.maxFileBytes);
  return (id, files) => searcher.run(id, unpackFiles(files));
}

/** tree's answer to a batch: each file's line count, stopped between chunks past the deadline. */
function counting(msg: LineCountInit): (id: number, files: string) => unknown {
  const reader = new FileReader();
  const deadline = msg.deadline;
  const stop = () => epochNow() > deadline;
  return (id, files) => countBatch(reader, id, unpackPaths(files), stop);
}

let answer: ((id: number, files: string) => unknown) | undefined;

self.onmessage = (e: MessageEvent) => {
  const msg = e.data as WorkerInit | LineCountInit | WorkerBatch;
  if (msg.type === "batch") {
    self.postMessage(answer!(msg.id, msg.files));
    return;
  }
  answer = msg.type === "init" ? searching(msg) : counting(msg);
  if (msg.announce) self.postMessage({ id: READY });
};
