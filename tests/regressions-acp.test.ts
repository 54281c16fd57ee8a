// One test per bug a review found in the agent's ACP surface, the chain and the wire, named after the
// bug, so it cannot come back unnoticed. Everything here runs in memory: no process, no socket.
import { expect, test } from "bun:test";
import { Link, type LinkEnd } from "../core/wire/link.ts";

/** Input that never yields: the link stays open until it stalls. */
const silent: AsyncIterable<Uint8Array> = {
  async *[Symbol.asyncIterator]() {
    await new Promise(() => {});
  },
};

/** A sink whose peer never reads: every write stays queued. */
const stuck = { write: () => new Promise<void>(() => {}) };

/** Whether the link ended once everything queued in this turn has been handed to the writer. */
async function stalledAfterFlush(link: Link): Promise<LinkEnd | "running"> {
  return Promise.race([link.ended, new Promise<"running">((r) => setImmediate(() => r("running")))]);
}

test("regression: MAX_HOP_QUEUE_BYTES counted UTF-16 units, not bytes (multibyte text trips the bound at its UTF-8 size)", async () => {
  const message = { jsonrpc: "2.0", method: "session/update", params: { text: "é漢🙂".repeat(200) } };
  const line = JSON.stringify(message) + "\n";
  const bytes = Buffer.byteLength(line);
  expect(line.length).toBeLessThan(bytes / 2); // the old count saw less than half the bytes

  const atBound = new Link({ input: silent, sink: stuck, maxLineBytes: 1 << 20, maxQueuedBytes: bytes, onMessage: () => {} });
  atBound.send(message);
  expect(await stalledAfterFlush(atBound)).toBe("running");

  const overBound = new Link({ input: silent, sink: stuck, maxLineBytes: 1 << 20, maxQueuedBytes: bytes - 1, onMessage: () => {} });
  overBound.send(message);
  expect(await stalledAfterFlush(overBound)).toEqual({ reason: "stalled", bytes });
});
