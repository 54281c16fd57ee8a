// Owns the built-in rg's flag table: every supported flag with ripgrep's short and long spelling and what it
// sets in RgOptions, plus ripgrep's flags the built-in refuses by name. Does not read argv (rg-args.ts).
import type { TypeChange } from "./rg-types.ts";
import type { CaseMode } from "./rg-regex.ts";

export type OutputMode = "lines" | "files-with-matches" | "files-without-match" | "count" | "count-matches" | "files" | "type-list";
export type SortKey = "none" | "path" | "modified" | "accessed" | "created";

export interface RgOptions {
  patterns: string[];
  /** -f files, read by the run (`-` is standard input). */
  patternFiles: string[];
  paths: string[];
  fixed: boolean;
  word: boolean;
  lineRegexp: boolean;
  caseMode: CaseMode;
  lineNumber: boolean | undefined;
  /** undefined: shown under --vimgrep only. */
  column: boolean | undefined;
  /** -b: each printed line (or -o match) starts with its byte offset in the file. */
  byteOffset: boolean;
  /** --null-data: lines end at NUL bytes instead of newlines (and binary detection is off). */
  nullData: boolean;
  /** --mmap/--no-mmap as given; the run resolves ripgrep's default (rg-run.ts), which changes its binary-file output. */
  mmap: boolean | undefined;
  /** --no-require-git sets false: .gitignore files apply outside a git repository too. */
  requireGit: boolean;
  mode: OutputMode;
  quiet: boolean;
  invert: boolean;
  onlyMatching: boolean;
  before: number;
  after: number;
  passthru: boolean;
  globs: string[];
  /** Indexes of `globs` given with --iglob. */
  caselessGlobs: Set<number>;
  globCaseInsensitive: boolean;
  types: string[];
  typesNot: string[];
  typeChanges: TypeChange[];
  ignoreFiles: string[];
  hidden: boolean;
  follow: boolean;
  noIgnore: boolean;
  noIgnoreDot: boolean;
  noIgnoreVcs: boolean;
  noIgnoreExclude: boolean;
  noIgnoreParent: boolean;
  /** --no-ignore-files: --ignore-file is disregarded, even given later. */
  noIgnoreFiles: boolean;
  /** -a: no binary detection at all. */
  text: boolean;
  /** --binary (or -uuu): binary files found by walking are searched and reported like explicit ones. */
  binary: boolean;
  maxCount: number | undefined;
  maxDepth: number | undefined;
  maxFilesize: number | undefined;
  maxColumns: number | undefined;
  maxColumnsPreview: boolean;
  /** undefined: ripgrep's rule (shown unless one explicit file is searched). */
  withFilename: boolean | undefined;
  heading: boolean;
  noMessages: boolean;
  replace: string | undefined;
  nullAfterPath: boolean;
  fieldMatchSep: string;
  fieldContextSep: string;
  /** undefined: --no-context-separator. */
  contextSep: string | undefined;
  pathSep: string | undefined;
  vimgrep: boolean;
  /** --trim: leading ASCII whitespace off each printed line. */
  trim: boolean;
  includeZero: boolean;
  crlf: boolean;
  multiline: boolean;
  multilineDotall: boolean;
  json: boolean;
  stats: boolean;
  sort: SortKey;
  sortReverse: boolean;
  threads: number | undefined;
  help: boolean;
  version: boolean;
}

export interface ParseState {
  unrestricted: number;
  explicitPattern: boolean;
  /** The context was last set by -C: a later -A or -B replaces it whole (the other side becomes 0). */
  contextFromC?: boolean;
  /** -c or --count-matches was given: it beats -l and --files-without-match whatever the order. */
  counting?: boolean;
  /** The first value ripgrep would refuse once the command line is read (a WholeError's message). */
  invalidValue?: string;
}

export interface Flag {
  long: string;
  short?: string;
  /** Name of the value in messages; absent for switches. */
  value?: "NUM" | "GLOB" | "TYPE" | "PATTERN" | "WHEN" | "SORTBY" | "PATH" | "SEP" | "REPLACEMENT" | "SIZE";
  apply: (o: RgOptions, v: string, state: ParseState) => void;
}

const num = (v: string): number => {
  if (!/^\d+$/.test(v)) throw new Error(`expects a non-negative whole number, got ${JSON.stringify(v)}`);
  return Number(v);
};

/** An error whose message is the whole line ripgrep prints (no `rg: --flag` before it). */
export class WholeError extends Error {}

const U64_MAX = 2n ** 64n - 1n;

