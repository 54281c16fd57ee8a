// Owns turning rg patterns (Rust regex syntax, -F, -w, -i/-S) into one JavaScript RegExp with the `u`
// flag that finds matches in a whole file at once: `.`/`^`/`$` stay inside a line, `\w`/`\d`/`\b` are
// Unicode-aware as in Rust. Does not split lines or search files (rg-search.ts).

/** How letter case counts: `-s`, `-i`, or `-S` (insensitive unless the pattern has an upper-case letter). */
export type CaseMode = "sensitive" | "insensitive" | "smart";

export interface CompiledPattern {
  /** Global, for finding the lines with a match in a whole file (may match less text than `exact`). */
  readonly scan: RegExp;
  /** Global, the pattern itself: for printing matches (-o). */
  readonly exact: RegExp;
  /** Non-global, for re-checking one line when a match crossed a line end. */
  readonly line: RegExp;
  /** When every match must contain one of these exact strings (case-sensitive), files without them are skipped unread. */
  readonly literals: readonly string[] | undefined;
  /**
   * Per pattern, bytes every match of it contains whatever the case: a file lacking one of each pattern's
   * is skipped before the slower literal search or decoding (see `probeBytes`).
   */
  readonly probes: readonly (readonly number[])[] | undefined;
  /** Set when the one pattern is plain text matched case-sensitively: lines are found by string search. */
  readonly plain?: string;
  /** The patterns it was compiled from (a worker thread compiles them again). */
  readonly patterns: string[];
  /** --crlf: a match that ends in `\r` (its `$` took it) ends before it, as in ripgrep. */
  readonly crlf?: boolean;
  /**
   * Some pattern may match a newline (`\n`, `\s`, a negated class, `.` under --multiline-dotall, …): only
   * then does ripgrep's -U search the file whole (which changes what it prints of a binary file).
   */
  readonly crossesLines?: boolean;
  /** -U: a match may span lines (else one that runs past its line's end is cut to the line, as Rust's would be). */
  readonly multiline?: boolean;
}

const WORD = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}";
const SYNTAX = new Set("^$\\.*+?()[]{}|/");
/** POSIX bracket classes (`[[:digit:]]`) as class contents; gitignore globs use them too (ignore-rules.ts). */
export const POSIX: Record<string, string> = {
  alnum: "0-9A-Za-z", alpha: "A-Za-z", ascii: "\\x00-\\x7F", blank: "\\t ", cntrl: "\\x00-\\x1F\\x7F",
  digit: "0-9", graph: "!-~", lower: "a-z", print: " -~", punct: "!-\\/:-@\\[-`{-~", space: "\\t\\n\\v\\f\\r ",
  upper: "A-Z", word: "0-9A-Za-z_", xdigit: "0-9A-Fa-f",
};

export function escapeLiteral(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
}

function property(name: string, negated: boolean): string {
  const p = negated ? "P" : "p";
  for (const candidate of [name, `Script=${name}`]) {
    try {
      new RegExp(`\\p{${candidate}}`, "u");
      return `\\${p}{${candidate}}`;
    } catch {
      // try the next spelling
    }
  }
  throw new Error(`unknown Unicode class \\p{${name}}`);
}

