// Owns what the permission engine knows of shell syntax: whether a command is one simple command
// (no control syntax: nothing chained, piped, substituted, redirected, commented or ANSI-C quoted),
// the simple commands a compound one is made of (for deny rules and remembered rejections to match
// anywhere in it), and their words as bash reads them. Reads quoting as bash does; any doubt is control.

export interface ShellCommandShape {
  /** The first control syntax found, e.g. `;`, `&&`, `$(`, `>`, `#`, `$'`; undefined for one simple command. */
  control: string | undefined;
  /** The simple commands in it (substitutions' insides included, here-document bodies not), as written, trimmed. */
  segments: string[];
  /** Each segment's words as bash reads them: quotes and backslashes removed, redirections left out. */
  words: string[][];
}

/** The control syntax named for a command nested too deeply to read. */
export const UNREADABLE = "nesting too deep to read";

/** Words bash reads as grammar at the start of a command: a command starting with one is compound. */
const RESERVED = new Set(["!", "{", "}", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in", "select", "then", "time", "until", "while"]);

// Operators, longest first so `&&` is named as such rather than as `&`.
const SEPARATORS = [";;&", "&&", "||", ";;", ";&", "|&", ";", "&", "|"];
const REDIRECTIONS = ["&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<<", "<>", "<&", ">", "<"];
/** Characters that end an unquoted word. */
const WORD_END = new Set([" ", "\t", "\n", ";", "&", "|", "(", ")", "<", ">"]);
/** Characters a backslash escapes inside double quotes (and, without `"`, in a here-document body). */
const DQ_ESCAPES = new Set(["$", "`", '"', "\\", "\n"]);
const HEREDOC_ESCAPES = new Set(["$", "`", "\\", "\n"]);

interface Found {
  start: number;
  text: string;
  words: string[];
}

interface Word {
  value: string;
  end: number;
  quoted: boolean;
  /** The word with each quoted or escaped character as `_` and each expansion as `$`: what bash may still expand. */
  bare: string;
}

class Reader {
  control: string | undefined;
  readonly found: Found[] = [];
  #heredocs: { delimiter: string; stripTabs: boolean; expands: boolean }[] = [];

  constructor(
    readonly src: string,
    /** Where `src` starts in the command as given, to keep segments in order. */
    readonly base: number,
  ) {}

  flag(token: string): void {
    this.control ??= token;
  }

  /** Newlines, carriage returns and NULs count as control wherever they are, quoted or not. */
  #note(text: string): void {
    for (const c of ["\n", "\r", "\0"]) if (text.includes(c)) this.flag(c);
  }

  /**
   * Reads commands from `i` to the end or, in a substitution (`inner`), to its closing `)`, and
   * returns the index after it.
   */
  list(i: number, inner: boolean): number {
    const src = this.src;
    let depth = 0;
    /** `case` statements open here: a `)` then ends a pattern (`case x in x) …`), not a substitution. */
    let cases = 0;
    let cmd = { start: -1, end: -1, words: [] as string[], named: false, lastRaw: "", lastEnd: -1 };
    const finish = () => {
      if (cmd.start >= 0) this.found.push({ start: this.base + cmd.start, text: src.slice(cmd.start, cmd.end).trim(), words: cmd.words });
      cmd = { start: -1, end: -1, words: [], named: false, lastRaw: "", lastEnd: -1 };
    };
    const touch = (from: number, to: number) => {
      if (cmd.start < 0) cmd.start = from;
      cmd.end = to;
    };
    while (i < src.length) {
      const c = src[i]!;
      if (c === " " || c === "\t") {
        i++;
        continue;
      }
      if (c === "#") {
        // Only reached at the start of a word: a comment, to the end of the line.
        this.flag("#");
        while (i < src.length && src[i] !== "\n") i++;
        continue;
      }
      if (c === "\n") {
        this.flag("\n");
        finish();
        i = this.#heredocBodies(i + 1);
        continue;
      }
      if (c === ")") {
        if (depth === 0 && cases > 0) {
          this.flag(")");
          finish();
          i++;
          continue;
        }
        if (inner && depth === 0) {
          finish();
          return i + 1;
        }
        this.flag(")");
        depth--;
        finish();
        i++;
        continue;
      }
      if (c === "(") {
        this.flag("(");
        depth++;
        finish();
        i++;
        continue;
      }
      const processSubstitution = (c === "<" || c === ">") && src[i + 1] === "(";
      // Redirections first: `&>` is one, not `&` then `>`.
      const redirection = processSubstitution ? undefined : REDIRECTIONS.find((op) => src.startsWith(op, i));
      const separator = redirection ? undefined : SEPARATORS.find((op) => src.startsWith(op, i));
      if (separator) {
        this.flag(separator);
        finish();
        i += separator.length;
        continue;
      }
      if (redirection) {
        this.flag(redirection);
        // `2>&1`, `{fd}>x`: the number or name just before it is part of the redirection, not a word.
        if (cmd.lastEnd === i && /^(\d+|\{\w+\})$/.test(cmd.lastRaw)) cmd.words.pop();
        touch(i, i + redirection.length);
        i += redirection.length;
        while (src[i] === " " || src[i] === "\t") i++;
        const target = this.word(i);
        if (redirection === "<<" || redirection === "<<-") {
          this.#heredocs.push({ delimiter: target.value, stripTabs: redirection === "<<-", expands: !target.quoted });
        }
        if (target.end > i) touch(i, target.end);
        i = target.end;
        cmd.lastEnd = -1;
        continue;
      }
      const start = i;
      const w = this.word(i);
      if (w.end === start) {
        // Nothing a word can start with: never loop in place.
        this.flag(c);
        i++;
        continue;
      }
      const raw = src.slice(start, w.end);
      if (cmd.words.length === 0 && RESERVED.has(raw)) this.flag(raw);
      if (cmd.words.length === 0 && raw === "case") cases++;
      if (cmd.words.length === 0 && raw === "esac" && cases > 0) cases--;
      // Brace expansion makes words bash reads differently (`{rm,-rf,x}`).
      if (/\{[^{}]*(,|\.\.)[^{}]*\}/.test(w.bare)) this.flag("{");
      if (!cmd.named && !ASSIGNMENT.test(w.bare)) {
        cmd.named = true;
        // A command name bash finds only on expanding it (`$X`, `/bin/r?`): which command runs is unknown.
        const expands = /[$*?]|\[.*\]/.exec(w.bare);
        if (expands) this.flag(expands[0]);
      }
      touch(start, w.end);
      cmd.words.push(w.value);
      cmd.lastRaw = raw;
      cmd.lastEnd = w.end;
      i = w.end;
    }
    finish();
    if (inner) this.flag("an unclosed $(");
    return i;
  }

  /** One word from `i`: its value with quotes and backslashes removed (substitutions kept as written). */
  word(i: number): Word {
    const src = this.src;
    const start = i;
    let value = "";
    let quoted = false;
    let bare = "";
    while (i < src.length) {
      const c = src[i]!;
      const from = value.length;
      const expansion = c === "$" || c === "`" || c === "<" || c === ">";
      const step = this.#wordPart(i, start, c);
      if (step === undefined) break;
      value += step.value;
      quoted ||= step.quoted;
      // Double quotes do not stop expansions inside them (`"$X"`).
      const expandsInside = step.quoted && (c === '"' || (c === "$" && src[i + 1] === '"')) && /[$`]/.test(src.slice(i + 1, step.end));
      bare += (expansion && step.value.length > 1) || expandsInside ? "$" : step.quoted ? "_".repeat(value.length - from) : step.value;
      i = step.end;
    }
    return { value, end: i, quoted, bare };
  }

  /** One part of a word at `i` (a character, a quoted string, a substitution); undefined at the word's end. */
  #wordPart(i: number, start: number, c: string): { value: string; end: number; quoted: boolean } | undefined {
    const src = this.src;
    const plain = (value: string, end: number) => ({ value, end, quoted: false });
    const quoted = (value: string, end: number) => ({ value, end, quoted: true });
    if (c === "<" || c === ">") {
      if (i !== start || src[i + 1] !== "(") return undefined;
      this.flag(`${c}(`);
      const end = this.list(i + 2, true);
      return plain(src.slice(i, end), end);
    }
    if (WORD_END.has(c)) return undefined;
    if (c === "\\") {
      const next = src[i + 1];
      if (next === undefined) {
        this.flag("\\");
        return quoted(c, i + 1);
      }
      // A line continuation: bash joins the lines into one word.
      if (next === "\n") {
        this.flag("\\\n");
        return quoted("", i + 2);
      }
      this.#note(next);
      return quoted(next, i + 2);
    }
    if (c === "'") {
      const close = src.indexOf("'", i + 1);
      if (close < 0) this.flag("an unclosed '");
      const end = close < 0 ? src.length : close;
      this.#note(src.slice(i + 1, end));
      return quoted(src.slice(i + 1, end), close < 0 ? end : end + 1);
    }
    if (c === '"' || (c === "$" && src[i + 1] === '"')) {
      const open = c === '"' ? 1 : 2;
      if (open === 2) this.flag('$"');
      const q = this.#doubleQuoted(i + open, src.length, DQ_ESCAPES, true);
      if (!q.closed) this.flag(`an unclosed ${src.slice(i, i + open)}`);
      return quoted(q.value, q.end);
    }
    if (c === "$" && src[i + 1] === "'") {
      this.flag("$'");
      const q = ansiC(src, i + 2);
      if (!q.closed) this.flag("an unclosed $'");
      this.#note(q.value);
      return quoted(q.value, q.end);
    }
    if (c === "`") {
      const end = this.#backquote(i);
      return plain(src.slice(i, end), end);
    }
    if (c === "$" && (src[i + 1] === "(" || src[i + 1] === "{" || src[i + 1] === "[")) {
      const end = this.#expansion(i);
      return plain(src.slice(i, end), end);
    }
    if (c === "\r" || c === "\0") this.flag(c);
    return plain(c, i + 1);
  }

  /** `$(…)`, `${…}` or `$[…]` at `i` (at its `$`); returns the index after it. */
  #expansion(i: number): number {
    const src = this.src;
    const open = src[i + 1];
    if (open === "(") {
      this.flag("$(");
      return this.list(i + 2, true);
    }
    this.flag(`$${open}`);
    const close = open === "{" ? "}" : "]";
    let j = i + 2;
    while (j < src.length) {
      const c = src[j]!;
      if (c === close) return j + 1;
      if (c === "\\") j += 2;
      else if (c === "'") {
        const end = src.indexOf("'", j + 1);
        j = end < 0 ? src.length : end + 1;
      } else if (c === '"') j = this.#doubleQuoted(j + 1, src.length, DQ_ESCAPES, true).end;
      else if (c === "`") j = this.#backquote(j);
      else if (c === "$" && (src[j + 1] === "(" || src[j + 1] === "{" || src[j + 1] === "[")) j = this.#expansion(j);
      else j++;
    }
    this.flag(`an unclosed $${open}`);
    return j;
  }

  /**
   * Double-quoted text from `i` up to `limit` (or its closing `"` when `closes`): only `$(`, `${`,
   * `$[` and backquotes are read inside it; `escapes` are the characters a backslash escapes.
   */
  #doubleQuoted(i: number, limit: number, escapes: Set<string>, closes: boolean): { value: string; end: number; closed: boolean } {
    const src = this.src;
    let value = "";
    while (i < limit) {
      const c = src[i]!;
      if (closes && c === '"') return { value, end: i + 1, closed: true };
      if (c === "\\" && i + 1 < limit && escapes.has(src[i + 1]!)) {
        if (src[i + 1] === "\n") this.flag("\\\n");
        else value += src[i + 1];
        i += 2;
        continue;
      }
      if (c === "`") {
        const end = this.#backquote(i);
        value += src.slice(i, end);
        i = end;
        continue;
      }
      if (c === "$" && (src[i + 1] === "(" || src[i + 1] === "{" || src[i + 1] === "[")) {
        const end = this.#expansion(i);
        value += src.slice(i, end);
        i = end;
        continue;
      }
      this.#note(c);
      value += c;
      i++;
    }
    return { value, end: i, closed: false };
  }

  /** A backquoted substitution at `i`: bash reads its inside again as commands. Returns the index after it. */
  #backquote(i: number): number {
    const src = this.src;
    this.flag("`");
    let inside = "";
    let j = i + 1;
    for (; j < src.length && src[j] !== "`"; j++) {
      if (src[j] === "\\" && (src[j + 1] === "$" || src[j + 1] === "`" || src[j + 1] === "\\")) j++;
      inside += src[j];
    }
    if (j >= src.length) this.flag("an unclosed `");
    const sub = new Reader(inside, this.base + i + 1);
    sub.list(0, false);
    this.found.push(...sub.found);
    return Math.min(j + 1, src.length);
  }

  /** The bodies of the here-documents opened on the line that ended at `i`; returns the index after them. */
  #heredocBodies(i: number): number {
    const src = this.src;
    for (const doc of this.#heredocs.splice(0)) {
      const bodyStart = i;
      let bodyEnd = src.length;
      while (i < src.length) {
        const nl = src.indexOf("\n", i);
        const lineEnd = nl < 0 ? src.length : nl;
        const line = src.slice(i, lineEnd);
        if ((doc.stripTabs ? line.replace(/^\t+/, "") : line) === doc.delimiter) {
          bodyEnd = i;
          i = nl < 0 ? src.length : nl + 1;
          break;
        }
        i = nl < 0 ? src.length : nl + 1;
      }
      if (bodyEnd === src.length) this.flag("an unterminated here-document");
      // An unquoted delimiter: the body is expanded as in double quotes, substitutions and all.
      if (doc.expands) this.#doubleQuoted(bodyStart, bodyEnd, HEREDOC_ESCAPES, false);
    }
    return i;
  }
}

