// Unit: a batch of files survives packing into the one string sent to a worker.
import { expect, test } from "bun:test";
import { packFiles, unpackFiles, type FileRef } from "./rg-parallel.ts";

test("packed files unpack as they were: newlines and colons in names, explicit flags, an empty batch", () => {
  const files: FileRef[] = [["/r/a\nb.txt", "a\nb.txt", false], ["/r/x:y", "./x:y", true], ["/r/ü", "ü", false]];
  expect(unpackFiles(packFiles(files))).toEqual(files);
  expect(unpackFiles(packFiles([]))).toEqual([]);
});