/** ripgrep's sizes: digits with an optional K, M or G suffix, at most 2^64 - 1 bytes (ripgrep's messages). */
const size = (v: string): number => {
  const m = /^(\d+)([KMG]?)$/.exec(v);
  if (!m) throw new WholeError(`invalid format for size '${v}', which should be a sequence of digits followed by an optional 'K', 'M' or 'G' suffix`);
  const n = BigInt(m[1]!);
  if (n > U64_MAX) throw new WholeError(`invalid integer found in size '${v}': number too large to fit in target type`);
  const bytes = n * 1024n ** BigInt(" KMG".indexOf(m[2] || " "));
  if (bytes > U64_MAX) throw new WholeError(`size too big in '${v}'`);
  return Number(bytes);
};

/** Separators take escapes such as `\t` and `\x00`, as ripgrep's do. */
export const unescapeSep = (v: string): string =>
  v.replace(/\\(x[0-9A-Fa-f]{2}|[tnr0\\])/g, (_, e: string) =>
    e[0] === "x" ? String.fromCharCode(parseInt(e.slice(1), 16)) : ({ t: "\t", n: "\n", r: "\r", "0": "\0", "\\": "\\" } as Record<string, string>)[e]!,
  );

const sortBy = (reverse: boolean) => (o: RgOptions, v: string) => {
  if (!["none", "path", "modified", "accessed", "created"].includes(v)) throw new Error(`expects path, modified, accessed, created or none, got ${JSON.stringify(v)}`);
  o.sort = v as SortKey;
  o.sortReverse = reverse;
};

const accept = () => {};

