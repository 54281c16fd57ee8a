import { expect, test } from "bun:test";
import { type LineEvent, readLineBatches, readLines } from "./ndjson.ts";

const enc = new TextEncoder();

async function* chunks(...parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield typeof p === "string" ? enc.encode(p) : p;
}

async function collect(it: AsyncIterable<LineEvent>): Promise<LineEvent[]> {
  const out: LineEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

test("lines split on newline, CRLF stripped, blank lines skipped", async () => {
  const events = await collect(readLines(chunks('{"a":1}\r\n\r\n  \n{"b":2}\n'), 1024));
  expect(events).toEqual([
    { type: "line", text: '{"a":1}' },
    { type: "line", text: '{"b":2}' },
  ]);
});

test("a line split across many reads is reassembled, including a split multi-byte character", async () => {
  const bytes = enc.encode('{"text":"héllo wörld"}\n');
  const parts = Array.from(bytes, (b) => new Uint8Array([b]));
  const events = await collect(readLines(chunks(...parts), 1024));
  expect(events).toEqual([{ type: "line", text: '{"text":"héllo wörld"}' }]);
});

test("a final line without a newline is still delivered at EOF", async () => {
  const events = await collect(readLines(chunks('{"a":1}\n{"b"', ":2}"), 1024));
  expect(events.map((e) => (e.type === "line" ? e.text : "?"))).toEqual(['{"a":1}', '{"b":2}']);
});

test("an oversize line is reported once and reading stops, without buffering it whole", async () => {
  const max = 64;
  let produced = 0;
  async function* endless(): AsyncGenerator<Uint8Array> {
    yield enc.encode('{"ok":true}\n');
    for (let i = 0; i < 1_000_000; i++) {
      produced++;
      yield enc.encode("x".repeat(16));
    }
  }
  const events = await collect(readLines(endless(), max));
  expect(events[0]).toEqual({ type: "line", text: '{"ok":true}' });
  expect(events[1]?.type).toBe("oversize");
  expect(events.length).toBe(2);
  // stopped right after crossing the bound: never read the endless input to its end
  expect(produced).toBeLessThan(10);
});

test("a line of exactly the bound is accepted; one byte more is not", async () => {
  const exact = await collect(readLines(chunks("a".repeat(32) + "\n"), 32));
  expect(exact).toEqual([{ type: "line", text: "a".repeat(32) }]);
  const over = await collect(readLines(chunks("a".repeat(33) + "\n"), 32));
  expect(over[0]?.type).toBe("oversize");
});

test("many lines in one chunk", async () => {
  const text = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ i })).join("\n") + "\n";
  const events = await collect(readLines(chunks(text), 1024));
  expect(events.length).toBe(1000);
  expect(events[999]).toEqual({ type: "line", text: '{"i":999}' });
});

test("lines inside one chunk: CRLF, blank and whitespace-only lines, and multi-byte text, split exactly", async () => {
  const text = '{"a":"é"}\r\n\n \t \r\n{"b":"日本"}\n  {"c":3}\n{"d"';
  const events = await collect(readLines(chunks(text, ":4}\n"), 1024));
  expect(events.map((e) => (e.type === "line" ? e.text : "?"))).toEqual(['{"a":"é"}', '{"b":"日本"}', '  {"c":3}', '{"d":4}']);
});

test("an over-long line in the middle of a chunk is reported after the lines before it", async () => {
  const text = '{"a":1}\n{"b":2}\n' + "x".repeat(40) + '\n{"c":3}\n';
  const events = await collect(readLines(chunks(text), 32));
  expect(events).toEqual([
    { type: "line", text: '{"a":1}' },
    { type: "line", text: '{"b":2}' },
    { type: "oversize", bytes: 40 },
  ]);
});

test("batches: one per chunk read, holding the lines that chunk completed", async () => {
  const batches: LineEvent[][] = [];
  for await (const b of readLineBatches(chunks('{"a":1}\n{"b"', ':2}\n{"c":3}\n'), 1024)) batches.push(b);
  expect(batches.map((b) => b.length)).toEqual([1, 2]);
});
