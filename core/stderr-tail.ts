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
      this.#line(clampBytes(this.#partial, this.maxBytes, " […]"));
      this.#partial = "";
    }
  }

  end(): void {
    if (this.#partial !== "") this.#line(this.#partial);
    this.#partial = "";
  }

  lines(): string[] {
    const kept = this.#kept.split("\n").filter((l) => l !== "");
    return this.#partial === "" ? kept : [...kept, this.#partial];
  }

  #line(line: string): void {
    this.emit(line);
    this.#kept = tailBytes(this.#kept + line + "\n", this.maxBytes);
  }
}
