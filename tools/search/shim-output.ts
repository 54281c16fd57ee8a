// Owns the output cap of the rg and tree shims: whole lines until SHIM_OUTPUT_LINES or SHIM_OUTPUT_BYTES
// would be passed, then one marker line saying so and how to narrow. Does not know where bytes go.
import { formatBytes } from "../../core/text-bounds.ts";

export interface OutputCap {
  readonly maxBytes: number;
  readonly maxLines: number;
}

const FLUSH_AT = 64 * 1024;

export class ShimOutput {
  private parts: string[] = [];
  /** `parts` before this index have their bytes in `bytes`; the rest are counted when flushed. */
  private counted = 0;
  /** Exact bytes of the lines written so far, but for those of `parts` not yet counted. */
  private bytes = 0;
  /** At most this many bytes in the uncounted `parts`: a UTF-16 unit takes at most 3 bytes in UTF-8. */
  private uncountedMost = 0;
  /** UTF-16 units held, for when to flush. */
  private pending = 0;
  private lines = 0;
  private reason: string | undefined;

  constructor(
    private readonly emit: (chunk: string) => void,
    private readonly cap: OutputCap,
    /** e.g. `rg`; the marker reads `[rg: output capped at …; HINT]`. */
    private readonly name: string,
    private readonly hint: string,
  ) {}

  get capped(): boolean {
    return this.reason !== undefined;
  }

  /** Bytes written so far (before the marker). */
  get written(): number {
    this.count();
    return this.bytes;
  }

  /**
   * Writes `text` and a newline (or `end`); false (and nothing written) once the cap is reached. Far below
   * the byte cap a line's size is counted with the rest of its chunk, at the flush (one count, not one a line).
   */
  line(text: string, end = "\n"): boolean {
    if (this.reason) return false;
    if (this.lines + 1 > this.cap.maxLines) {
      this.reason = `${this.cap.maxLines} lines`;
      return false;
    }
    const units = text.length + end.length;
    if (this.bytes + this.uncountedMost + 3 * units <= this.cap.maxBytes) {
      this.parts.push(text, end);
      this.uncountedMost += 3 * units;
    } else {
      this.count();
      const size = Buffer.byteLength(text) + end.length;
      if (this.bytes + size > this.cap.maxBytes) {
        this.reason = `${formatBytes(this.cap.maxBytes)}`;
        return false;
      }
      this.bytes += size;
      this.parts.push(text, end);
      this.counted = this.parts.length;
    }
    this.lines++;
    this.pending += units;
    if (this.pending >= FLUSH_AT) this.flush();
    return true;
  }

  /** Flushes what is held and, when capped, the marker line. */
  finish(): void {
    this.count();
    if (this.reason) {
      this.parts.push(`[${this.name}: output capped at ${this.reason}; ${this.hint}]\n`);
      this.counted = this.parts.length; // the marker is not counted as written
    }
    this.flush();
  }

  /** Adds the bytes of the held parts not yet counted to `bytes`. */
  private count(): void {
    if (this.counted === this.parts.length) return;
    this.bytes += Buffer.byteLength(this.parts.slice(this.counted).join(""));
    this.counted = this.parts.length;
    this.uncountedMost = 0;
  }

  private flush(): void {
    if (this.parts.length === 0) return;
    const text = this.parts.join("");
    if (this.counted === 0) {
      // No part is counted yet: the chunk's bytes are the uncounted ones, measured on the one join.
      this.bytes += Buffer.byteLength(text);
      this.uncountedMost = 0;
    } else this.count();
    this.emit(text);
    this.parts = [];
    this.counted = 0;
    this.pending = 0;
  }
}