/** One escape sequence starting at `s[i] === "\\"`; returns the translation and the index after it. */
function escape(s: string, i: number, inClass: boolean): [string, number] {
  const c = s[i + 1];
  if (c === undefined) throw new Error("pattern ends with a lone backslash");
  switch (c) {
    case "w": return [inClass ? WORD : `[${WORD}]`, i + 2];
    case "W": return [inClass ? "\\W" : `[^${WORD}]`, i + 2];
    case "d": return ["\\p{Nd}", i + 2];
    case "D": return ["\\P{Nd}", i + 2];
    case "b": return [inClass ? "\\x08" : `(?:(?<=[${WORD}])(?![${WORD}])|(?<![${WORD}])(?=[${WORD}]))`, i + 2];
    case "B": return [`(?:(?<=[${WORD}])(?=[${WORD}])|(?<![${WORD}])(?![${WORD}]))`, i + 2];
    case "A": return ["(?<![^\\n])", i + 2];
    case "z": return ["(?![^\\n])", i + 2];
    case "p":
    case "P": {
      if (s[i + 2] === "{") {
        const end = s.indexOf("}", i + 3);
        if (end < 0) throw new Error("unclosed \\p{");
        return [property(s.slice(i + 3, end), c === "P"), end + 1];
      }
      return [property(s[i + 2] ?? "", c === "P"), i + 3];
    }
    case "x": {
      if (s[i + 2] === "{") {
        const end = s.indexOf("}", i + 3);
        if (end < 0) throw new Error("unclosed \\x{");
        return [`\\u{${s.slice(i + 3, end)}}`, end + 1];
      }
      return [s.slice(i, i + 4), i + 4];
    }
  }
  if (/[A-Za-z0-9]/.test(c)) return [`\\${c}`, i + 2];
  // Rust lets any punctuation be escaped; JavaScript's `u` mode only its own syntax characters.
  const cp = s.codePointAt(i + 1)!;
  const len = cp > 0xffff ? 2 : 1;
  return [SYNTAX.has(c) || (inClass && c === "-") ? `\\${c}` : `\\u{${cp.toString(16)}}`, i + 1 + len];
}

/** A bracket class starting at `s[i] === "["`. */
function bracket(s: string, i: number): [string, number] {
  let out = "[";
  let j = i + 1;
  if (s[j] === "^") {
    out += "^";
    j++;
  }
  if (s[j] === "]") {
    out += "\\]"; // a leading `]` is a literal in Rust, an empty class in JavaScript
    j++;
  }
  while (j < s.length && s[j] !== "]") {
    if (s[j] === "\\") {
      const [t, next] = escape(s, j, true);
      out += t;
      j = next;
    } else if (s.startsWith("[:", j)) {
      const end = s.indexOf(":]", j + 2);
      const cls = end > 0 ? POSIX[s.slice(j + 2, end)] : undefined;
      if (!cls) throw new Error(`unknown class ${s.slice(j, end > 0 ? end + 2 : j + 8)}`);
      out += cls;
      j = end + 2;
    } else if (s[j] === "[") {
      throw new Error("nested character classes are not supported by the built-in rg");
    } else {
      out += s[j++];
    }
  }
  if (j >= s.length) throw new Error("unclosed character class");
  return [out + "]", j + 1];
}

/** `$` as ripgrep reads it: before a newline or the end; with --crlf also before `\r\n`. */
const lineEnd = (crlf: boolean) => (crlf ? "\\r?(?![^\\n])" : "(?![^\\n])");

export interface TranslateOptions {
  /** --multiline-dotall: `.` matches a newline too. */
  readonly dotall?: boolean;
  /** -U: `\A`, `\z` and `(?-m)` anchors mean the file's ends, not a line's. */
  readonly multiline?: boolean;
  readonly crlf?: boolean;
}

/**
 * Translates one Rust-syntax pattern; a leading `(?i)` (or `(?s)`, `(?m)`, `(?u)`) becomes a flag, and a
 * leading `(?-m)` makes `^` and `$` match at the text's ends only (ripgrep's default is multi-line).
 */
