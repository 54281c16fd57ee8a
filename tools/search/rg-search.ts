// Owns searching one file's text: one regex scan over the whole text, lines found only around matches,
// -v/-m/-o, and context lines printed in order with ripgrep's grouping. Does not walk or read files.
import type { CompiledPattern } from "./rg-regex.ts";
import type { Printer } from "./rg-print.ts";

/** One line of the text: [start, end), end at its "\n" or the text's end. */
export interface LineSpan {
  start: number;
  end: number;
}

/** Lines holding a match, in order, at most `limit` of them. */
export function matchedLines(s: string, pat: CompiledPattern, limit: number): LineSpan[] {
  const out: LineSpan[] = [];
  const re = pat.scan;
  let pos = 0;
  while (out.length < limit && pos <= s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) break;
    const i = m.index;
    const start = i === 0 ? 0 : s.lastIndexOf("\n", i - 1) + 1;
    if (start >= s.length) break; // the empty "line" after a final newline is not a line
    let end = s.indexOf("\n", i);
    if (end < 0) end = s.length;
    // Rust's regex in line mode never matches across a newline; JavaScript's `\s` and `[^x]` can.
    if (i + m[0].length > end && !pat.line.test(s.slice(start, end))) {
      pos = i + 1;
      continue;
    }
    out.push({ start, end });
    pos = end + 1;
  }
  return out;
}

/** Lines without a match (-v), at most `limit`. */
export function unmatchedLines(s: string, pat: CompiledPattern, limit: number): LineSpan[] {
  const hits = matchedLines(s, pat, Infinity);
  const out: LineSpan[] = [];
  let h = 0;
  for (let start = 0; start < s.length && out.length < limit; ) {
    let end = s.indexOf("\n", start);
    if (end < 0) end = s.length;
    if (h < hits.length && hits[h]!.start === start) h++;
    else out.push({ start, end });
    start = end + 1;
  }
  return out;
}

/** Line numbers for increasing positions, counting newlines only once. */
export class LineCounter {
  private pos = 0;
  private line = 1;
  constructor(private readonly s: string) {}
  at(p: number): number {
    const s = this.s;
    for (let q = s.indexOf("\n", this.pos); q >= 0 && q < p; q = s.indexOf("\n", q + 1)) this.line++;
    this.pos = p;
    return this.line;
  }
}

export interface EmitOptions {
  readonly before: number;
  readonly after: number;
  readonly onlyMatching: boolean;
}

/** Prints the lines of one file; false once the output is full. */
export function emitLines(
  s: string,
  spans: readonly LineSpan[],
  display: string,
  pat: CompiledPattern,
  o: EmitOptions,
  p: Printer,
): boolean {
  const lines = new LineCounter(s);
  let lastEnd = -1; // end of the last printed line of this file
  for (let k = 0; k < spans.length; k++) {
    const span = spans[k]!;
    const before: LineSpan[] = [];
    for (let q = span.start; before.length < o.before && q > 0; ) {
      const end = q - 1;
      const start = end === 0 ? 0 : s.lastIndexOf("\n", end - 1) + 1;
      if (start <= lastEnd) break;
      before.unshift({ start, end });
      q = start;
    }
    const first = before[0] ?? span;
    if (lastEnd < 0 || first.start !== lastEnd + 1) p.group(display);
    for (const b of before) p.line(display, lines.at(b.start), "-", s.slice(b.start, b.end));
    if (o.onlyMatching) printMatches(s, span, display, pat, lines, p);
    else p.line(display, lines.at(span.start), ":", s.slice(span.start, span.end));
    lastEnd = span.end;
    const next = spans[k + 1]?.start;
    for (let n = 0; n < o.after && lastEnd + 1 < s.length && lastEnd + 1 !== next; n++) {
      const start = lastEnd + 1;
      let end = s.indexOf("\n", start);
      if (end < 0) end = s.length;
      p.line(display, lines.at(start), "-", s.slice(start, end));
      lastEnd = end;
    }
    if (p.full) return false;
  }
  return true;
}

function printMatches(s: string, span: LineSpan, display: string, pat: CompiledPattern, lines: LineCounter, p: Printer): void {
  const re = pat.exact;
  const no = lines.at(span.start);
  for (let pos = span.start; pos <= span.end; ) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m || m.index >= span.end) break;
    if (m[0].length > 0) p.line(display, no, ":", s.slice(m.index, Math.min(m.index + m[0].length, span.end)));
    pos = m[0].length > 0 ? m.index + m[0].length : m.index + 1;
  }
}
