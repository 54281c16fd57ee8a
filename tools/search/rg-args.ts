// Owns the built-in rg's command line: ripgrep's spelling of flags (short, long, `--x=v`, bundled `-inC2`),
// which later flag wins, config-file arguments, and the one-line errors for unknown or refused flags.
// Does not define the flags (rg-flags.ts), search or print.
import { defaultOptions, FLAGS, REFUSED_LONG, REFUSED_SHORT, WholeError, type Flag, type ParseState, type RgOptions } from "./rg-flags.ts";

export type { OutputMode, RgOptions } from "./rg-flags.ts";
export type { CaseMode } from "./rg-regex.ts";
export { defaultOptions } from "./rg-flags.ts";
export type ParseResult = { ok: true; options: RgOptions } | { ok: false; message: string };

/** ripgrep 13 refuses --json with these output modes. */
const JSON_CONFLICTS: Partial<Record<RgOptions["mode"], string>> = {
  count: "--count", "count-matches": "--count-matches", files: "--files",
  "files-with-matches": "--files-with-matches", "files-without-match": "--files-without-match",
};

// Built in one plain loop: this module loads on every search, before any of its code is compiled.
const BY_LONG = new Map<string, Flag>();
const BY_SHORT = new Map<string, Flag>();
for (const f of FLAGS) {
  BY_LONG.set(f.long, f);
  if (f.short) BY_SHORT.set(f.short, f);
}

/** rg --help's text (made only when asked for). */
export function rgUsage(): string {
  const flags = FLAGS.map((f) => (f.short ? `-${f.short}/--${f.long}` : `--${f.long}`)).join(" ");
  return (
    "usage: rg [FLAGS] PATTERN [PATH...]\n       rg [FLAGS] -e PATTERN... [PATH...]\n       rg --files [PATH...]\n" +
    `built-in search (ripgrep is used instead when installed); flags: ${flags}\n`
  );
}

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

function unknown(arg: string): ParseResult {
  const refused = arg.startsWith("--") ? arg.slice(2).split("=")[0]! : REFUSED_SHORT[arg.slice(1)];
  if (refused && (REFUSED_LONG.has(refused) || arg.length === 2)) {
    return { ok: false, message: `rg: flag --${refused} is not supported by the built-in search; install ripgrep for it` };
  }
  return {
    ok: false,
    message: `rg: unknown flag ${arg} (nearest known flag: ${nearestFlag(arg)}); run rg --help for the supported flags`,
  };
}

function applyFlag(o: RgOptions, flag: Flag, shown: string, value: string, state: ParseState): string | undefined {
  try {
    flag.apply(o, value, state);
    return undefined;
  } catch (err) {
    if (err instanceof WholeError) {
      state.invalidValue ??= err.message; // ripgrep reads such values after its command line: a missing pattern is said first
      return undefined;
    }
    return `rg: ${shown} ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Parses rg's arguments (without the program name). */
export function parseRgArgs(args: readonly string[]): ParseResult {
  const o = defaultOptions();
  const state: ParseState = { unrestricted: 0, explicitPattern: false };
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
  if (o.vimgrep) o.withFilename ??= true;
  // ripgrep 13's -q ends the search at the first match whatever the listing mode: its status is a match's.
  if (o.quiet && o.mode === "files-without-match") o.mode = "files-with-matches";
  if (o.json && JSON_CONFLICTS[o.mode]) {
    return { ok: false, message: `error: The argument '${JSON_CONFLICTS[o.mode]}' cannot be used with '--json'` };
  }
  if (o.help || o.version || o.mode === "files" || o.mode === "type-list" || state.explicitPattern) {
    o.paths = positional;
    return state.invalidValue ? { ok: false, message: state.invalidValue } : { ok: true, options: o };
  }
  if (positional.length === 0) {
    return { ok: false, message: "error: no pattern given (usage: rg [FLAGS] PATTERN [PATH...]; rg --files [PATH...])" };
  }
  if (state.invalidValue) return { ok: false, message: state.invalidValue };
  o.patterns.push(positional[0]!);
  o.paths = positional.slice(1);
  return { ok: true, options: o };
}

/** Arguments from a ripgrep config file: one per line, blank lines and `#` comments skipped. */
export function configArgs(text: string): string[] {
  if (text === "") return []; // no config file, the common case: a regex split, map and filter each cost ~0.1 ms on first use
  return text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
}