export const FLAGS: Flag[] = [
  { long: "regexp", short: "e", value: "PATTERN", apply: (o, v, s) => { o.patterns.push(v); s.explicitPattern = true; } },
  { long: "file", short: "f", value: "PATH", apply: (o, v, s) => { o.patternFiles.push(v); s.explicitPattern = true; } },
  { long: "line-number", short: "n", apply: (o) => { o.lineNumber = true; } },
  { long: "no-line-number", short: "N", apply: (o) => { o.lineNumber = false; } },
  { long: "column", apply: (o) => { o.column = true; } },
  { long: "byte-offset", short: "b", apply: (o) => { o.byteOffset = true; } },
  { long: "no-byte-offset", apply: (o) => { o.byteOffset = false; } },
  { long: "null-data", apply: (o) => { o.nullData = true; } },
  { long: "no-require-git", apply: (o) => { o.requireGit = false; } },
  { long: "require-git", apply: (o) => { o.requireGit = true; } },
  { long: "no-column", apply: (o) => { o.column = false; } },
  { long: "ignore-case", short: "i", apply: (o) => { o.caseMode = "insensitive"; } },
  { long: "smart-case", short: "S", apply: (o) => { o.caseMode = "smart"; } },
  { long: "case-sensitive", short: "s", apply: (o) => { o.caseMode = "sensitive"; } },
  { long: "fixed-strings", short: "F", apply: (o) => { o.fixed = true; } },
  { long: "no-fixed-strings", apply: (o) => { o.fixed = false; } },
  { long: "word-regexp", short: "w", apply: (o) => { o.word = true; o.lineRegexp = false; } },
  { long: "line-regexp", short: "x", apply: (o) => { o.lineRegexp = true; o.word = false; } },
  { long: "invert-match", short: "v", apply: (o) => { o.invert = true; } },
  { long: "only-matching", short: "o", apply: (o) => { o.onlyMatching = true; } },
  { long: "files-with-matches", short: "l", apply: (o, _v, s) => { if (!s.counting) o.mode = "files-with-matches"; } },
  { long: "files-without-match", apply: (o, _v, s) => { if (!s.counting) o.mode = "files-without-match"; } },
  { long: "count", short: "c", apply: (o, _v, s) => { o.mode = "count"; s.counting = true; } },
  { long: "count-matches", apply: (o, _v, s) => { o.mode = "count-matches"; s.counting = true; } },
  { long: "files", apply: (o) => { o.mode = "files"; } },
  { long: "type-list", apply: (o) => { o.mode = "type-list"; } },
  { long: "quiet", short: "q", apply: (o) => { o.quiet = true; } },
  { long: "glob", short: "g", value: "GLOB", apply: (o, v) => { o.globs.push(v); } },
  { long: "iglob", value: "GLOB", apply: (o, v) => { o.globs.push(v); o.caselessGlobs.add(o.globs.length - 1); } },
  { long: "glob-case-insensitive", apply: (o) => { o.globCaseInsensitive = true; } },
  { long: "no-glob-case-insensitive", apply: (o) => { o.globCaseInsensitive = false; } },
  { long: "type", short: "t", value: "TYPE", apply: (o, v) => { o.types.push(v); } },
  { long: "type-not", short: "T", value: "TYPE", apply: (o, v) => { o.typesNot.push(v); } },
  { long: "type-add", value: "TYPE", apply: (o, v) => { o.typeChanges.push({ kind: "add", value: v }); } },
  { long: "type-clear", value: "TYPE", apply: (o, v) => { o.typeChanges.push({ kind: "clear", value: v }); } },
  { long: "ignore-file", value: "PATH", apply: (o, v) => { o.ignoreFiles.push(v); } },
  // -C, -A/-B and --passthru override one another as in ripgrep 13: the later one wins whole.
  { long: "context", short: "C", value: "NUM", apply: (o, v, s) => { o.before = o.after = num(v); s.contextFromC = true; o.passthru = false; } },
  { long: "after-context", short: "A", value: "NUM", apply: (o, v, s) => { if (s.contextFromC) o.before = 0; s.contextFromC = false; o.after = num(v); o.passthru = false; } },
  { long: "before-context", short: "B", value: "NUM", apply: (o, v, s) => { if (s.contextFromC) o.after = 0; s.contextFromC = false; o.before = num(v); o.passthru = false; } },
  { long: "passthru", apply: (o) => { o.passthru = true; } },
  { long: "passthrough", apply: (o) => { o.passthru = true; } },
  { long: "max-count", short: "m", value: "NUM", apply: (o, v) => { o.maxCount = num(v); } },
  { long: "max-depth", short: "d", value: "NUM", apply: (o, v) => { o.maxDepth = num(v); } },
  { long: "maxdepth", value: "NUM", apply: (o, v) => { o.maxDepth = num(v); } },
  { long: "max-filesize", value: "SIZE", apply: (o, v) => { o.maxFilesize = size(v); } },
  { long: "max-columns", short: "M", value: "NUM", apply: (o, v) => { o.maxColumns = num(v) || undefined; } },
  { long: "max-columns-preview", apply: (o) => { o.maxColumnsPreview = true; } },
  { long: "no-max-columns-preview", apply: (o) => { o.maxColumnsPreview = false; } },
  { long: "hidden", short: ".", apply: (o) => { o.hidden = true; } },
  { long: "follow", short: "L", apply: (o) => { o.follow = true; } },
  { long: "no-follow", apply: (o) => { o.follow = false; } },
  { long: "no-hidden", apply: (o) => { o.hidden = false; } },
  { long: "no-ignore", apply: (o) => { o.noIgnore = true; } },
  { long: "ignore", apply: (o) => { o.noIgnore = false; } },
  { long: "no-ignore-dot", apply: (o) => { o.noIgnoreDot = true; } },
  { long: "no-ignore-vcs", apply: (o) => { o.noIgnoreVcs = true; } },
  { long: "no-ignore-exclude", apply: (o) => { o.noIgnoreExclude = true; } },
  { long: "no-ignore-parent", apply: (o) => { o.noIgnoreParent = true; } },
  { long: "no-ignore-files", apply: (o) => { o.noIgnoreFiles = true; } },
  { long: "ignore-files", apply: (o) => { o.noIgnoreFiles = false; } },
  { long: "ignore-dot", apply: (o) => { o.noIgnoreDot = false; } },
  { long: "ignore-vcs", apply: (o) => { o.noIgnoreVcs = false; } },
  { long: "ignore-exclude", apply: (o) => { o.noIgnoreExclude = false; } },
  { long: "ignore-parent", apply: (o) => { o.noIgnoreParent = false; } },
  {
    long: "unrestricted",
    short: "u",
    apply: (o, _v, s) => {
      s.unrestricted++;
      o.noIgnore = true;
      if (s.unrestricted >= 2) o.hidden = true;
      if (s.unrestricted >= 3) o.binary = true;
    },
  },
  // -a and --binary override each other (the later wins), as in ripgrep 13.
  { long: "text", short: "a", apply: (o) => { o.text = true; o.binary = false; } },
  { long: "no-text", apply: (o) => { o.text = false; } },
  { long: "binary", apply: (o) => { o.binary = true; o.text = false; } },
  { long: "no-binary", apply: (o) => { o.binary = false; } },
  { long: "with-filename", short: "H", apply: (o) => { o.withFilename = true; } },
  { long: "no-filename", short: "I", apply: (o) => { o.withFilename = false; } },
  { long: "heading", apply: (o) => { o.heading = true; } },
  { long: "no-heading", apply: (o) => { o.heading = false; } },
  { long: "no-messages", apply: (o) => { o.noMessages = true; } },
  { long: "messages", apply: (o) => { o.noMessages = false; } },
  { long: "replace", short: "r", value: "REPLACEMENT", apply: (o, v) => { o.replace = v; } },
  { long: "null", short: "0", apply: (o) => { o.nullAfterPath = true; } },
  { long: "field-match-separator", value: "SEP", apply: (o, v) => { o.fieldMatchSep = unescapeSep(v); } },
  { long: "field-context-separator", value: "SEP", apply: (o, v) => { o.fieldContextSep = unescapeSep(v); } },
  { long: "context-separator", value: "SEP", apply: (o, v) => { o.contextSep = unescapeSep(v); } },
  { long: "no-context-separator", apply: (o) => { o.contextSep = undefined; } },
  { long: "path-separator", value: "SEP", apply: (o, v) => { o.pathSep = pathSeparator(unescapeSep(v)); } },
  { long: "vimgrep", apply: (o) => { o.vimgrep = true; } },
  { long: "trim", apply: (o) => { o.trim = true; } },
  { long: "no-trim", apply: (o) => { o.trim = false; } },
  { long: "include-zero", apply: (o) => { o.includeZero = true; } },
  { long: "no-include-zero", apply: (o) => { o.includeZero = false; } },
  { long: "crlf", apply: (o) => { o.crlf = true; } },
  { long: "no-crlf", apply: (o) => { o.crlf = false; } },
  { long: "multiline", short: "U", apply: (o) => { o.multiline = true; } },
  { long: "no-multiline", apply: (o) => { o.multiline = false; } },
  { long: "multiline-dotall", apply: (o) => { o.multilineDotall = true; } },
  { long: "no-multiline-dotall", apply: (o) => { o.multilineDotall = false; } },
  { long: "json", apply: (o) => { o.json = true; } },
  { long: "no-json", apply: (o) => { o.json = false; } },
  { long: "stats", apply: (o) => { o.stats = true; } },
  { long: "no-stats", apply: (o) => { o.stats = false; } },
  { long: "sort", value: "SORTBY", apply: sortBy(false) },
  { long: "sortr", value: "SORTBY", apply: sortBy(true) },
  { long: "sort-files", apply: (o) => { o.sort = "path"; o.sortReverse = false; } },
  { long: "threads", short: "j", value: "NUM", apply: (o, v) => { o.threads = num(v) || undefined; } },
  // Accepted and without effect here: output is never coloured, and the configuration file is read (or
  // not) before parsing.
  { long: "color", value: "WHEN", apply: accept },
  { long: "colour", value: "WHEN", apply: accept },
  { long: "mmap", apply: (o) => { o.mmap = true; } },
  { long: "no-mmap", apply: (o) => { o.mmap = false; } },
  { long: "no-config", apply: accept },
  { long: "line-buffered", apply: accept },
  // The built-in never reads git's global excludes file nor complains about ignore files.
  { long: "no-ignore-global", apply: accept },
  { long: "no-ignore-messages", apply: accept },
  { long: "block-buffered", apply: accept },
  { long: "help", short: "h", apply: (o) => { o.help = true; } },
  { long: "version", short: "V", apply: (o) => { o.version = true; } },
];