export function translate(pattern: string, t: TranslateOptions = {}): { source: string; ignoreCase: boolean } {
  let s = pattern;
  let ignoreCase = false;
  let dotall = t.dotall ?? false;
  let textEnds = false;
  const lead = /^\(\?([imsuU]*)(?:-([imsuU]+))?\)/.exec(s);
  if (lead && lead[0] !== "(?)") {
    ignoreCase = lead[1]!.includes("i");
    dotall ||= lead[1]!.includes("s");
    textEnds = (lead[2]?.includes("m") ?? false) && t.multiline === true; // each line is its own text otherwise
    s = s.slice(lead[0].length);
  }
  let out = "";
  for (let i = 0; i < s.length; ) {
    const c = s[i]!;
    if (c === "\\" && t.multiline && (s[i + 1] === "A" || s[i + 1] === "z")) {
      out += s[i + 1] === "A" ? "(?<![^])" : "(?![^])"; // under -U the text is the whole file
      i += 2;
    } else if (c === "\\") {
      const [t, next] = escape(s, i, false);
      out += t;
      i = next;
    } else if (c === "[") {
      const [t, next] = bracket(s, i);
      out += t;
      i = next;
    } else if (c === "{") {
      const rep = /^\{\d+(,\d*)?\}/.exec(s.slice(i, i + 24))?.[0];
      out += rep ?? "\\{"; // a repetition, or a literal as Rust reads a brace that starts none
      i += rep ? rep.length : 1;
    } else if (c === "}" || c === "]") {
      out += `\\${c}`; // a literal in Rust outside a repetition or class; an error in JavaScript's `u` mode
      i++;
    } else if (c === ".") {
      out += dotall ? "[^]" : t.crlf ? "[^\\r\\n]" : "[^\\n]";
      i++;
    } else if (c === "^") {
      out += textEnds ? "(?<![^])" : "(?<![^\\n])";
      i++;
    } else if (c === "$") {
      out += textEnds ? "(?![^])" : lineEnd(t.crlf ?? false);
      i++;
    } else if (s.startsWith("(?P<", i)) {
      out += "(?<";
      i += 4;
    } else if (c === "(" && s[i + 1] === "?" && /^\(\?[a-zA-Z-]+\)/.test(s.slice(i, i + 12))) {
      throw new Error("inline flags are supported at the start, `(?i)…`, or as a group, `(?i:…)`");
    } else {
      out += c;
      i++;
    }
  }
  return { source: out, ignoreCase };
}

/** End of the class or class escape at the start of a translated source, or -1. */
function leadingAtomEnd(source: string): number {
  if (source.startsWith("\\s") || source.startsWith("\\S")) return 2;
  if (source.startsWith("\\p{") || source.startsWith("\\P{")) return source.indexOf("}") + 1;
  if (!source.startsWith("[")) return -1;
  for (let j = source[1] === "^" ? 2 : 1; j < source.length; j++) {
    if (source[j] === "\\") j++;
    else if (source[j] === "]") return j + 1;
  }
  return -1;
}

/**
 * A faster regex selecting the same lines: `X+rest` → `(?<=X)rest` and `X*rest` → `rest` when X cannot
 * match a newline (a match starting inside a run of X implies one on the same line). A backtracking
 * engine would otherwise retry the run from each of its characters.
 */
function leadingRun(source: string, flags: string): string | undefined {
  const end = leadingAtomEnd(source);
  const q = source[end];
  if (end <= 0 || (q !== "+" && q !== "*")) return undefined;
  const atom = source.slice(0, end);
  if (new RegExp(atom, flags).test("\n")) return undefined;
  const rest = source.slice(end + (source[end + 1] === "?" ? 2 : 1));
  if (q === "*") return rest;
  return rest === "" ? atom : `(?<=${atom})${rest}`;
}

/** ripgrep's smart case: insensitive unless the pattern has an upper-case letter outside escapes. */
export function hasUppercase(pattern: string): boolean {
  const bare = pattern.replace(/\\[pP]\{[^}]*\}|\\./gu, "");
  return /\p{Lu}/u.test(bare);
}

export interface PatternOptions {
  patterns: readonly string[];
  fixed: boolean;
  word: boolean;
  lineRegexp?: boolean;
  caseMode: CaseMode;
  crlf?: boolean;
  multilineDotall?: boolean;
  multiline?: boolean;
}

