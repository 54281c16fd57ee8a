// Owns printing the matched lines of one file in ripgrep's order: context lines and their grouping
// (--passthru is unbounded context), -o, -r with `$1`/`${name}` captures, --column and --vimgrep.
// Does not find the lines (rg-search.ts) nor format prefixes (rg-print.ts).
import type { LineKind, LineSink } from "./rg-print.ts";
import type { CompiledPattern } from "./rg-regex.ts";
import { matchesIn, splitLines, type LineSpan } from "./rg-search.ts";

export interface EmitOptions {
  readonly before: number;
  readonly after: number;
  /** Context after the last match, when it differs from `after`. */
  readonly afterLast?: number;
  readonly onlyMatching: boolean;
  /** -v -o: context lines print their matches only. */
  readonly matchesOfContext?: boolean;
  /** -m stopped the search: after-context lines that match print as matches (ripgrep 13). */
  readonly limitReached?: boolean;
  readonly replace?: string;
  readonly column?: boolean;
  readonly vimgrep?: boolean;
  readonly crlf?: boolean;
  /** Find each match of a printed line even when nothing above needs them (-M with --stats counts them). */
  readonly locate?: boolean;
  /**
   * A binary file's search stopped (rg-binary.ts): no line from `at` on is printed; `dropSpans`: nor the
   * context before a match from there; `gap`: the context separator still precedes the line it stopped on.
   */
  readonly cut?: { readonly at: number; readonly dropSpans: boolean; readonly gap: boolean };
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

/** ripgrep's replacement syntax: `$1`, `$name`, `${name}`, `$$`; an unknown group is empty. */
export function expandReplacement(template: string, m: RegExpExecArray): string {
  return template.replace(/\$(\$|\{([^}]*)\}|([_0-9A-Za-z]+))/g, (all, _x: string, braced?: string, bare?: string) => {
    if (all === "$$") return "$";
    const name = braced ?? bare!;
    if (braced !== undefined && !/^[_0-9A-Za-z]+$/.test(name)) return all;
    const v = /^\d+$/.test(name) ? m[Number(name)] : m.groups?.[name];
    return v ?? "";
  });
}

/** --passthru on a file without a match: every line, as context. */
export function emitAll(s: string, display: string, p: LineSink): void {
  const lines = new LineCounter(s);
  p.group(display);
  for (let start = 0; start < s.length && !p.full; ) {
    let end = s.indexOf("\n", start);
    if (end < 0) end = s.length;
    p.line(display, lines.at(start), "context", s.slice(start, end), undefined, end < s.length, start);
    start = end + 1;
  }
}

/** Prints the lines of one file; false once the output is full. */
export function emitLines(s: string, spans: readonly LineSpan[], display: string, pat: CompiledPattern, o: EmitOptions, p: LineSink): boolean {
  const lines = new LineCounter(s);
  const ctx = (start: number, end: number, kind: LineKind = "context") => {
    // -v -o: a context line is one that matches, and ripgrep prints its matches alone.
    const ms = o.matchesOfContext ? matchesIn(s, { start, end }, pat) : [];
    if (ms.length === 0) return p.line(display, lines.at(start), kind, s.slice(start, end), undefined, end < s.length, start);
    for (const m of ms) p.line(display, lines.at(start), kind, m[0], undefined, false, start);
    return !p.full;
  };
  let lastEnd = -1; // end of the last printed line of this file
  const cut = o.cut?.at ?? Infinity;
  const stopAt = Math.min(cut, s.length);
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
    if (span.start >= cut) {
      const shown = o.cut!.dropSpans ? [] : before.filter((b) => b.start < cut);
      if (shown.length > 0 || o.cut!.gap) p.group(display);
      for (const b of shown) ctx(b.start, b.end);
      break;
    }
    const first = before[0] ?? span;
    if (lastEnd < 0 || first.start !== lastEnd + 1) p.group(display);
    for (const b of before) ctx(b.start, b.end);
    printSpan(s, span, display, pat, o, lines, p);
    lastEnd = span.end;
    const next = spans[k + 1]?.start;
    const after = next === undefined ? (o.afterLast ?? o.after) : o.after;
    for (let n = 0; n < after && lastEnd + 1 < stopAt && lastEnd + 1 !== next; n++) {
      const start = lastEnd + 1;
      let end = s.indexOf("\n", start);
      if (end < 0) end = s.length;
      const matches = next === undefined && o.limitReached && pat.line.test(s.slice(start, end));
      ctx(start, end, matches ? "match" : "context");
      lastEnd = end;
    }
    if (p.full) return false;
  }
  return true;
}

