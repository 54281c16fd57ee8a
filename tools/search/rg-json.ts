// Owns ripgrep's --json output: `begin`, `match` (with `submatches`), `context` and `end` messages per file
// with a match, and the closing `summary`, in ripgrep's field order. Does not decide which lines print
// (rg-emit.ts drives it through the same calls as the plain printer).
import type { LineKind, LineSink } from "./rg-print.ts";
import type { CompiledPattern } from "./rg-regex.ts";
import { matchesIn } from "./rg-search.ts";
import type { ShimOutput } from "./shim-output.ts";

interface FileState {
  display: string;
  s: string;
  pat: CompiledPattern;
  started: number;
  printed: number;
  /** Byte offset of char index `pos` (lines arrive in order, so it is counted once). */
  pos: number;
  bytes: number;
}

function elapsed(ms: number, sorted = false) {
  const nanos = Math.round(ms * 1e6);
  const [secs, sub, human] = [Math.floor(nanos / 1e9), nanos % 1e9, `${(ms / 1000).toFixed(6)}s`];
  return sorted ? { human, nanos: sub, secs } : { secs, nanos: sub, human }; // the summary's keys are sorted
}

export class JsonPrinter implements LineSink {
  private file: FileState | undefined;
  /** ripgrep's summary adds up the files that printed an `end` message only. */
  private readonly total = { printed: 0, bytes: 0, matchedLines: 0, matches: 0, searches: 0, withMatch: 0, ms: 0 };

  constructor(private readonly out: ShimOutput) {}

  get full(): boolean {
    return this.out.capped;
  }

  /** A file with at least one line to print; its `begin` message. */
  begin(display: string, s: string, pat: CompiledPattern): void {
    this.file = { display, s, pat, started: performance.now(), printed: 0, pos: 0, bytes: 0 };
    this.emit({ type: "begin", data: { path: { text: display } } });
  }

  group(): void {}

  line(display: string, lineNo: number, kind: LineKind, _text: string, _column?: number, _own?: boolean, at = 0): boolean {
    const f = this.file!;
    const nl = f.s.indexOf("\n", at);
    const end = nl < 0 ? f.s.length : nl;
    const text = f.s.slice(at, nl < 0 ? end : end + 1);
    f.bytes += Buffer.byteLength(f.s.slice(f.pos, at));
    f.pos = at;
    const submatches =
      kind === "match"
        ? matchesIn(f.s, { start: at, end }, f.pat).map((m) => {
            const start = Buffer.byteLength(f.s.slice(at, m.index));
            return { match: { text: m[0] }, start, end: start + Buffer.byteLength(m[0]) };
          })
        : [];
    return this.emit({
      type: kind,
      data: { path: { text: display }, lines: { text }, line_number: lineNo, absolute_offset: f.bytes, submatches },
    });
  }

  /** The file's `end` message with its own counts. */
  end(st: { matches: number; matchedLines: number; bytes: number }): void {
    const f = this.file!;
    const ms = performance.now() - f.started;
    const t = this.total;
    const hit = st.matchedLines > 0 ? 1 : 0; // --passthru prints files without a match too
    [t.printed, t.bytes, t.matchedLines, t.matches, t.searches, t.withMatch, t.ms] =
      [t.printed + f.printed, t.bytes + st.bytes, t.matchedLines + st.matchedLines, t.matches + st.matches, t.searches + 1, t.withMatch + hit, t.ms + ms];
    const stats = {
      elapsed: elapsed(ms), searches: 1, searches_with_match: hit, bytes_searched: st.bytes,
      bytes_printed: f.printed, matched_lines: st.matchedLines, matches: st.matches,
    };
    this.out.line(JSON.stringify({ type: "end", data: { path: { text: f.display }, binary_offset: null, stats } }));
    this.file = undefined;
  }

  summary(totalMs: number): void {
    const t = this.total;
    const stats = {
      bytes_printed: t.printed, bytes_searched: t.bytes, elapsed: elapsed(t.ms, true), matched_lines: t.matchedLines,
      matches: t.matches, searches: t.searches, searches_with_match: t.withMatch,
    };
    this.out.line(JSON.stringify({ data: { elapsed_total: elapsed(totalMs, true), stats }, type: "summary" }));
  }

  private emit(msg: unknown): boolean {
    const line = JSON.stringify(msg);
    if (this.file) this.file.printed += Buffer.byteLength(line) + 1;
    return this.out.line(line);
  }
}