/** A `$'…'` string's value from `i` (after the opening quote): backslash escapes decoded as bash does. */
function ansiC(src: string, i: number): { value: string; end: number; closed: boolean } {
  const simple: Record<string, string> = { a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\\": "\\", "'": "'", '"': '"', "?": "?" };
  let value = "";
  while (i < src.length) {
    const c = src[i]!;
    if (c === "'") return { value, end: i + 1, closed: true };
    if (c !== "\\" || i + 1 >= src.length) {
      value += c;
      i++;
      continue;
    }
    const e = src[i + 1]!;
    const hex = (max: number, from: number) => /^[0-9a-fA-F]+/.exec(src.slice(from, from + max))?.[0];
    if (simple[e] !== undefined) {
      value += simple[e];
      i += 2;
    } else if (/[0-7]/.test(e)) {
      const digits = /^[0-7]{1,3}/.exec(src.slice(i + 1))![0];
      value += String.fromCharCode(parseInt(digits, 8) & 0xff);
      i += 1 + digits.length;
    } else if ((e === "x" || e === "u" || e === "U") && hex(e === "x" ? 2 : e === "u" ? 4 : 8, i + 2)) {
      const digits = hex(e === "x" ? 2 : e === "u" ? 4 : 8, i + 2)!;
      const code = parseInt(digits, 16);
      value += code <= 0x10ffff ? String.fromCodePoint(code) : "";
      i += 2 + digits.length;
    } else if (e === "c" && i + 2 < src.length) {
      value += String.fromCharCode(src.charCodeAt(i + 2) & 0x1f);
      i += 3;
    } else {
      value += c + e;
      i += 2;
    }
  }
  return { value, end: i, closed: false };
}

/**
 * Reads `command` as bash does: its quoting (`'…'`, `"…"`, `$'…'`, `$"…"`, backslashes), comments,
 * substitutions (`$(…)`, backquotes, `<(…)`, `${…}`), redirections and here-documents. `${` counts as
 * control (its expansions can hide a substitution), a plain `$NAME` does not.
 */
export function shellCommandShape(command: string): ShellCommandShape {
  const reader = new Reader(command, 0);
  try {
    reader.list(0, false);
  } catch (err) {
    // Substitutions nested deeper than the stack: nothing in it can be trusted, so every deny rule on
    // commands matches it (rules.ts) and no allow does.
    if (!(err instanceof RangeError)) throw err;
    return { control: UNREADABLE, segments: [command.trim()], words: [] };
  }
  const found = reader.found.filter((f) => f.text !== "" || f.words.length > 0).sort((a, b) => a.start - b.start);
  return { control: reader.control, segments: found.map((f) => f.text), words: found.map((f) => f.words) };
}

/** A word assigning a variable (`FOO=1`, `a[i]+=x`) rather than naming the command. */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/**
 * Every form of `command` a deny or ask rule is matched against: the command as written, each
 * simple command in it, and each one's words as bash reads them, with and without the reserved
 * words and variable assignments in front (`if rm …`, `FOO=1 rm …`, `'rm' …`, `$'rm' …`).
 */
export function commandForms(command: string): string[] {
  const shape = shellCommandShape(command);
  const forms = new Set([command, ...shape.segments]);
  for (const words of shape.words) {
    forms.add(words.join(" "));
    let k = 0;
    while (k < words.length && (RESERVED.has(words[k]!) || ASSIGNMENT.test(words[k]!))) k++;
    if (words[k - 1] === "time" && words[k] === "-p") k++;
    forms.add(words.slice(k).join(" "));
  }
  return [...forms];
}

/**
 * Commands that may be remembered by their first words alone, because no arguments make them run
 * other code or write files; `refuse` names the arguments that do (then the command is remembered
 * whole). docs/permissions.md lists them.
 */
export const REMEMBERED_ALONE: readonly { words: readonly string[]; refuse?: (arg: string) => boolean }[] = [
  { words: ["ls"] },
  { words: ["cat"] },
  { words: ["head"] },
  { words: ["tail"] },
  { words: ["wc"] },
  { words: ["pwd"] },
  { words: ["echo"] },
  { words: ["grep"] },
  // ripgrep runs a preprocessor program given with `--pre`, and (14 and later) the program given with
  // `--hostname-bin` to name the host in hyperlinks.
  { words: ["rg"], refuse: (arg) => arg.startsWith("--pre") || arg.startsWith("--hostname-bin") },
  { words: ["git", "status"] },
];

/**
 * The words a remembered approval of this command covers: the first words, when the command is one
 * simple command whose words (quotes and backslashes removed) start with an entry of
 * REMEMBERED_ALONE; otherwise the whole command, exactly. `whole` tells which.
 */
export function rememberedWords(command: string): { words: string; whole: boolean } {
  const shape = shellCommandShape(command);
  const words = shape.words.length === 1 ? shape.words[0]! : [];
  if (shape.control === undefined) {
    for (const entry of REMEMBERED_ALONE) {
      const n = entry.words.length;
      if (entry.words.every((w, k) => words[k] === w) && !words.slice(n).some((a) => entry.refuse?.(a))) return { words: entry.words.join(" "), whole: false };
    }
  }
  return { words: command.trim(), whole: true };
}

/** The argument read as a shell command, whatever the tool: `dev__shell`'s, and any other tool's of that name. */
export const SHELL_COMMAND_ARG = "command";

/** The call's shell command, when its input has one. */
export function shellCommandOf(input: unknown): string | undefined {
  const value = input && typeof input === "object" ? (input as Record<string, unknown>)[SHELL_COMMAND_ARG] : undefined;
  return typeof value === "string" ? value : undefined;
}
