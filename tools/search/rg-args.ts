// Owns the built-in rg's command line: ripgrep's spelling of the supported flags (short, long, `--x=v`,
// bundled `-inC2`), which later flag wins, and the one-line error for anything unsupported.
// Does not search or print (rg-search.ts, rg-print.ts).

export type CaseMode = "sensitive" | "insensitive" | "smart";
export type OutputMode = "lines" | "files-with-matches" | "files-without-match" | "count" | "files" | "type-list";

export interface RgOptions {
  patterns: string[];
  paths: string[];
  fixed: boolean;
  word: boolean;
  caseMode: CaseMode;
  lineNumber: boolean;
  mode: OutputMode;
  quiet: boolean;
  invert: boolean;
  onlyMatching: boolean;
  before: number;
  after: number;
  globs: string[];
  types: string[];
  typesNot: string[];
  hidden: boolean;
  noIgnore: boolean;
  maxCount: number | undefined;
  maxDepth: number | undefined;
  /** undefined: ripgrep's rule (shown unless one explicit file is searched). */
  withFilename: boolean | undefined;
  heading: boolean;
  noMessages: boolean;
  help: boolean;
  version: boolean;
}

export type ParseResult = { ok: true; options: RgOptions } | { ok: false; message: string };

interface Flag {
  long: string;
  short?: string;
  /** Name of the value in messages; absent for switches. */
  value?: "NUM" | "GLOB" | "TYPE" | "PATTERN" | "WHEN" | "SORTBY";
  apply: (o: RgOptions, v: string, state: { unrestricted: number; explicitPattern: boolean }) => void;
}

const num = (v: string): number => {
  if (!/^\d+$/.test(v)) throw new Error(`expects a non-negative whole number, got ${JSON.stringify(v)}`);
  return Number(v);
};

const FLAGS: Flag[] = [
  { long: "regexp", short: "e", value: "PATTERN", apply: (o, v, s) => { o.patterns.push(v); s.explicitPattern = true; } },
  { long: "line-number", short: "n", apply: (o) => { o.lineNumber = true; } },
  { long: "no-line-number", short: "N", apply: (o) => { o.lineNumber = false; } },
  { long: "ignore-case", short: "i", apply: (o) => { o.caseMode = "insensitive"; } },
  { long: "smart-case", short: "S", apply: (o) => { o.caseMode = "smart"; } },
  { long: "case-sensitive", short: "s", apply: (o) => { o.caseMode = "sensitive"; } },
  { long: "fixed-strings", short: "F", apply: (o) => { o.fixed = true; } },
  { long: "word-regexp", short: "w", apply: (o) => { o.word = true; } },
  { long: "invert-match", short: "v", apply: (o) => { o.invert = true; } },
  { long: "only-matching", short: "o", apply: (o) => { o.onlyMatching = true; } },
  { long: "files-with-matches", short: "l", apply: (o) => { o.mode = "files-with-matches"; } },
  { long: "files-without-match", apply: (o) => { o.mode = "files-without-match"; } },
  { long: "count", short: "c", apply: (o) => { o.mode = "count"; } },
  { long: "files", apply: (o) => { o.mode = "files"; } },
  { long: "type-list", apply: (o) => { o.mode = "type-list"; } },
  { long: "quiet", short: "q", apply: (o) => { o.quiet = true; } },
  { long: "glob", short: "g", value: "GLOB", apply: (o, v) => { o.globs.push(v); } },
  { long: "type", short: "t", value: "TYPE", apply: (o, v) => { o.types.push(v); } },
  { long: "type-not", short: "T", value: "TYPE", apply: (o, v) => { o.typesNot.push(v); } },
  { long: "context", short: "C", value: "NUM", apply: (o, v) => { o.before = o.after = num(v); } },
  { long: "after-context", short: "A", value: "NUM", apply: (o, v) => { o.after = num(v); } },
  { long: "before-context", short: "B", value: "NUM", apply: (o, v) => { o.before = num(v); } },
  { long: "max-count", short: "m", value: "NUM", apply: (o, v) => { o.maxCount = num(v); } },
  { long: "max-depth", short: "d", value: "NUM", apply: (o, v) => { o.maxDepth = num(v); } },
  { long: "hidden", short: ".", apply: (o) => { o.hidden = true; } },
  { long: "no-ignore", apply: (o) => { o.noIgnore = true; } },
  {
    long: "unrestricted",
    short: "u",
    apply: (o, _v, s) => {
      s.unrestricted++;
      o.noIgnore = true;
      if (s.unrestricted >= 2) o.hidden = true;
    },
  },
  { long: "with-filename", short: "H", apply: (o) => { o.withFilename = true; } },
  { long: "no-filename", short: "I", apply: (o) => { o.withFilename = false; } },
  { long: "heading", apply: (o) => { o.heading = true; } },
  { long: "no-heading", apply: (o) => { o.heading = false; } },
  { long: "no-messages", apply: (o) => { o.noMessages = true; } },
  // Accepted and without effect here: output is never coloured and always in walk order.
  { long: "color", value: "WHEN", apply: () => {} },
  { long: "colour", value: "WHEN", apply: () => {} },
  { long: "sort", value: "SORTBY", apply: () => {} },
  { long: "threads", short: "j", value: "NUM", apply: (_o, v) => { num(v); } },
  { long: "no-config", apply: () => {} },
  { long: "line-buffered", apply: () => {} },
  { long: "help", short: "h", apply: (o) => { o.help = true; } },
  { long: "version", short: "V", apply: (o) => { o.version = true; } },
];

