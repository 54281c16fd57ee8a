// Owns ND-JSON framing of a byte stream: lines split on \n, CRLF accepted, blank lines skipped,
// and never more than `maxLineBytes` buffered: an over-long line is reported, not accumulated.
// Does not parse JSON (see jsonrpc.ts).

export type LineEvent = { type: "line"; text: string } | { type: "oversize"; bytes: number };

const NL = 10;
const CR = 13;

/** Splits `chunks` into lines. Stops after an `oversize` event: the caller must end the connection. */
export async function* readLines(
  chunks: AsyncIterable<Uint8Array>,
  maxLineBytes: number,
): AsyncGenerator<LineEvent, void, undefined> {
  const decoder = new TextDecoder();
  let parts: Uint8Array[] = [];
  let pending = 0;
  for await (const chunk of chunks) {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NL, start);
      const end = nl === -1 ? chunk.length : nl;
      const piece = chunk.subarray(start, end);
      if (pending + piece.length > maxLineBytes) {
        yield { type: "oversize", bytes: pending + piece.length };
        return;
      }
      if (nl === -1) {
        if (piece.length > 0) parts.push(piece.slice());
        pending += piece.length;
        break;
      }
      const line = joinParts(parts, pending, piece);
      parts = [];
      pending = 0;
      start = nl + 1;
      const text = decoder.decode(trimCr(line));
      if (text.trim() !== "") yield { type: "line", text };
    }
  }
  if (pending > 0) {
    const text = decoder.decode(trimCr(joinParts(parts, pending, new Uint8Array(0))));
    if (text.trim() !== "") yield { type: "line", text };
  }
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

function trimCr(line: Uint8Array): Uint8Array {
  return line.length > 0 && line[line.length - 1] === CR ? line.subarray(0, line.length - 1) : line;
}
