// Owns reading files for the shims with one reused buffer (no allocation per file): whole files for
// rg, and newline counting in chunks for tree. Returns error text instead of throwing.
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { newlineCounter, type NewlineCounter } from "./newline-count.ts";

const CHUNK = 1 << 20;
/** A file with a NUL byte in this many first bytes is binary. */
const SNIFF_BYTES = 8192;
/** The numeric flag: a string ("r") is parsed again on every open. */
const READ_ONLY = constants.O_RDONLY;

/** ripgrep's wording of a file system error. */
export function errorText(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === "ENOENT") return "No such file or directory (os error 2)";
  if (e?.code === "EACCES") return "Permission denied (os error 13)";
  if (e?.code === "EISDIR") return "Is a directory (os error 21)";
  return e instanceof Error ? e.message : String(err);
}

/**
 * Whether a read shorter than asked for ends a regular file the walk found: so it does, except under /proc
 * and /sys, whose files come a piece at a time.
 */
export function shortReadEnds(path: string): boolean {
  return !path.startsWith("/proc/") && !path.startsWith("/sys/");
}

/** A file's lines, or "binary" (a NUL byte in its first 8 KiB), or why it could not be read. */
export type LineCount = { lines: number; bytes: number; partial: boolean } | "binary" | string;

export class FileReader {
  private buf = Buffer.allocUnsafe(CHUNK);
  /** countLines reads into the counter's own buffer (in WebAssembly memory), made at its first call. */
  private counter: NewlineCounter | undefined;
  /** The counter buffer's first SNIFF_BYTES: one view searched for a NUL in every file, none made per file. */
  private head: Buffer | undefined;

  /**
   * The whole file as a view that stays valid until the next call, or why it could not be read.
   * `regular`: the walk found a regular file, where a read shorter than asked for ends the file, so a
   * file smaller than the buffer costs one read and no fstat.
   */
  read(path: string, maxBytes: number, regular = false): Buffer | string {
    let fd: number;
    try {
      fd = openSync(path, READ_ONLY);
    } catch (err) {
      return errorText(err);
    }
    try {
      let n = 0;
      if (regular) {
        n = readSync(fd, this.buf, 0, this.buf.length, null);
        if (n < this.buf.length) return n > maxBytes ? `larger than ${maxBytes} bytes, skipped` : this.buf.subarray(0, n);
      }
      const size = fstatSync(fd).size;
      if (size > maxBytes) return `larger than ${maxBytes} bytes, skipped`;
      if (size + 1 > this.buf.length) {
        const bigger = Buffer.allocUnsafe(size + CHUNK);
        this.buf.copy(bigger, 0, 0, n);
        this.buf = bigger;
      }
      for (;;) {
        if (n === this.buf.length) {
          if (n >= maxBytes) return `larger than ${maxBytes} bytes, skipped`;
          const bigger = Buffer.allocUnsafe(this.buf.length * 2);
          this.buf.copy(bigger, 0, 0, n);
          this.buf = bigger;
        }
        const r = readSync(fd, this.buf, n, this.buf.length - n, null);
        if (r === 0) break;
        n += r;
        if (n === size) break; // saves the read that would only report the end (sizes of /proc files are 0)
      }
      return this.buf.subarray(0, n);
    } catch (err) {
      return errorText(err);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Lines in the file, or "binary" (a NUL byte in the first SNIFF_BYTES), or why it could not be read.
   * `stop()` is asked between chunks; a count it cut short is marked partial. `regular`: as for `read`,
   * a short read ends the file (a small file costs one read).
   */
  countLines(path: string, stop?: () => boolean, regular = false): LineCount {
    let fd: number;
    try {
      fd = openSync(path, READ_ONLY);
    } catch (err) {
      return errorText(err);
    }
    try {
      const counter = (this.counter ??= newlineCounter(CHUNK));
      const buf = counter.buf;
      const head = (this.head ??= buf.subarray(0, SNIFF_BYTES));
      let lines = 0;
      let bytes = 0;
      let last = 10;
      let partial = false;
      for (;;) {
        if (bytes > 0 && stop?.()) {
          partial = true;
          break;
        }
        const r = readSync(fd, buf, 0, CHUNK, null);
        if (r === 0) break;
        if (bytes === 0) {
          if (r < SNIFF_BYTES) buf.fill(1, r, SNIFF_BYTES); // what an earlier file left there is not this one's
          if (head.indexOf(0) >= 0) return "binary";
        }
        bytes += r;
        lines += counter.count(r);
        last = buf[r - 1]!;
        if (regular && r < CHUNK) break;
      }
      // A last line without its newline still counts, as an editor shows it.
      return { lines: lines + (!partial && last !== 10 ? 1 : 0), bytes, partial };
    } catch (err) {
      return errorText(err);
    } finally {
      closeSync(fd);
    }
  }
}