function pathSeparator(v: string): string {
  if (Buffer.byteLength(v) !== 1) throw new Error(`must be exactly one byte, got ${JSON.stringify(v)}`);
  return v;
}

/** ripgrep 13's flags the built-in does not implement; they fail by name instead of answering differently. */
export const REFUSED_LONG = new Set(
  ("auto-hybrid-regex colors debug dfa-size-limit encoding engine " +
    "ignore-file-case-insensitive no-pcre2-unicode no-unicode unicode one-file-system " +
    "pcre2 pcre2-version pre pre-glob pretty regex-size-limit search-zip " +
    "no-search-zip no-pcre2 no-one-file-system no-unicode no-encoding no-auto-hybrid-regex no-pre")
    .split(" "),
);
export const REFUSED_SHORT: Record<string, string> = { E: "encoding", P: "pcre2", p: "pretty", z: "search-zip" };

export function defaultOptions(): RgOptions {
  return {
    patterns: [], patternFiles: [], paths: [], fixed: false, word: false, lineRegexp: false, caseMode: "sensitive",
    lineNumber: undefined, column: undefined, byteOffset: false, nullData: false, mmap: undefined, requireGit: true, mode: "lines", quiet: false, invert: false, onlyMatching: false,
    before: 0, after: 0, passthru: false, globs: [], caselessGlobs: new Set(), globCaseInsensitive: false, types: [], typesNot: [], typeChanges: [], ignoreFiles: [], hidden: false, follow: false,
    noIgnore: false, noIgnoreDot: false, noIgnoreVcs: false, noIgnoreExclude: false, noIgnoreParent: false, noIgnoreFiles: false, text: false, binary: false, maxCount: undefined, maxDepth: undefined, maxFilesize: undefined,
    maxColumns: undefined, maxColumnsPreview: false, withFilename: undefined, heading: false, noMessages: false,
    replace: undefined, nullAfterPath: false, fieldMatchSep: ":", fieldContextSep: "-", contextSep: "--",
    pathSep: undefined, vimgrep: false, trim: false, includeZero: false, crlf: false, multiline: false, multilineDotall: false,
    json: false, stats: false, sort: "none", sortReverse: false, threads: undefined, help: false, version: false,
  };
}
