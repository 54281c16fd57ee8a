// Owns reading a child's stderr for people: split into lines (each handed on, e.g. prefixed to our
// stderr) and a bounded tail of the last lines kept for the error message that explains a failure.
// A leaf module: byte cuts come from text-bounds.ts; it does not read streams itself.
import { clampBytes, tailBytes, utf8Length } from "./text-bounds.ts";

/** Splits text into lines for `emit` and keeps the last `maxBytes` of them; a longer line is cut there. */
export class StderrTail {
  #partial = "";
  #kept = "";

  constructor(
    private readonly maxBytes: number,
    private readonly emit: (line: string) => void,
  ) {}

  push(text: string): void {
    this.#partial += text;
    let nl: number;
    while ((nl = this.#partial.indexOf("\n")) >= 0) {
      this.#line(this.#partial.slice(0, nl).replace(/\r$/, ""));
      this.#partial = this.#partial.slice(nl + 1);
    }
    if (utf8Length(this.#partial) > this.maxBytes) {
      // Shown cut at the bound; kept by its end, which is what explains a failure.
      this.emit(clampBytes(this.#partial, this.maxBytes, " […]"));
      this.#kept = tailBytes(this.#kept + this.#partial + "\n", this.maxBytes);
      this.#partial = "";
    }
  }

  end(): void {
    if (this.#partial !== "") this.#line(this.#partial);
    this.#partial = "";
  }

  /** The last `maxBytes` of what was written (the oldest kept line may start mid-way), in lines. */
  lines(): string[] {
    return tailBytes(this.#kept + this.#partial, this.maxBytes)
      .split("\n")
      .filter((l) => l !== "");
  }

  #line(line: string): void {
    this.emit(line);
    this.#kept = tailBytes(this.#kept + line + "\n", this.maxBytes);
  }
}
