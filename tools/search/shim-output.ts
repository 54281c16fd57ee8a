// Owns the output cap of the rg and tree shims: whole lines until SHIM_OUTPUT_LINES or SHIM_OUTPUT_BYTES
// would be passed, then one marker line saying so and how to narrow. Does not know where bytes go.
import { formatBytes } from "../../core/text-bounds.ts";
import { belowTopTier } from "./jit-tier.ts";

export interface OutputCap {
  readonly maxBytes: number;
  readonly maxLines: number;
}

const FLUSH_AT = 64 * 1024;

export class ShimOutput {
  private parts: string[] = [];
  private pending = 0;
  private bytes = 0;
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
    return this.bytes;
  }

  /** Writes `text` and a newline (or `end`); false (and nothing written) once the cap is reached. */
  line(text: string, end = "\n"): boolean {
    if (this.reason) return false;
    const size = Buffer.byteLength(text) + end.length;
    if (this.lines + 1 > this.cap.maxLines) this.reason = `${this.cap.maxLines} lines`;
    else if (this.bytes + size > this.cap.maxBytes) this.reason = `${formatBytes(this.cap.maxBytes)}`;
    if (this.reason) return false;
    this.lines++;
    this.bytes += size;
    this.parts.push(text, end);
    this.pending += size;
    if (this.pending >= FLUSH_AT) this.flush();
    return true;
  }

  /** Flushes what is held and, when capped, the marker line. */
  finish(): void {
    if (this.reason) this.parts.push(`[${this.name}: output capped at ${this.reason}; ${this.hint}]\n`);
    this.flush();
  }

  private flush(): void {
    if (this.parts.length === 0) return;
    this.emit(this.parts.join(""));
    this.parts = [];
    this.pending = 0;
  }
}

belowTopTier(ShimOutput.prototype.line); // once per printed line (every path of --files)
