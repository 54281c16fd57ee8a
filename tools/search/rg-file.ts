// Owns searching one file or stdin as ripgrep does: decoding (UTF-8 BOM dropped, UTF-16 with a BOM
// transcoded), binary files (what ripgrep prints of them, by rg-binary.ts's rules), --null-data, -b,
// --max-filesize, the output modes, and the counts --stats prints. Does not walk, sort or decide exit codes
// (rg-run.ts).
import { isAscii } from "node:buffer";
import { statSync } from "node:fs";
import type { RgOptions } from "./rg-flags.ts";
import { FileReader, shortReadEnds } from "./file-bytes.ts";
import { binaryMode, mappedStop, nulFrom, nulSeenFirst, passthruStop, searchedBeforeNul, streamStop, type BinaryMode, type BinaryStop } from "./rg-binary.ts";
import { emitAll, emitLines, type EmitOptions } from "./rg-emit.ts";
import type { JsonPrinter } from "./rg-json.ts";
import type { Printer } from "./rg-print.ts";
import type { CompiledPattern } from "./rg-regex.ts";
import { countMatchedLines, countMatchesIn, matchedLines, splitLines, unmatchedLines, type LineSpan } from "./rg-search.ts";

export interface SearchStats {
  matches: number;
  matchedLines: number;
  filesWithMatch: number;
  filesSearched: number;
  bytesSearched: number;
}

const isUtf16 = (buf: Buffer) => (buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff);

/** The file's text: UTF-16 with a BOM transcoded, a UTF-8 BOM dropped, invalid UTF-8 as U+FFFD. */
export function decode(buf: Buffer): string {
  if (isUtf16(buf)) return new TextDecoder(buf[0] === 0xff ? "utf-16le" : "utf-16be").decode(buf.subarray(2));
  if (isAscii(buf)) return buf.toString("latin1"); // one byte per char: fastest to build and scan
  const bom = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  return buf.toString("utf8", bom);
}

export class FileSearch {
  matched = false;
  errored = false;
  readonly stats: SearchStats = { matches: 0, matchedLines: 0, filesWithMatch: 0, filesSearched: 0, bytesSearched: 0 };
  private readonly reader = new FileReader();
  private readonly limit: number;
  private readonly countOnly: boolean;
  /** The required literals as bytes, encoded once rather than on every file. */
  private readonly literalBytes: readonly Buffer[] | undefined;

  constructor(
    private readonly o: RgOptions,
    private readonly pat: CompiledPattern | undefined,
    private p: Printer,
    private readonly warn: (line: string) => void,
    private readonly maxFileBytes: number,
    private readonly isDone: () => boolean,
    private readonly json?: JsonPrinter,
  ) {
    this.limit = o.maxCount ?? Infinity;
    // Plain -c needs only how many lines match, not where (nor the matches, unless --stats or --json count them).
    this.countOnly = o.mode === "count" && !o.onlyMatching && !o.invert && !o.multiline && !o.passthru && !o.stats && !json;
    this.literalBytes = pat?.literals?.map((l) => Buffer.from(l));
  }

  /** Prints through `p` from now on (a parallel worker starts each batch of files on a fresh printer). */
  usePrinter(p: Printer): void {
    this.p = p;
  }

  get done(): boolean {
    return this.isDone() || (this.o.quiet && this.matched && !this.o.stats);
  }

  file(path: string, display: string, explicit: boolean): void {
    if (this.o.maxFilesize !== undefined && sizeOf(path) > this.o.maxFilesize) return;
    if (this.o.mode === "files") {
      this.matched = true;
      if (!this.o.quiet) this.p.path(display);
      return;
    }
    // What the walk finds is a regular file, whose first short read is its end (see shortReadEnds).
    const regular = !explicit && shortReadEnds(path);
    const buf = this.reader.read(path, this.maxFileBytes, regular);
    if (typeof buf === "string") {
      this.errored = true;
      if (!this.o.noMessages) this.warn(`${display}: ${buf}`);
      return;
    }
    this.bytes(buf, display, explicit, this.o.mmap === true);
  }

