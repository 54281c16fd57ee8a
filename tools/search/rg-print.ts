// Owns ripgrep's non-terminal output format: `path:line:col:text` for matches, `path-line-text` for context
// (separators configurable, `--null` after paths, `--path-separator`), the context separator between groups
// (across files too), `--heading` blocks, `-M` long-line omission, and the -l/-c/--files lines.
// Does not decide what matches (rg-search.ts, rg-emit.ts); writes only through the capped ShimOutput.
import type { RgOptions } from "./rg-flags.ts";
import type { ShimOutput } from "./shim-output.ts";

export interface PrintOptions {
  readonly withFilename: boolean;
  readonly lineNumber: boolean;
  readonly column: boolean;
  readonly heading: boolean;
  readonly contextEnabled: boolean;
  /** undefined: no separator between context groups (--no-context-separator). */
  readonly contextSep?: string;
  readonly matchSep?: string;
  readonly ctxSep?: string;
  readonly nullAfterPath?: boolean;
  readonly pathSep?: string;
  readonly maxColumns?: number;
  readonly maxColumnsPreview?: boolean;
  readonly trim?: boolean;
  /** --crlf: lines ripgrep ends itself (counts, paths, -o) end in `\r\n`. */
  readonly crlf?: boolean;
  /** -b: the byte offset of each line (of each match under -o) after the column. */
  readonly byteOffset?: boolean;
  /** ripgrep locates each match of a printed line (--column, -r, -o, --vimgrep, --stats): -M then counts them. */
  readonly granular?: boolean;
  readonly onlyMatching?: boolean;
  /** --null-data: the text's lines end in NUL, which it searched with NUL and newline swapped (rg-file.ts). */
  readonly nullData?: boolean;
}

/** The print options rg's flags ask for. */
export function printOptionsFor(o: RgOptions, withFilename: boolean): PrintOptions {
  return {
    withFilename, lineNumber: o.lineNumber ?? (o.column === true || o.vimgrep), column: o.column ?? o.vimgrep, heading: o.heading,
    contextEnabled: (o.before > 0 || o.after > 0) && !o.passthru, // passthru prints no separators
    contextSep: o.contextSep, matchSep: o.fieldMatchSep, ctxSep: o.fieldContextSep, nullAfterPath: o.nullAfterPath,
    pathSep: o.pathSep, maxColumns: o.maxColumns, maxColumnsPreview: o.maxColumnsPreview, crlf: o.crlf, trim: o.trim,
    byteOffset: o.byteOffset, nullData: o.nullData,
    granular: o.column === true || o.vimgrep || o.replace !== undefined || o.onlyMatching || o.stats, onlyMatching: o.onlyMatching,
  };
}

export type LineKind = "match" | "context";

/**
 * What prints a file's lines: the plain Printer or the --json one. `at` is the line's index in the text;
 * `matches`, where the matches start in `text` (when they were located).
 */
export interface LineSink {
  readonly full: boolean;
  group(display: string): void;
  line(display: string, lineNo: number, kind: LineKind, text: string, column?: number, terminated?: boolean, at?: number, matches?: readonly number[]): boolean;
}

export class Printer implements LineSink {
  private printedGroup = false;
  private headingFor: string | undefined;
  private anyHeading = false;
  private readonly matchSep: string;
  private readonly ctxSep: string;
  private readonly eol: string;
  /** -b: the byte offset in the file of a position in the text being printed (set for each file). */
  byteAt: (at: number) => number = (at) => at;

  constructor(
    private readonly out: ShimOutput,
    private readonly o: PrintOptions,
  ) {
    this.matchSep = o.matchSep ?? ":";
    this.ctxSep = o.ctxSep ?? "-";
    this.eol = o.nullData ? "\0" : o.crlf ? "\r\n" : "\n";
  }

  get full(): boolean {
    return this.out.capped;
  }

  /** Starts a group of adjacent lines of `display`: its heading, or the separator after an earlier group. */
  group(display: string): void {
    if (this.o.withFilename && this.o.heading) this.head(display);
    if (this.o.contextEnabled && this.printedGroup && this.o.contextSep !== undefined) this.out.line(this.o.contextSep, this.eol);
    this.printedGroup = true;
  }

