import { expect, test } from "bun:test";
import { createPatch } from "diff";
import { editPatch } from "./edit-diff.ts";

test("the windowed patch equals a whole-file diff, wherever the edit falls", () => {
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  for (let round = 0; round < 3000; round++) {
    const lines = Array.from({ length: 1 + rand(30) }, (_, i) => `l${i}${rand(3) === 0 ? "" : " text"}`);
    const before = lines.join("\n") + (rand(2) ? "\n" : "");
    const at = rand(before.length);
    const oldLen = Math.min(before.length - at, 1 + rand(25));
    const newStr = ["X", "", "a\nb", "\n", "yy\nzz\n"][rand(5)]!;
    const after = before.slice(0, at) + newStr + before.slice(at + oldLen);
    if (after === before) continue;
    expect([round, editPatch("f.txt", before, at, oldLen, newStr)]).toEqual([round, createPatch("f.txt", before, after, "", "", { context: 3 })]);
  }
});