  /** `mapped`: ripgrep would search it memory-mapped (NUL bytes then stay in the lines; see rg-binary.ts). */
  bytes(buf: Buffer, display: string, explicit: boolean, mapped = false): void {
    const o = this.o;
    if (o.nullData) buf = swapNulAndNewline(buf);
    const pat = this.pat!;
    this.stats.filesSearched++;
    const utf16 = isUtf16(buf);
    const lits = this.literalBytes;
    const noMatch = !utf16 && !o.invert && !o.passthru && this.cannotMatch(buf, lits);
    const checkNul = !o.text && !o.nullData && !utf16 && (!noMatch || o.mode === "files-without-match" || o.includeZero || o.stats);
    const nul = checkNul ? buf.indexOf(0) : -1;
    // -U with a pattern that may match a newline reads the whole file and checks it as a memory map.
    if (nul >= 0 && !o.json) return this.binaryFile(buf, display, explicit, mapped || pat.crossesLines === true, nul);
    if (nul >= 0 && !explicit && !o.binary) return this.quitUnprinted();
    if (noMatch && o.mode !== "files-without-match" && !o.includeZero) {
      if (this.limit > 0) this.stats.bytesSearched += buf.length;
      return; // nothing to print for a file that cannot match (most files of a large search)
    }
    let s = noMatch ? "" : decode(buf);
    const nulAt = nul >= 0 ? s.indexOf("\0") : -1; // in the text, where `nul` counts bytes
    if (nulAt >= 0) s = s.replaceAll("\0", "\n"); // ripgrep searches a binary file with NUL as a line end
    if (this.countOnly) {
      const n = noMatch || this.limit === 0 ? 0 : countMatchedLines(s, pat, this.limit);
      if (n < this.limit) this.stats.bytesSearched += utf16 ? Buffer.byteLength(s) : buf.length;
      return this.reportCount(display, n);
    }
    let spans = noMatch || this.limit === 0 ? [] : this.spans(s, pat);
    // ripgrep's line-by-line search under --passthru stops at a binary file's first NUL.
    if (o.passthru && nulAt >= 0) spans = spans.filter((sp) => sp.start < nulAt);
    // ripgrep counts the transcoded bytes, and none of a file -m stopped early.
    if (spans.length < this.limit || o.invert) this.stats.bytesSearched += utf16 ? Buffer.byteLength(s) : buf.length;
    this.report(s, spans, display, nul);
  }

  /** True when the file lacks what every match needs: a probe byte of each pattern, or all the required literals. */
  private cannotMatch(buf: Buffer, lits: readonly Buffer[] | undefined): boolean {
    const probes = this.pat!.probes;
    if (probes !== undefined) {
      let some = false; // plain loops: this runs once per file, mostly before any code is optimised
      for (let i = 0; i < probes.length && !some; i++) {
        const bytes = probes[i]!;
        let all = true;
        for (let j = 0; j < bytes.length && all; j++) all = buf.indexOf(bytes[j]!) >= 0;
        some = all;
      }
      if (!some) return true;
    }
    if (lits === undefined) return false;
    for (let i = 0; i < lits.length; i++) if (buf.indexOf(lits[i]!) >= 0) return false;
    return true;
  }

  /** ripgrep quit a file when it saw a NUL: unprinted, and without a match (so --files-without-match's status is a match). */
  private quitUnprinted(): void {
    if (this.o.mode === "files-without-match") this.matched = true;
  }

  /** A file with a NUL at byte `nul`, searched as ripgrep 13 does (rg-binary.ts): what it printed before it saw the NUL, and its message. */
  private binaryFile(buf: Buffer, display: string, explicit: boolean, mapped: boolean, nul: number): void {
    const o = this.o;
    const mode = binaryMode(o, explicit);
    const lines = o.mode === "lines" && !o.quiet; // -q, like -c and -l, prints no lines and stops at no context line
    const context = o.passthru ? 0 : Math.max(o.before, o.after);
    if (!mapped) {
      const searched = searchedBeforeNul(buf, nul, context);
      if (mode === "quit") return this.searchPrefix(buf.subarray(0, searched), display, nul, lines || this.quitsEarly());
      const s = decode(buf).replaceAll("\0", "\n");
      const spans = this.spans(s, this.pat!);
      if (!lines) return this.report(s, spans, display, -1);
      const cut = decode(buf.subarray(0, searched)).length;
      // -m stopped it before the read that brings the NUL: ripgrep never saw it.
      if (spans.filter((sp) => sp.start < cut).length >= this.limit) return this.reportBinary(s, spans, display, undefined, nul, "convert");
      const stop = (o.passthru ? passthruStop(s, spans, cut) : streamStop(s, spans, cut, o.before, o.after)) ?? { cut, line: cut, dropSpans: true, counts: false, gap: false };
      return this.reportBinary(s, spans, display, stop, nul, "convert");
    }
    const s = decode(buf);
    const spans = this.spans(s, this.pat!);
    const atStart = nulSeenFirst(nul);
    if (mode === "quit" && atStart) return this.quitUnprinted();
    if (!lines) {
      // Counting and listing modes print unless quit detection stopped on a matched line holding a NUL.
      const stop = mode === "quit" ? mappedStop(s, this.quitsEarly() ? spans.slice(0, 1) : spans, 0, 0, false) : undefined;
      return stop ? this.quitUnprinted() : this.report(s, spans, display, -1);
    }
    const found = o.passthru
      ? passthruStop(s, spans, atStart && mode === "convert" ? 0 : s.lastIndexOf("\n", s.indexOf("\0")) + 1)
      : mappedStop(s, spans, o.before, o.after, atStart && mode === "convert");
    if (!found) return this.report(s, spans, display, -1);
    const stop = mode === "quit" ? { ...found, counts: false } : found; // quit stops before the line counts
    const offset = atStart && mode === "convert" ? nul : nulFrom(s, stop.line, s.length > 0 && buf[0] === 0xef && buf[1] === 0xbb ? 3 : 0);
    this.reportBinary(s, spans, display, stop, offset, mode);
  }