function printSpan(s: string, span: LineSpan, display: string, pat: CompiledPattern, o: EmitOptions, lines: LineCounter, p: LineSink): void {
  const needMatches = o.onlyMatching || o.replace !== undefined || o.column || o.vimgrep || o.locate;
  const ms = needMatches ? matchesIn(s, span, pat) : [];
  const kind: LineKind = "match";
  if (o.onlyMatching) {
    for (const m of ms) {
      const lineStart = m.index === 0 ? 0 : s.lastIndexOf("\n", m.index - 1) + 1;
      const text = o.replace !== undefined ? expandReplacement(o.replace, m) : m[0];
      const col = columnOf(s, lineStart, m.index);
      text.split("\n").forEach((t, i) => p.line(display, lines.at(m.index) + i, kind, t, col, false, m.index, [0]));
    }
    return;
  }
  for (const line of splitLines(s, [span])) {
    const inLine = ms.filter((m) => m.index >= line.start && m.index <= line.end && !(m.index === line.end && line.end < span.end));
    // Every line of a -U match shows the column of the span's first match, as ripgrep prints it.
    const col = ms[0] ? columnOf(s, span.start, ms[0].index) : o.column ? emptyMatchColumn(s, line, pat) : undefined;
    const starts = inLine.length === 0 ? NO_STARTS : inLine.map((m) => m.index - line.start);
    if (o.vimgrep && ms.length > 0) {
      // Each match prints once, on the line it starts on (a -U match's other lines are not printed).
      const text = o.replace !== undefined ? replaceIn(s, line, inLine, o.replace, false, starts) : s.slice(line.start, line.end);
      for (const m of inLine) p.line(display, lines.at(line.start), kind, text, columnOf(s, line.start, m.index), line.end < s.length, m.index, starts);
      continue;
    }
    const text = o.replace !== undefined ? replaceIn(s, line, inLine, o.replace, o.crlf ?? false, starts) : s.slice(line.start, line.end);
    // A replaced line is ripgrep's own text: it ends with ripgrep's terminator (`\r\n` under --crlf).
    const terminated = line.end < s.length && o.replace === undefined;
    p.line(display, lines.at(line.start), kind, text, col, terminated, line.start, starts);
  }
}

/** Where the matches of a line without any start (shared: never written, as no match is replaced in it). */
const NO_STARTS: number[] = [];

/** --column of a line whose only match is empty (`^$`): where that match is, as ripgrep prints it. */
function emptyMatchColumn(s: string, line: LineSpan, pat: CompiledPattern): number | undefined {
  pat.exact.lastIndex = line.start;
  const m = pat.exact.exec(s);
  return m && m.index <= line.end ? columnOf(s, line.start, m.index) : undefined;
}

/** 1-based byte column of `pos` in the line starting at `lineStart`. */
function columnOf(s: string, lineStart: number, pos: number): number {
  return Buffer.byteLength(s.slice(lineStart, pos)) + 1;
}

/**
 * The line with each match replaced; a `\r` ending it is left for ripgrep's own terminator to restore.
 * `starts` becomes where each replacement starts in it.
 */
function replaceIn(s: string, line: LineSpan, ms: readonly RegExpExecArray[], template: string, crlf: boolean, starts: number[]): string {
  if (crlf && s[line.end - 1] === "\r") line = { start: line.start, end: line.end - 1 };
  let out = "";
  let pos = line.start;
  for (let i = 0; i < ms.length; i++) {
    const m = ms[i]!;
    out += s.slice(pos, m.index);
    starts[i] = out.length;
    out += expandReplacement(template, m);
    pos = Math.min(m.index + m[0].length, line.end);
  }
  return out + s.slice(pos, line.end);
}
