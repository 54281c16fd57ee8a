// Owns ripgrep's non-terminal output format: `path:line:text` for matches, `path-line-text` for context,
// `--` between context groups (across files too), `--heading` blocks, and the -l/-c/--files lines.
// Does not decide what matches (rg-search.ts); writes only through the capped ShimOutput.
import type { ShimOutput } from "./shim-output.ts";

export interface PrintOptions {
  readonly withFilename: boolean;
  readonly lineNumber: boolean;
  readonly heading: boolean;
  readonly contextEnabled: boolean;
}

export class Printer {
  private printedGroup = false;
  private headingFor: string | undefined;
  private anyHeading = false;

  constructor(
    private readonly out: ShimOutput,
    private readonly o: PrintOptions,
  ) {}

  get full(): boolean {
    return this.out.capped;
  }

  /** Starts a group of adjacent lines of `display`: its heading, or `--` after an earlier group. */
  group(display: string): void {
    if (this.o.withFilename && this.o.heading) this.head(display);
    if (this.o.contextEnabled && this.printedGroup) this.out.line("--");
    this.printedGroup = true;
  }

  /** A match (`sep` ":") or context (`sep` "-") line. */
  line(display: string, lineNo: number, sep: ":" | "-", text: string): boolean {
    let prefix = "";
    if (this.o.withFilename && !this.o.heading) prefix = display + sep;
    if (this.o.lineNumber) prefix += lineNo + sep;
    return this.out.line(prefix + text);
  }

  path(display: string): boolean {
    return this.out.line(display);
  }

  count(display: string, n: number): boolean {
    return this.out.line(this.o.withFilename ? `${display}:${n}` : String(n));
  }

  binaryMatch(display: string, offset: number): boolean {
    const prefix = this.o.withFilename ? `${display}: ` : "";
    return this.out.line(`${prefix}binary file matches (found "\\0" byte around offset ${offset})`);
  }

  private head(display: string): void {
    if (this.headingFor === display) return;
    if (this.anyHeading) this.out.line("");
    this.out.line(display);
    this.headingFor = display;
    this.anyHeading = true;
    this.printedGroup = false; // ripgrep separates files by the blank line alone
  }
}
