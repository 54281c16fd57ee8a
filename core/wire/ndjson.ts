// Owns ND-JSON framing of a byte stream: lines split on \n, CRLF accepted, blank lines skipped,
// and never more than `maxLineBytes` buffered: an over-long line is reported, not accumulated.
// Lines come in batches, one per chunk read, decoded with one call per chunk (a relay of small
// messages spends its time here, so per-line work is kept to a split). Does not parse JSON (see jsonrpc.ts).

export type LineEvent = { type: "line"; text: string } | { type: "oversize"; bytes: number };

const NL = 10;
const CR = 13;

/**
 * Splits `chunks` into lines, yielding the lines completed by each chunk together (possibly none).
 * Stops after an `oversize` event, which ends its batch: the caller must end the connection.
 */
export async function* readLineBatches(
  chunks: AsyncIterable<Uint8Array>,
  maxLineBytes: number,
): AsyncGenerator<LineEvent[], void, undefined> {
  const decoder = new TextDecoder();
  let parts: Uint8Array[] = [];
  let pending = 0;
  for await (const chunk of chunks) {
    const batch: LineEvent[] = [];
    // The common case, whole lines and nothing pending: one decode and one split, no views made.
    if (pending === 0 && chunk.length > 0 && chunk[chunk.length - 1] === NL && chunk.length <= maxLineBytes) {
      const lines = decoder.decode(chunk).split("\n");
      for (let i = 0; i < lines.length - 1; i++) push(batch, lines[i]!);
      yield batch;
      continue;
    }
    const first = chunk.indexOf(NL);
    if (first === -1) {
      if (pending + chunk.length > maxLineBytes) {
        yield [...batch, { type: "oversize", bytes: pending + chunk.length }];
        return;
      }
      if (chunk.length > 0) parts.push(chunk.slice());
      pending += chunk.length;
      continue;
    }
    // The line the earlier reads began.
    if (pending + first > maxLineBytes) {
      yield [{ type: "oversize", bytes: pending + first }];
      return;
    }
    push(batch, decoder.decode(joinParts(parts, pending, chunk.subarray(0, first))));
    parts = [];
    pending = 0;
    // Whole lines inside this chunk: one decode, one split. \n never occurs inside a UTF-8 sequence,
    // so the split is exact; when the region is within the bound, so is every line in it.
    const last = chunk.lastIndexOf(NL);
    if (last > first) {
      if (last - first - 1 <= maxLineBytes) {
        for (const text of decoder.decode(chunk.subarray(first + 1, last)).split("\n")) push(batch, text);
      } else {
        for (let start = first + 1; start <= last; ) {
          const nl = chunk.indexOf(NL, start);
          if (nl - start > maxLineBytes) {
            batch.push({ type: "oversize", bytes: nl - start });
            yield batch;
            return;
          }
          push(batch, decoder.decode(chunk.subarray(start, nl)));
          start = nl + 1;
        }
      }
    }
    // The start of a line a later read completes.
    const tail = chunk.subarray(last + 1);
    if (tail.length > maxLineBytes) {
      batch.push({ type: "oversize", bytes: tail.length });
      yield batch;
      return;
    }
    if (tail.length > 0) parts.push(tail.slice());
    pending = tail.length;
    yield batch;
  }
  if (pending > 0) {
    const batch: LineEvent[] = [];
    push(batch, decoder.decode(joinParts(parts, pending, new Uint8Array(0))));
    if (batch.length > 0) yield batch;
  }
}

/** The same lines one at a time. */
export async function* readLines(chunks: AsyncIterable<Uint8Array>, maxLineBytes: number): AsyncGenerator<LineEvent, void, undefined> {
  for await (const batch of readLineBatches(chunks, maxLineBytes)) yield* batch;
}

/** Adds a decoded line without its CR; blank lines are skipped. */
function push(batch: LineEvent[], text: string): void {
  if (text.length > 0 && text.charCodeAt(text.length - 1) === CR) text = text.slice(0, -1);
  if (text.length === 0 || (text.charCodeAt(0) <= 32 && text.trim() === "")) return;
  batch.push({ type: "line", text });
}

function joinParts(parts: Uint8Array[], pending: number, last: Uint8Array): Uint8Array {
  if (parts.length === 0) return last;
  const out = new Uint8Array(pending + last.length);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  out.set(last, off);
  return out;
}