  /** -l and -q stop at the first match (unless --stats counts them all); --files-without-match reads on. */
  private quitsEarly(): boolean {
    const o = this.o;
    return (o.mode === "files-with-matches" || o.quiet) && !o.stats;
  }

  /**
   * The part of a walked file ripgrep searched before it saw the NUL at `nul` and quit; `shows`: what it
   * found there is printed (else only -m's last match before the NUL, which ends the search first, is).
   */
  private searchPrefix(prefix: Buffer, display: string, nul: number, shows: boolean): void {
    const s = decode(prefix);
    const spans = this.spans(s, this.pat!);
    if (spans.length === 0 && this.o.passthru && shows) this.passAll(s, display);
    if (spans.length === 0 || (!shows && spans.length < this.limit)) return this.quitUnprinted();
    if (this.o.mode !== "lines") return this.report(s, spans, display, -1);
    this.reportBinary(s, spans, display, spans.length >= this.limit ? undefined : { cut: s.length, line: s.length, dropSpans: true, counts: false, gap: false }, nul, "quit");
  }

  /** Lines mode on a binary file: the lines before `stop`, then ripgrep's message when any line matched. */
  private reportBinary(s: string, spans: LineSpan[], display: string, stop: BinaryStop | undefined, offset: number, mode: BinaryMode): void {
    const shown = stop ? spans.filter((sp) => sp.start < stop.cut) : spans;
    const count = shown.length + (stop?.counts ? 1 : 0);
    // --passthru prints the lines before the stop as context even without a match among them.
    if (this.o.passthru && shown.length === 0 && !this.o.quiet) this.passAll(stop ? s.slice(0, stop.cut) : s, display);
    if (count === 0) return;
    this.matched = true;
    this.stats.filesWithMatch++;
    this.stats.matchedLines += shown.length;
    if (this.o.quiet) return;
    if (shown.length > 0 || stop) {
      const cut = stop && { at: stop.cut, dropSpans: stop.dropSpans, gap: stop.gap };
      if (this.o.byteOffset) this.p.byteAt = byteOffsets(s);
      emitLines(s, spans, display, this.pat!, { ...this.emitOptions(shown.length >= this.limit), cut }, this.p);
    }
    if (stop) this.p.binaryMatch(display, offset, mode === "quit");
  }

  /** -c as `report` prints it, from the number of matching lines alone. */
  private reportCount(display: string, n: number): void {
    if (n === 0) {
      if (this.o.includeZero && !this.o.quiet) this.p.count(display, 0);
      return;
    }
    this.matched = true;
    this.stats.filesWithMatch++;
    this.stats.matchedLines += n;
    if (!this.o.quiet) this.p.count(display, n);
  }

  private spans(s: string, pat: CompiledPattern): LineSpan[] {
    const o = this.o;
    const one = o.mode === "files-with-matches" || o.mode === "files-without-match" || (o.quiet && !o.stats);
    const want = one ? 1 : this.limit;
    // ripgrep searches line by line under -U too when no pattern can match a newline.
    const multiline = o.multiline && pat.crossesLines === true;
    return o.invert ? unmatchedLines(s, pat, want, multiline) : matchedLines(s, pat, want, multiline);
  }

