import { expect, test } from "bun:test";
import { setLogSink } from "../log.ts";
import { createMessageStream } from "./stream.ts";

setLogSink(() => {});

async function* chunks(...parts: string[]) {
  for (const p of parts) yield new TextEncoder().encode(p);
}

test("well-formed messages reach the SDK side; malformed lines are answered directly", async () => {
  const out: string[] = [];
  const ms = createMessageStream({
    input: chunks('{"jsonrpc":"2.0","id":1,"method":"a"}\r\n', "nope\n", '[1]\n{"jsonrpc":"2.0","method":"b"}\n'),
    sink: { write: async (b) => void out.push(new TextDecoder().decode(b)) },
    maxLineBytes: 1000,
  });
  const got: unknown[] = [];
  const reader = ms.stream.readable.getReader();
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    got.push(r.value);
  }
  expect(got).toEqual([{ jsonrpc: "2.0", id: 1, method: "a" }, { jsonrpc: "2.0", method: "b" }]);
  await ms.writer.flush();
  expect(out.map((l) => JSON.parse(l).error.code)).toEqual([-32700, -32600]);
  expect(await ms.ended).toEqual({ reason: "eof" });
});

test("an over-long line ends the stream with reason oversize", async () => {
  const ms = createMessageStream({ input: chunks("x".repeat(50), "y".repeat(60)), sink: { write: async () => {} }, maxLineBytes: 100 });
  const reader = ms.stream.readable.getReader();
  expect((await reader.read()).done).toBe(true);
  expect(await ms.ended).toMatchObject({ reason: "oversize" });
});

test("outgoing messages are written one per line", async () => {
  const out: string[] = [];
  const ms = createMessageStream({ input: chunks(), sink: { write: async (b) => void out.push(new TextDecoder().decode(b)) }, maxLineBytes: 100 });
  const w = ms.stream.writable.getWriter();
  await w.write({ jsonrpc: "2.0", method: "x" } as any);
  expect(out).toEqual(['{"jsonrpc":"2.0","method":"x"}\n']);
});
