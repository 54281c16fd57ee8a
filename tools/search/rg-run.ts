// Owns one built-in rg run: which paths are searched and how they print (ripgrep's rules for explicit
// files, directories, stdin and `./`), -f pattern files, --ignore-file, --sort/--sortr, --stats and the
// exit code (0 match, 1 none, 2 error). Does not parse arguments (rg-args.ts), search a file (rg-file.ts)
// nor own the process (cli/rg.ts).
import { readFileSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import ignore from "ignore";
import { loadIgnoreFile, type Verdict } from "./ignore-rules.ts";
import type { RgOptions } from "./rg-flags.ts";
import { errorText } from "./file-bytes.ts";
import { FileSearch, type SearchStats } from "./rg-file.ts";
import { JsonPrinter } from "./rg-json.ts";
import { parallelFits, searchParallel } from "./rg-parallel.ts";
import { Printer, printOptionsFor } from "./rg-print.ts";
import { compilePatterns, type CompiledPattern } from "./rg-regex.ts";
import { typeList, typeMatcher, typeTable } from "./rg-types.ts";
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
  /** A walk of at least `minFiles` files is searched on up to `maxWorkers` threads, `batchFiles` at a time. */
  readonly parallel?: { readonly minFiles: number; readonly maxWorkers: number; readonly batchFiles: number };
}

/** Expands `{a,b}` alternatives, which ripgrep's globs have and gitignore syntax lacks. */
export function expandBraces(glob: string): string[] {
  const m = /\{([^{}]*)\}/.exec(glob);
  if (!m) return [glob];
  const [head, tail] = [glob.slice(0, m.index), glob.slice(m.index + m[0].length)];
  return m[1]!.split(",").flatMap((alt) => expandBraces(head + alt + tail));
}

/** A glob matching regardless of case (--iglob, --glob-case-insensitive): each letter becomes `[xX]`. */
export function caseless(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "\\") {
      out += glob.slice(i, i + 2);
      i++;
    } else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      const cls = end < 0 ? glob.slice(i) : glob.slice(i, end + 1);
      out += cls.replace(/\p{L}/gu, (l) => l.toLowerCase() + l.toUpperCase());
      i += cls.length - 1;
    } else {
      const lo = c.toLowerCase();
      const up = c.toUpperCase();
      out += lo === up ? c : `[${lo}${up}]`;
    }
  }
  return out;
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

const NOTHING_SEARCHED =
  "No files were searched, which means ripgrep probably applied a filter you didn't expect.\n" +
  "Running with --debug will show why files are being skipped.";

/** Patterns from -f files, one a line (`-` reads standard input), or why one could not be read. */
function patternsFrom(o: RgOptions, env: RgEnv): string[] | string {
  const out = [...o.patterns];
  for (const f of o.patternFiles) {
    let text: string;
    try {
      text = f === "-" ? (env.stdin ?? Buffer.alloc(0)).toString("utf8") : readFileSync(resolve(env.cwd, f), "utf8");
    } catch (err) {
      return `${f}: ${errorText(err)}`;
    }
    if (text.endsWith("\n")) text = text.slice(0, -1);
    if (text !== "") out.push(...text.split("\n").map((l) => l.replace(/\r$/, "")));
  }
  return out;
}

interface Subject {
  abs: string;
  display: string;
  explicit: boolean;
  stdin?: boolean;
  error?: string;
}

/** Every file to search, in ripgrep's order; collected first only when a sort needs them all. */
function* subjects(o: RgOptions, env: RgEnv, walk: WalkOptions, paths: string[], stop: () => boolean): Generator<Subject> {
  for (const p of paths) {
    if (stop()) return;
    const abs = resolve(env.cwd, p);
    const kind = p === "-" ? "stdin" : statOf(abs);
    if (kind === "stdin") yield { abs, display: "<stdin>", explicit: true, stdin: true };
    else if (kind === "dir") {
      for (const e of walkFiles(rootHandle(abs, p, env.cwd, walk), walk, stop)) yield { abs: e.abs, display: e.display, explicit: false };
    } else if (kind === "file") yield { abs, display: p, explicit: true };
    else yield { abs, display: p, explicit: true, error: kind };
  }
}

function sorted(all: Subject[], o: RgOptions): Subject[] {
  const key = (s: Subject): number | string => {
    if (o.sort === "path") return s.display;
    try {
      const st = statSync(s.abs);
      return (o.sort === "modified" ? st.mtimeMs : o.sort === "accessed" ? st.atimeMs : st.birthtimeMs) || 0;
    } catch {
      return 0;
    }
  };
  const keyed = all.map((s) => [key(s), s] as const);
  keyed.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0) * (o.sortReverse ? -1 : 1));
  return keyed.map(([, s]) => s);
}

