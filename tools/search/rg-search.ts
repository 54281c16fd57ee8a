// Owns finding what matched in one file's text: one regex scan over the whole text, lines found only around
// matches (several lines per match with -U), -v, and the matches inside a span. Does not print (rg-emit.ts)
// nor walk or read files.
import type { CompiledPattern } from "./rg-regex.ts";

/** Lines of the text: [start, end), end at the last line's "\n" or the text's end; one line unless -U. */
export interface LineSpan {
  start: number;
  end: number;
}

/** Lines holding a match, in order, at most `limit` of them; `multiline` lets a match span lines. */
export function matchedLines(s: string, pat: CompiledPattern, limit: number, multiline = false): LineSpan[] {
  if (pat.plain !== undefined && !multiline) return plainLines(s, pat.plain, limit);
  const out: LineSpan[] = [];
  const re = pat.scan;
  let pos = 0;
  // -U: at the limit, a match starting on the last span's last line still joins it (ripgrep counts spans).
  while ((out.length < limit || multiline) && pos <= s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) break;
    const i = m.index;
    const start = i === 0 ? 0 : s.lastIndexOf("\n", i - 1) + 1;
    if (start >= s.length) break; // the empty "line" after a final newline is not a line
    const last = multiline ? Math.max(i, i + m[0].length - 1) : i;
    let end = s.indexOf("\n", last);
    if (end < 0) end = s.length;
    if (multiline) {
      const prev = out[out.length - 1];
      // Matches sharing a line, or on adjacent lines, make one block, as ripgrep 13 groups them.
      if (prev && prev.end + 1 >= start) prev.end = Math.max(prev.end, end);
      else if (out.length < limit) out.push({ start, end });
      else break;
      pos = m[0].length > 0 ? i + m[0].length : end + 1;
      continue;
    }
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

/** How many lines hold a match, at most `limit`: `matchedLines(…).length` without the spans (-c). */
export function countMatchedLines(s: string, pat: CompiledPattern, limit: number): number {
  const text = pat.plain;
  if (text === undefined) return matchedLines(s, pat, limit).length;
  let n = 0;
  for (let pos = 0; n < limit; n++) {
    const i = s.indexOf(text, pos);
    if (i < 0) break;
    const end = s.indexOf("\n", i + text.length);
    if (end < 0) return n + 1;
    pos = end + 1;
  }
  return n;
}

/** Lines holding `text` (a non-empty string without a newline), as `matchedLines` finds them by regex. */
export function plainLines(s: string, text: string, limit: number): LineSpan[] {
  const out: LineSpan[] = [];
  for (let pos = 0; out.length < limit; ) {
    const i = s.indexOf(text, pos);
    if (i < 0) break;
    const start = i === 0 ? 0 : s.lastIndexOf("\n", i - 1) + 1;
    let end = s.indexOf("\n", i + text.length);
    if (end < 0) end = s.length;
    out.push({ start, end });
    pos = end + 1;
  }
  return out;
}

/** Lines without a match (-v), at most `limit`. */
export function unmatchedLines(s: string, pat: CompiledPattern, limit: number, multiline = false): LineSpan[] {
  const hits = splitLines(s, matchedLines(s, pat, Infinity, multiline));
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

/** Spans cut into single lines. */
export function splitLines(s: string, spans: readonly LineSpan[]): LineSpan[] {
  const out: LineSpan[] = [];
  for (const sp of spans) {
    for (let start = sp.start; start <= sp.end; ) {
      let end = s.indexOf("\n", start);
      if (end < 0 || end > sp.end) end = sp.end;
      out.push({ start, end });
      start = end + 1;
    }
  }
  return out;
}

/**
 * The matches that start inside `span`, in order, empty ones too (ripgrep prints and replaces them), except
 * an empty match where the previous one ended, as Rust's regex skips it.
 */
export function matchesIn(s: string, span: LineSpan, pat: CompiledPattern): RegExpExecArray[] {
  const out: RegExpExecArray[] = [];
  eachMatch(s, span, pat, (m) => void out.push(m));
  return out;
}

/** How many matches `matchesIn` finds (ripgrep counts `x*` at every position of a line). */
export function countMatchesIn(s: string, span: LineSpan, pat: CompiledPattern): number {
  let n = 0;
  eachMatch(s, span, pat, () => void n++);
  return n;
}

function eachMatch(s: string, span: LineSpan, pat: CompiledPattern, f: (m: RegExpExecArray) => void): void {
  const re = pat.exact;
  let lastEnd = -1;
  for (let pos = span.start; pos <= span.end; ) {
    re.lastIndex = pos;
    let m = re.exec(s);
    if (!m || m.index > span.end) break;
    if (!pat.multiline && m.index + m[0].length > span.end) {
      // JavaScript's `\s` or `[^x]` ran past the line's end, where Rust's regex stops: match in the line alone.
      const line = s.slice(span.start, span.end);
      re.lastIndex = pos - span.start;
      m = re.exec(line);
      if (!m) break;
      m.index += span.start;
    }
    const len = m[0].length;
    pos = len > 0 ? m.index + len : m.index + ((s.codePointAt(m.index) ?? 0) > 0xffff ? 2 : 1);
    if (len === 0 && m.index === lastEnd) continue;
    lastEnd = m.index + len;
    if (pat.crlf && len > 1 && m[0].endsWith("\r")) m[0] = m[0].slice(0, -1);
    f(m);
  }
}
