import { afterAll, afterEach, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, renameSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readWholeTrace, TraceFollower, type TraceLine } from "./trace-follow.ts";

const dir = mkdtempSync(join(tmpdir(), "tendril-trace-follow-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const followers: TraceFollower[] = [];
afterEach(() => followers.splice(0).forEach((f) => f.stop()));

const rec = (t: number) => JSON.stringify({ t, hop: 0, dir: "in", message: { jsonrpc: "2.0", method: "n", params: { t } } }) + "\n";

/** A follower whose events are read in order with a bounded wait each (5 s: a poll is 10 ms). */
function follow(file: string, maxLineBytes = 1 << 20) {
  const events: string[] = [];
  let wake: (() => void) | undefined;
  const push = (e: string) => {
    events.push(e);
    wake?.();
  };
  const f = new TraceFollower(file, { pollMs: 10, maxLineBytes }, {
    lines: (parsed: TraceLine[]) => parsed.forEach((p) => push(p.kind === "meta" ? `meta ${p.components}` : `t=${p.record.t}`)),
    problem: (err) => push(`problem ${err.message}`),
    reset: () => push("reset"),
    idle: () => {},
  });
  followers.push(f);
  f.start();
  return {
    async next(): Promise<string> {
      const deadline = Date.now() + 5000;
      while (events.length === 0) {
        if (Date.now() > deadline) throw new Error("no event within 5 s");
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 100);
        });
      }
      return events.shift()!;
    },
    pending: () => [...events],
  };
}

test("follows appended lines; a half line waits for its end; an over-long line is named and following goes on", async () => {
  const file = join(dir, "grow.jsonl");
  writeFileSync(file, JSON.stringify({ components: ["a", "b"] }) + "\n" + rec(1));
  const f = follow(file, 200);
  expect(await f.next()).toBe("meta a,b");
  expect(await f.next()).toBe("t=1");
  appendFileSync(file, rec(2) + rec(3).slice(0, 10));
  expect(await f.next()).toBe("t=2");
  appendFileSync(file, rec(3).slice(10) + "x".repeat(300) + "\n" + rec(4));
  expect(await f.next()).toBe("t=3");
  expect(await f.next()).toBe("problem line 5 is longer than 200 bytes (MAX_TRACE_LINE_BYTES)");
  expect(await f.next()).toBe("t=4");
});

test("a file cut back (a new run) or replaced starts over from its top", async () => {
  const file = join(dir, "runs.jsonl");
  writeFileSync(file, rec(1) + rec(2));
  const f = follow(file);
  expect([await f.next(), await f.next()]).toEqual(["t=1", "t=2"]);
  truncateSync(file, 0);
  appendFileSync(file, rec(7));
  expect([await f.next(), await f.next()]).toEqual(["reset", "t=7"]);
  const next = join(dir, "runs.next");
  writeFileSync(next, rec(8) + rec(9));
  renameSync(next, file);
  expect([await f.next(), await f.next(), await f.next()]).toEqual(["reset", "t=8", "t=9"]);
});

test("a whole trace read strictly: the first bad line is named; a cut-short last line is set aside", async () => {
  const file = join(dir, "whole.jsonl");
  writeFileSync(file, rec(1) + "\n\r\n" + rec(2) + rec(3).slice(0, 12));
  const whole = await readWholeTrace(file, 1 << 20);
  expect(whole.records.map((r) => r.t)).toEqual([1, 2]);
  expect(whole.cutShort).toBe(5);
  writeFileSync(file, rec(1) + '{"t": 2}\n');
  await expect(readWholeTrace(file, 1 << 20)).rejects.toThrow('line 2 is not a trace record ({"t", "hop", "dir", "message"}): "{\\"t\\": 2}"');
  await expect(readWholeTrace(join(dir, "missing.jsonl"), 1 << 20)).rejects.toThrow("ENOENT");
});