  /** A match or context line; `column` is 1-based in bytes; `terminated`: a newline follows it in the file. */
  line(display: string, lineNo: number, kind: LineKind, text: string, column?: number, terminated = true, at?: number, matches?: readonly number[]): boolean {
    const sep = kind === "match" ? this.matchSep : this.ctxSep;
    let prefix = "";
    if (this.o.withFilename && !this.o.heading) prefix = this.o.nullAfterPath ? this.shown(display) + "\0" : this.shown(display) + sep;
    if (this.o.lineNumber) prefix += lineNo + sep;
    if (this.o.column && column !== undefined) prefix += column + sep;
    if (this.o.byteOffset) prefix += this.byteAt(at ?? 0) + sep;
    let shown = this.o.trim ? text.replace(/^[\t\n\v\f\r ]+/, "") : text;
    if (this.o.nullData) shown = shown.replaceAll("\0", "\n");
    return this.out.line(prefix + this.clip(shown, kind, terminated, matches), terminated && !this.o.nullData ? "\n" : this.eol);
  }

  /** A path alone (-l, --files-without-match, --files). */
  path(display: string): boolean {
    return this.out.line(this.shown(display), this.o.nullAfterPath ? "\0" : this.eol);
  }

  count(display: string, n: number): boolean {
    if (!this.o.withFilename) return this.out.line(String(n), this.eol);
    return this.out.line(this.shown(display) + (this.o.nullAfterPath ? "\0" : this.matchSep) + n, this.eol);
  }

  /** ripgrep's line after a binary file's output: `quit` for a walked file it stopped searching. */
  binaryMatch(display: string, offset: number, quit = false): boolean {
    const prefix = this.o.withFilename ? `${this.shown(display)}: ` : "";
    const what = quit ? "WARNING: stopped searching binary file after match" : "binary file matches";
    this.printedGroup = true; // a later file's context group is separated from it
    return this.out.line(`${prefix}${what} (found "\\0" byte around offset ${offset})`);
  }

  /** A path as printed: `--path-separator` replaces `/`. */
  shown(display: string): string {
    const sep = this.o.pathSep;
    return sep === undefined || sep === "/" ? display : display.replaceAll("/", sep);
  }

  /** -M: ripgrep measures the line with its terminator. */
  private clip(text: string, kind: LineKind, terminated: boolean, matches: readonly number[] | undefined): string {
    const max = this.o.maxColumns;
    if (max === undefined || Buffer.byteLength(text) + (terminated ? 1 : 0) <= max) return text;
    // ripgrep counts the matches only when it located them (see `granular`), and never on context lines.
    const located = this.o.granular && kind === "match" ? (matches ?? []) : [];
    if (this.o.maxColumnsPreview) {
      const end = previewEnd(text, max);
      if (located.length === 0) return `${text.slice(0, end)} [... omitted end of long line]`;
      const more = located.filter((m) => m >= end).length;
      return `${text.slice(0, end)} [... ${more} more ${more === 1 ? "match" : "matches"}]`;
    }
    if (kind === "context") return "[Omitted long context line]";
    // -o prints each match as its own line, without the matches ripgrep counts.
    return this.o.granular && !this.o.onlyMatching ? `[Omitted long line with ${located.length} matches]` : "[Omitted long matching line]";
  }

  private head(display: string): void {
    if (this.headingFor === display) return;
    if (this.anyHeading) this.out.line("", this.eol);
    this.out.line(this.shown(display), this.o.nullAfterPath ? "\0" : this.eol);
    this.headingFor = display;
    this.anyHeading = true;
    this.printedGroup = false; // ripgrep separates files by the blank line alone
  }
}

/** Where ripgrep's -M preview of `text` ends: after its first `max` characters (grapheme clusters). */
function previewEnd(text: string, max: number): number {
  let n = 0;
  for (const { index } of new Intl.Segmenter().segment(text)) {
    if (n++ === max) return index;
  }
  return text.length;
}
