// Owns one built-in rg run: which paths are searched and how they print (ripgrep's rules for explicit
// files, directories, stdin and `./`), binary files, the output modes and the exit code (0 match, 1 none,
// 2 error). Does not parse arguments (rg-args.ts) nor own the process (cli/rg.ts).
import { isAscii } from "node:buffer";
import { statSync } from "node:fs";
import { resolve } from "node:path";
import ignore from "ignore";
import type { Verdict } from "./ignore-rules.ts";
import type { RgOptions } from "./rg-args.ts";
import { FileReader } from "./file-bytes.ts";
import { Printer } from "./rg-print.ts";
import { compilePatterns, type CompiledPattern } from "./rg-regex.ts";
import { emitLines, matchedLines, unmatchedLines } from "./rg-search.ts";
import { typeList, typeMatcher } from "./rg-types.ts";
import type { ShimOutput } from "./shim-output.ts";
import { rootHandle, walkFiles, type WalkOptions } from "./walk.ts";

export interface RgEnv {
  readonly cwd: string;
  /** Standard input's bytes when it is a pipe or file and no path was given (ripgrep then searches it). */
  readonly stdin: Buffer | undefined;
  readonly out: ShimOutput;
  readonly warn: (line: string) => void;
  /** Files larger than this are skipped with a message. */
  readonly maxFileBytes: number;
}

/** Expands `{a,b}` alternatives, which ripgrep's globs have and gitignore syntax lacks. */
export function expandBraces(glob: string): string[] {
  const m = /\{([^{}]*)\}/.exec(glob);
  if (!m) return [glob];
  const [head, tail] = [glob.slice(0, m.index), glob.slice(m.index + m[0].length)];
  return m[1]!.split(",").flatMap((alt) => expandBraces(head + alt + tail));
}

/** ripgrep's -g: a match of a glob keeps the path, of a `!glob` drops it; with any plain glob, other files drop. */
export function globVerdict(globs: readonly string[]): ((path: string, isDir: boolean) => Verdict) | undefined {
  if (globs.length === 0) return undefined;
  const ig = ignore({ ignorecase: false }).add(globs.flatMap(expandBraces));
  const anyPlain = globs.some((g) => !g.startsWith("!"));
  return (path, isDir) => {
    let r: ReturnType<typeof ig.test>;
    try {
      r = ig.test(isDir ? `${path}/` : path);
    } catch {
      return undefined;
    }
    if (r.ignored) return "whitelist";
    if (r.unignored) return "ignore";
    return anyPlain && !isDir ? "ignore" : undefined;
  };
}

function decode(buf: Buffer): string {
  if (isAscii(buf)) return buf.toString("latin1"); // one byte per char: the fastest string to build and scan
  const bom = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  return buf.toString("utf8", bom);
}

class Run {
  matched = false;
  errored = false;
  private readonly reader = new FileReader();
  private readonly limit: number;

  constructor(
    private readonly o: RgOptions,
    private readonly env: RgEnv,
    private readonly pat: CompiledPattern | undefined,
    private readonly p: Printer,
  ) {
    this.limit = o.maxCount ?? Infinity;
  }

  get done(): boolean {
    return this.env.out.capped || (this.o.quiet && this.matched);
  }

  file(path: string, display: string, explicit: boolean): void {
    if (this.o.mode === "files") {
      this.matched = true;
      if (!this.o.quiet) this.p.path(display);
      return;
    }
    const buf = this.reader.read(path, this.env.maxFileBytes);
    if (typeof buf === "string") {
      this.errored = true;
      if (!this.o.noMessages) this.env.warn(`${display}: ${buf}`);
      return;
    }
    this.bytes(buf, display, explicit);
  }

  bytes(buf: Buffer, display: string, explicit: boolean): void {
    const o = this.o;
    const pat = this.pat!;
    const prefiltered = pat.literals && !o.invert && !pat.literals.some((l) => buf.indexOf(l) >= 0);
    const nul = prefiltered && o.mode !== "files-without-match" ? -1 : buf.indexOf(0);
    if (nul >= 0 && !explicit) return; // ripgrep quits on binary files it finds by walking
    const s = prefiltered ? "" : decode(buf);
    const want = o.mode === "files-with-matches" || o.mode === "files-without-match" || o.quiet ? 1 : this.limit;
    const spans = prefiltered || this.limit === 0 ? [] : o.invert ? unmatchedLines(s, pat, want) : matchedLines(s, pat, want);
    if (o.mode === "files-without-match") {
      if (spans.length === 0) {
        this.matched = true;
        if (!o.quiet) this.p.path(display);
      }
      return;
    }
    if (spans.length === 0) return;
    this.matched = true;
    if (o.quiet) return;
    if (o.mode === "files-with-matches") this.p.path(display);
    else if (o.mode === "count") this.p.count(display, spans.length);
    else if (nul >= 0) this.p.binaryMatch(display, nul);
    else emitLines(s, spans, display, pat, o, this.p);
  }
}

/** Runs the built-in rg; returns its exit code. Messages for the user go to `env.warn`. */
export function runRg(o: RgOptions, env: RgEnv): number {
  if (o.mode === "type-list") {
    for (const line of typeList()) env.out.line(line);
    return 0;
  }
  let pat: CompiledPattern | undefined;
  if (o.mode !== "files") {
    const compiled = compilePatterns(o);
    if (typeof compiled === "string") return fail(env, compiled);
    pat = compiled;
  }
  const types = typeMatcher(o.types, o.typesNot);
  if (!types.ok) return fail(env, types.message);
  const walk: WalkOptions = { hidden: o.hidden, noIgnore: o.noIgnore, maxDepth: o.maxDepth, override: globVerdict(o.globs), types: types.verdict };
  const useStdin = o.paths.length === 0 && env.stdin !== undefined && o.mode !== "files";
  const paths = o.paths.length > 0 ? o.paths : useStdin ? ["-"] : [""];
  const stats = paths.map((p) => (p === "-" ? "stdin" : statOf(resolve(env.cwd, p))));
  const withFilename = o.withFilename ?? (paths.length > 1 || stats[0] === "dir");
  const contextEnabled = (o.before > 0 || o.after > 0) && !o.onlyMatching;
  const printer = new Printer(env.out, { withFilename, lineNumber: o.lineNumber, heading: o.heading, contextEnabled });
  const run = new Run(o, env, pat, printer);
  paths.forEach((p, i) => {
    if (run.done) return;
    const abs = resolve(env.cwd, p);
    if (stats[i] === "stdin") run.bytes(env.stdin ?? Buffer.alloc(0), "<stdin>", true);
    else if (stats[i] === "dir") {
      for (const e of walkFiles(rootHandle(abs, p, env.cwd, walk), walk, () => run.done)) run.file(e.abs, e.display, false);
    } else if (stats[i] === "file") run.file(abs, p, true);
    else {
      run.errored = true;
      if (!o.noMessages) env.warn(`${p}: ${stats[i]}`);
    }
  });
  return run.matched && o.quiet ? 0 : run.errored ? 2 : run.matched ? 0 : 1;
}

function statOf(abs: string): "dir" | "file" | string {
  try {
    return statSync(abs).isDirectory() ? "dir" : "file";
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? "No such file or directory (os error 2)" : code === "EACCES" ? "Permission denied (os error 13)" : String(err);
  }
}

function fail(env: RgEnv, message: string): number {
  env.warn(message);
  return 2;
}