/** The search regex for rg's options, or the reason the patterns cannot be compiled. */
export function compilePatterns(o: PatternOptions): CompiledPattern | string {
  if (!o.multiline && o.patterns.some((p) => hasLiteralNewline(p, o.fixed))) return NEWLINE_REFUSED;
  try {
    const t = { dotall: o.multilineDotall, crlf: o.crlf, multiline: o.multiline };
    const parts = o.patterns.map((p) => (o.fixed ? { source: escapeLiteral(p), ignoreCase: false } : translate(p, t)));
    const insensitive =
      o.caseMode === "insensitive" ||
      (o.caseMode === "smart" && !o.patterns.some(hasUppercase)) ||
      parts.some((p) => p.ignoreCase);
    const flags = insensitive ? "iu" : "u";
    const join = (xs: string[]) => (xs.length === 1 ? xs[0]! : xs.map((x) => `(?:${x})`).join("|"));
    let source = parts.length === 0 ? "(?!)" : join(parts.map((p) => p.source)); // no pattern (empty -f) matches nothing
    if (o.word) source = `(?<![${WORD}])(?:${source})(?![${WORD}])`;
    if (o.lineRegexp) source = `(?<![^\\n])(?:${source})${lineEnd(o.crlf ?? false)}`;
    const canRewrite = !o.fixed && !o.word && !o.lineRegexp && parts.length > 0 && o.patterns.every((p) => !p.includes("|"));
    const scan = canRewrite ? join(parts.map((p) => leadingRun(p.source, flags) ?? p.source)) : source;
    const required = o.patterns.map((p) => (o.fixed ? p : requiredLiteral(p)));
    const literals = !insensitive && required.length > 0 && required.every((l) => l) ? (required as string[]) : undefined;
    // Every required character counts for probes, not only the longest run: `\w+_\d+\(` needs `_` and `(`.
    const probed = o.patterns.map((p) => probeBytes(o.fixed ? p : (requiredRuns(p) ?? []).join(""), insensitive));
    const probes = probed.length > 0 && probed.every((b) => b.length > 0) ? probed : undefined;
    const only = o.patterns.length === 1 ? o.patterns[0]! : "";
    const plain = !insensitive && !o.word && !o.lineRegexp && only !== "" && !only.includes("\n") && (o.fixed || ![...only].some((c) => SYNTAX.has(c)));
    return {
      scan: new RegExp(scan, `g${flags}`), exact: new RegExp(source, `g${flags}`), line: new RegExp(source, flags),
      literals, probes, ...(plain ? { plain: only } : {}), patterns: [...o.patterns], ...(o.crlf ? { crlf: true } : {}),
      ...(o.multiline && o.patterns.some((p) => mayMatchNewline(p, o.fixed, o.multilineDotall ?? false)) ? { crossesLines: true } : {}),
      ...(o.multiline ? { multiline: true } : {}),
    };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return `regex parse error: ${JSON.stringify(o.patterns.join(" | "))}: ${why}`;
  }
}

/** ripgrep 13's refusal of a newline in a pattern without -U. */
const NEWLINE_REFUSED =
  "the literal '\"\\n\"' is not allowed in a regex\n\nConsider enabling multiline mode with the --multiline flag (or -U for short).\n" +
  "When multiline mode is enabled, new line characters can be matched.";

/** A newline, or `\n` outside a negated class: what ripgrep refuses without -U (`\s` and `[^\n]` are fine). */
function hasLiteralNewline(p: string, fixed: boolean): boolean {
  if (p.includes("\n")) return true;
  if (fixed) return false;
  let negated: boolean | undefined; // inside a class: whether it is negated
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === "\\") {
      if (p[i + 1] === "n" && negated !== true) return true;
      i++;
    } else if (c === "[" && negated === undefined) negated = p[i + 1] === "^";
    else if (c === "]" && negated !== undefined) negated = undefined;
  }
  return false;
}