const BY_LONG = new Map(FLAGS.map((f) => [f.long, f]));
const BY_SHORT = new Map(FLAGS.filter((f) => f.short).map((f) => [f.short!, f]));

export const SUPPORTED_FLAGS =
  "-e -n -N -i -S -s -F -w -v -o -l -c -q -g -t -T -C -A -B -m -d -. -u -H -I --files --hidden --no-ignore " +
  "--files-without-match --type-list --heading --no-heading --no-messages --color --sort -j";

export const RG_USAGE =
  "usage: rg [FLAGS] PATTERN [PATH...]\n       rg [FLAGS] -e PATTERN... [PATH...]\n       rg --files [PATH...]\n" +
  `built-in search (ripgrep is used instead when installed); flags: ${SUPPORTED_FLAGS}\n`;

function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(up + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

/** The known flag spelled most like `given`. */
export function nearestFlag(given: string): string {
  const bare = given.replace(/^-+/, "").split("=")[0]!;
  let best = FLAGS[0]!;
  let bestD = Infinity;
  for (const f of FLAGS) {
    const d = Math.min(distance(bare, f.long), f.short && bare.length <= 2 ? distance(bare, f.short) : Infinity);
    if (d < bestD) [best, bestD] = [f, d];
  }
  return bare.length <= 2 && best.short ? `-${best.short}` : `--${best.long}`;
}

export function defaultOptions(): RgOptions {
  return {
    patterns: [], paths: [], fixed: false, word: false, caseMode: "sensitive", lineNumber: false,
    mode: "lines", quiet: false, invert: false, onlyMatching: false, before: 0, after: 0,
    globs: [], types: [], typesNot: [], hidden: false, noIgnore: false, maxCount: undefined,
    maxDepth: undefined, withFilename: undefined, heading: false, noMessages: false, help: false, version: false,
  };
}

function unknown(arg: string): ParseResult {
  return {
    ok: false,
    message: `rg: unknown flag ${arg} (nearest known flag: ${nearestFlag(arg)}); the built-in rg supports ${SUPPORTED_FLAGS}`,
  };
}

function applyFlag(o: RgOptions, flag: Flag, shown: string, value: string, state: Parameters<Flag["apply"]>[2]): string | undefined {
  try {
    flag.apply(o, value, state);
    return undefined;
  } catch (err) {
    return `rg: ${shown} ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Parses rg's arguments (without the program name). */
export function parseRgArgs(args: readonly string[]): ParseResult {
  const o = defaultOptions();
  const state = { unrestricted: 0, explicitPattern: false };
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      positional.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = arg.slice(2, eq < 0 ? undefined : eq);
      const flag = BY_LONG.get(name);
      if (!flag) return unknown(arg);
      let value = "";
      if (flag.value) {
        if (eq >= 0) value = arg.slice(eq + 1);
        else if (i + 1 < args.length) value = args[++i]!;
        else return { ok: false, message: `rg: --${name} needs a ${flag.value} value` };
      } else if (eq >= 0) return { ok: false, message: `rg: --${name} takes no value` };
      const err = applyFlag(o, flag, `--${name}`, value, state);
      if (err) return { ok: false, message: err };
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1) {
      for (let k = 1; k < arg.length; k++) {
        const flag = BY_SHORT.get(arg[k]!);
        if (!flag) return unknown(`-${arg[k]}`);
        let value = "";
        if (flag.value) {
          if (k + 1 < arg.length) value = arg.slice(k + 1);
          else if (i + 1 < args.length) value = args[++i]!;
          else return { ok: false, message: `rg: -${flag.short} needs a ${flag.value} value` };
          k = arg.length;
        }
        const err = applyFlag(o, flag, `-${flag.short}`, value, state);
        if (err) return { ok: false, message: err };
      }
      continue;
    }
    positional.push(arg);
  }
  if (o.help || o.version || o.mode === "files" || o.mode === "type-list" || state.explicitPattern) {
    o.paths = positional;
    return { ok: true, options: o };
  }
  if (positional.length === 0) {
    return { ok: false, message: "rg: no pattern given (usage: rg [FLAGS] PATTERN [PATH...]; rg --files [PATH...])" };
  }
  o.patterns.push(positional[0]!);
  o.paths = positional.slice(1);
  return { ok: true, options: o };
}
