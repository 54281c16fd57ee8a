// Owns ripgrep 13's rules for a file holding a NUL byte: which detection applies (none under -a or
// --null-data, "quit" for walked files, "convert" for named ones and under --binary), how much of the
// file its 64 KiB read buffer lets it search before it sees the NUL, and, for a memory-mapped search,
// which line stops it. Does not search or print (rg-file.ts, rg-emit.ts).
import type { RgOptions } from "./rg-flags.ts";
import type { LineSpan } from "./rg-search.ts";

/** ripgrep's read buffer starts at 64 KiB and grows to hold a longer line; its mmap search looks for NUL in this much. */
const BUFFER_BYTES = 64 * 1024;

/** ripgrep's first read of a stream: the bytes a byte-order mark would take. */
const BOM_PEEK = 3;

export type BinaryMode = "none" | "quit" | "convert";

/** How ripgrep treats NUL bytes in this file: not at all, as a reason to stop, or as line ends. */
export function binaryMode(o: RgOptions, explicit: boolean): BinaryMode {
  if (o.text || o.nullData) return "none";
  return explicit || o.binary ? "convert" : "quit";
}

/**
 * The bytes ripgrep's streaming search has searched when a read brings in the NUL at `nul`: the lines that
 * end in the reads before it. The first read is the 3 bytes it looks at for a byte-order mark; each later
 * one fills the buffer's free space after the part of a line (and, with context, the `context` lines)
 * kept from the last one; a read that brings no line end reads again, growing the buffer when it is full.
 */
export function searchedBeforeNul(buf: Buffer, nul: number, context: number): number {
  let cap = BUFFER_BYTES;
  let kept = 0; // where the buffer's content starts, in the file
  let read = 0;
  let searched = 0; // end of the last complete line read
  for (;;) {
    for (;;) {
      if (read - kept >= cap) cap *= 3; // ripgrep adds twice the buffer's length
      const n = Math.min(read === 0 ? BOM_PEEK : cap - (read - kept), buf.length - read);
      if (n <= 0) return searched;
      const from = read;
      read += n;
      if (nul < read) return searched;
      const lf = buf.lastIndexOf(10, read - 1);
      if (lf >= from) {
        searched = lf + 1;
        break;
      }
    }
    kept = context === 0 ? searched : keptFrom(buf, kept, searched, context);
  }
}

/** The start of the line `count` lines before the last of buf[from, to): what ripgrep keeps for context. */
function keptFrom(buf: Buffer, from: number, to: number, count: number): number {
  let pos = to;
  if (pos === from) return from;
  if (buf[pos - 1] === 10) pos--;
  for (;;) {
    const i = pos > from ? buf.lastIndexOf(10, pos - 1) : -1;
    if (i < from) return from;
    if (count === 0) return i + 1;
    if (i === from) return from;
    count--;
    pos = i;
  }
}

/** True when the memory-mapped search sees the NUL at `nul` before any line: it looks at the first 64 KiB. */
export function nulSeenFirst(nul: number): boolean {
  return nul < BUFFER_BYTES;
}

/** Where a search that found binary data stops: the first line it would print past `cut`, and whether that line counts as a match. */
export interface BinaryStop {
  /** Lines starting here or later are not printed. */
  readonly cut: number;
  /** The start of the line it stopped on. */
  readonly line: number;
  /** Spans starting at `cut` or later are dropped with their context lines before `cut` (a streaming search). */
  readonly dropSpans: boolean;
  /** The line it stopped on is a match: it counts, so the binary message is printed. */
  readonly counts: boolean;
  /** The line it stopped on is a match or context line past a gap: the context separator precedes it. */
  readonly gap: boolean;
}

const lineEnd = (s: string, start: number) => {
  const e = s.indexOf("\n", start);
  return e < 0 ? s.length : e;
};

/**
 * A streaming search with "convert" that saw the NUL once it had searched s[0, cut): it stops at the next
 * line it would print (an after-context line, a before-context line, or a match). `before`/`after` are
 * the context line counts.
 */
export function streamStop(s: string, spans: readonly LineSpan[], cut: number, before: number, after: number): BinaryStop | undefined {
  let k = 0;
  while (k < spans.length && spans[k]!.start < cut) k++;
  let visited = -1; // end of the last printed line
  if (k > 0) {
    visited = spans[k - 1]!.end;
    for (let n = 0; n < after && visited + 1 < s.length; n++) {
      const start = visited + 1;
      if (start >= cut) return { cut, line: start, dropSpans: true, counts: spans[k]?.start === start, gap: false };
      visited = lineEnd(s, start);
    }
  }
  const next = spans[k];
  if (!next) return undefined;
  const gap = visited >= 0 && next.start > visited + 1;
  const hasBefore = before > 0 && next.start > 0 && next.start > visited + 1;
  return { cut, line: next.start, dropSpans: true, counts: !hasBefore, gap };
}

/** --passthru prints every line: it stops on the line at `cut`, which counts if it is a match. */
export function passthruStop(s: string, spans: readonly LineSpan[], cut: number): BinaryStop | undefined {
  if (cut >= s.length) return undefined;
  return { cut, line: cut, dropSpans: true, counts: spans.some((sp) => sp.start === cut), gap: false };
}

/**
 * A memory-mapped search (NUL bytes stay in the lines): it stops at the first line it prints that holds a
 * NUL; from the start when the NUL is in the first 64 KiB and the mode is "convert". Undefined: it never
 * meets one.
 */
export function mappedStop(s: string, spans: readonly LineSpan[], before: number, after: number, atStart: boolean): BinaryStop | undefined {
  let visited = -1;
  const hasNul = (start: number) => {
    if (atStart) return true;
    const z = s.indexOf("\0", start);
    return z >= 0 && z < lineEnd(s, start);
  };
  for (let k = 0; k < spans.length; k++) {
    const span = spans[k]!;
    const firstBefore = beforeStart(s, span.start, visited, before);
    for (let start = firstBefore; start < span.start; start = lineEnd(s, start) + 1) {
      const gap = start === firstBefore && visited >= 0 && start > visited + 1;
      if (hasNul(start)) return { cut: start, line: start, dropSpans: false, counts: false, gap };
    }
    const z = s.indexOf("\0", span.start); // a -U match's lines are checked together
    if (atStart || (z >= 0 && z < span.end)) return { cut: span.start, line: span.start, dropSpans: false, counts: true, gap: false };
    visited = span.end;
    const next = spans[k + 1]?.start;
    for (let n = 0; n < after && visited + 1 < s.length && visited + 1 !== next; n++) {
      const start = visited + 1;
      if (hasNul(start)) return { cut: start, line: start, dropSpans: false, counts: false, gap: false };
      visited = lineEnd(s, start);
    }
  }
  return undefined;
}

/** The first before-context line of a match at `start`: at most `before` lines, after the last printed one. */
function beforeStart(s: string, start: number, visited: number, before: number): number {
  let first = start;
  for (let n = 0; n < before && first > 0 && first > visited + 1; n++) first = first === 1 ? 0 : s.lastIndexOf("\n", first - 2) + 1;
  return first;
}

/** The first NUL at or after `start` in the text, as a byte offset of the file (`bom`: bytes dropped before the text). */
export function nulFrom(s: string, start: number, bom: number): number {
  return Buffer.byteLength(s.slice(0, s.indexOf("\0", start))) + bom;
}