/** Runs the built-in rg; returns its exit code. Messages for the user go to `env.warn`. */
export function runRg(o: RgOptions, env: RgEnv): number | Promise<number> {
  const started = performance.now();
  const table = typeTable(o.typeChanges);
  if (typeof table === "string") return fail(env, table);
  if (o.mode === "type-list") {
    for (const line of typeList(table)) env.out.line(line);
    return 0;
  }
  let pat: CompiledPattern | undefined;
  if (o.mode !== "files") {
    const patterns = patternsFrom(o, env);
    if (typeof patterns === "string") return fail(env, patterns);
    const compiled = compilePatterns({ ...o, patterns, multilineDotall: o.multiline && o.multilineDotall });
    if (typeof compiled === "string") return fail(env, compiled);
    pat = compiled;
  }
  const types = typeMatcher(o.types, o.typesNot, table);
  if (!types.ok) return fail(env, types.message);
  const extra = o.noIgnoreFiles ? [] : o.ignoreFiles.map((f) => loadIgnoreFile(resolve(env.cwd, f)));
  const walk: WalkOptions = {
    hidden: o.hidden, noIgnore: o.noIgnore, maxDepth: o.maxDepth, override: globVerdict(o.globs.map((g, i) => (o.globCaseInsensitive || o.caselessGlobs.has(i) ? caseless(g) : g))), types: types.verdict,
    explicitIgnores: extra.length > 0 ? extra : undefined,
    sources: { dot: !o.noIgnoreDot, vcs: !o.noIgnoreVcs, exclude: !o.noIgnoreExclude, parent: !o.noIgnoreParent },
  };
  const readsStdin = o.patternFiles.includes("-");
  const useStdin = o.paths.length === 0 && env.stdin !== undefined && o.mode !== "files" && !readsStdin;
  const paths = o.paths.length > 0 ? o.paths : useStdin ? ["-"] : [""];
  const firstKind = paths[0] === "-" ? "stdin" : statOf(resolve(env.cwd, paths[0]!));
  const withFilename = o.withFilename ?? (paths.length > 1 || firstKind === "dir");
  const printer = new Printer(env.out, printOptionsFor(o, withFilename));
  const json = o.json ? new JsonPrinter(env.out) : undefined;
  const run = new FileSearch(o, pat, printer, env.warn, env.maxFileBytes, () => env.out.capped, json);
  const stop = () => run.done;
  let list: Iterable<Subject> = subjects(o, env, walk, paths, stop);
  if (o.sort !== "none" && (o.sort !== "path" || o.sortReverse)) list = sorted([...list], o);
  // By default one core stays with this thread (it walks and prints): a 2-core machine searches in-line.
  const workers = () => Math.min(o.threads ?? availableParallelism() - 1, env.parallel?.maxWorkers ?? 1);
  const finish = (searched: boolean) => {
    if (!searched && o.paths.length === 0 && !useStdin && o.mode !== "files") {
      run.errored = true; // ripgrep 13: a search of the working directory that found no file at all is an error
      if (!o.noMessages) env.warn(NOTHING_SEARCHED);
    }
    const ms = performance.now() - started;
    if (json) json.summary(ms);
    else if (o.stats && o.mode !== "files") printStats(env.out, run.stats, ms);
    return run.matched && o.quiet ? 0 : run.errored ? 2 : run.matched ? 0 : 1;
  };
  if (env.parallel && pat && parallelFits(o) && !useStdin && !paths.includes("-") && workers() > 1) {
    const all = [...list];
    if (all.length >= env.parallel.minFiles) {
      const files: [string, string, boolean][] = [];
      for (const sub of all) {
        if (sub.error === undefined) files.push([sub.abs, sub.display, sub.explicit]);
        else {
          run.errored = true;
          if (!o.noMessages) env.warn(`${sub.display}: ${sub.error}`);
        }
      }
      const job = { o, patterns: pat.patterns, withFilename, maxFileBytes: env.maxFileBytes, files, workers: workers(), batchFiles: env.parallel.batchFiles, out: env.out, warn: env.warn };
      return searchParallel(job).then((r) => {
        run.matched ||= r.matched;
        run.errored ||= r.errored;
        return finish(true);
      });
    }
    list = all;
  }
  let searched = false;
  for (const sub of list) {
    searched = true;
    if (run.done) break;
    if (sub.stdin) run.bytes(env.stdin ?? Buffer.alloc(0), sub.display, true);
    else if (sub.error === undefined) run.file(sub.abs, sub.display, sub.explicit);
    else {
      run.errored = true;
      if (!o.noMessages) env.warn(`${sub.display}: ${sub.error}`);
    }
  }
  return finish(searched);
}

/** ripgrep's --stats block, after the results. */
function printStats(out: ShimOutput, st: SearchStats, ms: number): void {
  const secs = (ms / 1000).toFixed(6);
  const printed = out.written;
  for (const line of [
    "", `${st.matches} matches`, `${st.matchedLines} matched lines`, `${st.filesWithMatch} files contained matches`,
    `${st.filesSearched} files searched`, `${printed} bytes printed`, `${st.bytesSearched} bytes searched`,
    `${secs} seconds spent searching`, `${secs} seconds`,
  ]) out.line(line);
}

function statOf(abs: string): "dir" | "file" | string {
  try {
    return statSync(abs).isDirectory() ? "dir" : "file";
  } catch (err) {
    return errorText(err);
  }
}

function fail(env: RgEnv, message: string): number {
  env.warn(message);
  return 2;
}