/** Whether a pattern may match a newline, judged from its syntax (a negated class may, `\w` may not). */
function mayMatchNewline(p: string, fixed: boolean, dotall: boolean): boolean {
  if (fixed) return p.includes("\n");
  if (p.includes("\n")) return true;
  if (dotall && p.includes(".")) return true;
  return /\\[nsWDPpx]|\[\^|\[\[:(space|cntrl|\^)|\(\?[a-zA-Z]*s/.test(p);
}

/** Bytes from most to least common in source code and prose (a rough order, not measured counts). */
const COMMON = " e\ntaoinsrlcdhupm.(),;f=_g\"ybwv-/:'{}0k1x>[]*<2#\tEj!SATRCI&|DqLNOPM+FzB3$U4H5%6789GWV?@KYXJQZ^~`\\\r";

function rarity(b: number): number {
  const at = b < 0x80 ? COMMON.indexOf(String.fromCharCode(b)) : -1;
  return at >= 0 ? at : b < 0x80 ? COMMON.length + 1 : COMMON.length; // control bytes rarest, then non-ASCII
}

/** Probe bytes looked for per pattern: the rarest two, so one misjudged as rare costs a short scan only. */
const PROBES = 2;

/**
 * Bytes of a required literal's UTF-8 form that a file must hold to match, rarest first. Under case
 * folding only ASCII bytes that are not letters qualify (no other character folds to them). Never NUL or
 * a newline: a binary file is searched with its NULs read as newlines.
 */
export function probeBytes(literal: string, caseless: boolean): number[] {
  const utf8 = Buffer.from(literal);
  const bytes: number[] = []; // each byte once, in order of appearance
  // An index loop: iterating the bytes with for…of costs ~0.2 ms on its first use, in every search.
  for (let i = 0; i < utf8.length; i++) {
    const b = utf8[i]!;
    if (b === 0 || b === 0x0a || bytes.includes(b)) continue;
    if (caseless && (b >= 0x80 || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a))) continue;
    bytes.push(b);
  }
  return bytes.sort((a, b) => rarity(b) - rarity(a)).slice(0, PROBES);
}

/** Index after a bracket class starting at `p[i] === "["`. */
function skipClass(p: string, i: number): number {
  let j = i + 1;
  if (p[j] === "^") j++;
  if (p[j] === "]") j++;
  while (j < p.length && p[j] !== "]") {
    const posix = p.startsWith("[:", j) ? p.indexOf(":]", j + 2) : -1;
    j = posix >= 0 ? posix + 2 : j + (p[j] === "\\" ? 2 : 1); // `[[:digit:]]` ends at its second `]`
  }
  return j + 1;
}

/**
 * The runs of plain characters every match of `pattern` contains, in order. Gives up (undefined) on
 * alternation; stops reading at the first group.
 */
export function requiredRuns(pattern: string): string[] | undefined {
  if (pattern.includes("|") || pattern.startsWith("(?")) return undefined;
  const runs: string[] = [];
  let run = "";
  const end = () => {
    if (run !== "") runs.push(run);
    run = "";
  };
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i]!;
    if (c === "(") break; // text before a group is still required
    let lit: string | undefined;
    let next = i + 1;
    if (c === "\\") {
      const e = pattern[i + 1] ?? "";
      if ("pPxuU".includes(e)) break; // a class or code point whose spelling is no literal text
      if (/[^A-Za-z0-9]/.test(e)) lit = e;
      next = i + 2;
    } else if (c === "[") {
      next = skipClass(pattern, i);
    } else if (!"^$.".includes(c)) {
      lit = c;
    }
    const q = pattern[next];
    if (q === "?" || q === "*" || q === "+" || q === "{") {
      if (lit !== undefined && q === "+") run += lit; // required once
      end();
      if (q === "{") break;
      i = next + 1;
      if (pattern[i] === "?") i++; // lazy form
      continue;
    }
    if (lit === undefined) end();
    else run += lit;
    i = next;
  }
  end();
  return runs;
}

/** The longest required run (see `requiredRuns`), so files without it are skipped before they are decoded. */
export function requiredLiteral(pattern: string): string | undefined {
  let best = "";
  for (const run of requiredRuns(pattern) ?? []) if (run.length > best.length) best = run;
  return best.length >= 2 ? best : undefined;
}