  private report(s: string, spans: LineSpan[], display: string, nul: number): void {
    const o = this.o;
    const countMatches = o.mode === "count-matches" || (o.mode === "count" && o.onlyMatching);
    const matches = countMatches || o.stats || this.json || this.pat!.crossesLines ? this.countMatches(s, spans) : 0;
    if (o.mode === "files-without-match") {
      if (spans.length > 0) return this.tally(spans, s, matches);
      this.matched = true;
      if (!o.quiet) this.p.path(display);
      return;
    }
    if (spans.length === 0) {
      if (o.passthru && o.mode === "lines" && !o.quiet && nul < 0) this.passAll(s, display);
      if (o.includeZero && !o.quiet && (o.mode === "count" || o.mode === "count-matches")) this.p.count(display, 0);
      return;
    }
    this.matched = true;
    this.tally(spans, s, matches);
    if (o.quiet) return;
    if (o.mode === "files-with-matches") this.p.path(display);
    else if (countMatches) this.p.count(display, matches);
    // -U with a pattern that may match a newline counts matches, as ripgrep's multi-line search does.
    else if (o.mode === "count") this.p.count(display, this.pat!.crossesLines ? matches : spans.length);
    else if (nul >= 0) this.p.binaryMatch(display, nul);
    else if (this.json) {
      this.json.begin(display, s, this.pat!);
      emitLines(s, spans, display, this.pat!, { ...this.emitOptions(spans.length >= this.limit), onlyMatching: false }, this.json);
      this.json.end({ matches, matchedLines: spans.length, bytes: Buffer.byteLength(s) });
    } else {
      if (o.byteOffset) this.p.byteAt = byteOffsets(s);
      emitLines(s, spans, display, this.pat!, this.emitOptions(spans.length >= this.limit), this.p);
    }
  }

  /** --passthru on a file without a match: all of it, as context. */
  private passAll(s: string, display: string): void {
    if (this.o.byteOffset) this.p.byteAt = byteOffsets(s);
    if (!this.json) return emitAll(s, display, this.p);
    this.json.begin(display, s, this.pat!);
    emitAll(s, display, this.json);
    this.json.end({ matches: 0, matchedLines: 0, bytes: Buffer.byteLength(s) });
  }

  /** `atLimit`: -m stopped the search, which ends --passthru at the last match. */
  private emitOptions(atLimit: boolean): EmitOptions {
    const o = this.o;
    const ctx = (n: number) => (o.passthru ? Infinity : n);
    const afterLast = o.passthru && atLimit ? 0 : ctx(o.after);
    return {
      before: ctx(o.before), after: ctx(o.after), afterLast, limitReached: atLimit && !o.invert,
      onlyMatching: o.onlyMatching && !o.invert, // ripgrep prints -v -o lines whole
      matchesOfContext: o.onlyMatching && o.invert,
      replace: o.replace, column: o.column === true, vimgrep: o.vimgrep, crlf: o.crlf, locate: o.stats && o.maxColumns !== undefined,
    };
  }

  private countMatches(s: string, spans: readonly LineSpan[]): number {
    if (this.o.invert) return spans.length;
    let n = 0;
    for (const sp of spans) n += countMatchesIn(s, sp, this.pat!);
    return n;
  }

  private tally(spans: readonly LineSpan[], s: string, matches: number): void {
    this.stats.filesWithMatch++;
    this.stats.matches += matches;
    this.stats.matchedLines += this.o.multiline ? splitLines(s, spans).length : spans.length;
  }
}

/** --null-data searches the text with NUL and newline swapped, so that its lines are the NUL-ended records. */
function swapNulAndNewline(buf: Buffer): Buffer {
  const out = Buffer.from(buf);
  for (let i = 0; i < out.length; i++) {
    if (out[i] === 0) out[i] = 10;
    else if (out[i] === 10) out[i] = 0;
  }
  return out;
}

/** -b: byte offsets of positions in the text, counted forward from the last one asked for. */
function byteOffsets(s: string): (at: number) => number {
  if (/^[\x00-\x7f]*$/.test(s)) return (at) => at;
  let lastAt = 0;
  let lastBytes = 0;
  return (at) => {
    if (at < lastAt) [lastAt, lastBytes] = [0, 0];
    lastBytes += Buffer.byteLength(s.slice(lastAt, at));
    lastAt = at;
    return lastBytes;
  };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // the read reports the error
  }
}
