// Owns what the model reads of a long command output (SPEC §7): the output as a terminal would show it
// (colour and cursor escapes removed, `\r` and erase-line redraws resolved to each line's last state),
// then its digest: every line that looks like trouble (an error, a failure, a panic, an assertion, an
// expected/received pair, a `file:line:col`) with its context, the first warnings and a count of the
// rest, the summary and verdict lines, the head and the tail, and every other run of lines folded into
// one line saying how many, which lines, and what they looked like. Shapes are recognised by what the
// tools print (go test, cargo/rustc, jest/vitest, node:test, pytest, tsc, eslint, npm), not by the
// command's name; anything else gets the same head, tail and trouble. Bounded in time and memory
// whatever the input (binary, invalid UTF-8, one endless line). Does not decide when to digest or where
// the whole output is kept (shell.ts).

/** What the digest keeps, in lines. */
export interface DigestLimits {
  /** Lines kept from the start and from the end. */
  head: number;
  tail: number;
  /** Context around a trouble line: before, and after (expected/received, a code frame, first stack frames). */
  before: number;
  after: number;
  /** Warnings shown with their context; the rest are counted. */
  warnings: number;
  /** A line longer than this is cut (its length said). */
  lineChars: number;
  /** The digest's own size bound, in characters (lines past it are folded too). */
  maxChars: number;
}

export const DEFAULT_DIGEST: DigestLimits = { head: 15, tail: 30, before: 3, after: 12, warnings: 5, lineChars: 500, maxChars: 24_000 };

// ---- a terminal's view: escapes removed, redraws resolved

/** CSI (`ESC [ … final`), OSC/DCS/APC/PM/SOS strings (to BEL or ST), and two-byte escapes. */
const ESCAPE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])/g;

/** One line as a terminal leaves it: `\r` returns to the start and later text overwrites, erase-line
 *  (`ESC[K`, `ESC[2K`) clears, backspace steps back; other escapes are dropped. */
function renderLine(raw: string): string {
  const redraw = raw.includes("\r") || raw.includes("\b");
  if (!redraw) return raw.includes("\x1b") ? raw.replace(ESCAPE, "").trimEnd() : raw;
  let cells: string[] = [];
  let col = 0;
  let i = 0;
  while (i < raw.length) {
    const ch = raw[i]!;
    if (ch === "\r") {
      col = 0;
      i++;
    } else if (ch === "\b") {
      col = Math.max(0, col - 1);
      i++;
    } else if (ch === "\x1b") {
      ESCAPE.lastIndex = i;
      const m = ESCAPE.exec(raw);
      if (!m || m.index !== i) {
        i++;
        continue;
      }
      const seq = m[0];
      // erase in line: 0 (or none) to the end, 1 to the start, 2 the whole line
      const el = /^\x1b\[([012]?)K$/.exec(seq);
      if (el) {
        if (el[1] === "2") cells = [];
        else if (el[1] === "1") cells = cells.map((c, k) => (k <= col ? " " : c));
        else cells.length = Math.min(cells.length, col);
      } else if (/^\x1b\[\d*G$/.test(seq)) {
        col = Math.max(0, Number(seq.slice(2, -1) || "1") - 1);
      }
      i += seq.length;
    } else {
      const cp = raw.codePointAt(i)!;
      const s = String.fromCodePoint(cp);
      cells[col++] = s;
      i += s.length;
    }
  }
  for (let k = 0; k < cells.length; k++) cells[k] ??= " ";
  return cells.join("").trimEnd();
}

/** Colours and text styles (SGR), by far the commonest escapes: removed from the whole text in one pass. */
const SGR = /\x1b\[[0-9;:]*m/g;

/** The output as lines a terminal would show (a trailing newline ends the last line, not a new one).
 *  Escapes are removed line by line, from the lines that have any: one replace over the whole text
 *  builds a second copy of it (measured: 2x slower on 10 MB of coloured test output). */
export function screenLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  if (!text.includes("\r") && !text.includes("\b") && !text.includes("\x1b")) return lines;
  for (let i = 0; i < lines.length; i++) {
    let l = lines[i]!;
    if (l.includes("\x1b")) l = l.replace(SGR, "");
    lines[i] = l.includes("\r") || l.includes("\b") || l.includes("\x1b") ? renderLine(l) : l;
  }
  return lines;
}

// ---- what a line is

/** Trouble: what a developer looks for first. Matched on the rendered line. */
const TROUBLE = [
  /\b(error|errors|failed|failure|failures|failing|panic(ked)?|exception|fatal|traceback|assert(ion)?(error)?|segmentation fault|abort(ed)?|undefined reference|cannot find|not found|timed out|timeout)\b/i,
  /^\s*(FAIL|FAILED|ERROR|ERR!|E\d{3,4}|error\[|✗|✕|✖|×|❌|not ok\b|---\s*FAIL|panicked at|thread '.*' panicked)/,
  /^\s*(Expected|Received|expected|received|actual|Actual|left|right)\b.*[:=]/,
  /^\s*[-+]\s{1,3}(Expected|Received)/,
  /^\s*>\s*\d+\s*\|/, // a code frame's marked line
  /\bat .*\(?[^\s()]+:\d+:\d+\)?$/, // a stack frame with file:line:col
  /^\s*File ".*", line \d+/, // python
  /^\s*-->\s+\S+:\d+:\d+/, // rustc's location
];

/** Trouble at a source location (`src/a.ts:3:7 error …`, tsc's `a.ts(3,7): error`): tried only on a
 *  line holding `:` or `(` before a digit, since trying them on every line is a fifth of the digest's time. */
const LOCATED_TROUBLE = [
  /(^|\s)[\w./\\-]+\.(ts|tsx|js|jsx|mjs|cjs|py|rs|go|c|cc|cpp|h|java|kt|rb|php|cs|swift):\d+(:\d+)?\b.*\b(error|fail|expected|panic)/i,
  /(^|\s)[\w./\\-]+\.(ts|tsx|js|jsx|mjs|cjs|py|rs|go|c|cc|cpp|h|java|kt|rb|php|cs|swift)\(\d+,\d+\): error/,
];
const LOCATED = /[:(]\d/;

const WARNING = /\b(warning|warn|deprecated)\b|^\s*(WARN|⚠)/i;

/** Summary and verdict lines: totals, results, a build's end. */
const SUMMARY = [
  /\b\d+\s+(passed|failed|passing|failing|pending|skipped|todo|errors?|warnings?|tests?|suites?|problems?)\b/i,
  /^\s*(Tests?|Test Suites|Test Files|Snapshots|Time|Duration|Ran|Summary|Totals?|Result)(\s*[:=]|\s{2,})/i,
  /^test result:/,
  /^(ok|FAIL|PASS)\s+\S+\s+[\d.]+s\b/, // go test's package line
  /^(PASS|FAIL|OK|FAILED)\s*$/,
  /^={3,}.*\b(passed|failed|error|in \d)/i, // pytest's closing bar
  /\b(Finished|Compiled|Built|Done|BUILD (SUCCESSFUL|SUCCESS|FAILED))\b/,
  /^# (tests|pass|fail|suites|cancelled|skipped|todo|duration_ms)\b/, // node:test's TAP totals
  /\bexit code\b|\bexited with\b|\bcommand failed\b/i,
  /^Found \d+ errors?/,
];

/** What of a line is classified: its start (a line of megabytes is not scanned whole). */
const CLASSIFIED_CHARS = 2000;
const head = (l: string) => (l.length > CLASSIFIED_CHARS ? l.slice(0, CLASSIFIED_CHARS) : l);
/** Each list as one pattern (one scan a line, not one a pattern), case aside. */
const any = (rs: RegExp[]) => new RegExp(rs.map((r) => `(?:${r.source})`).join("|"), "i");
const TROUBLE_ANY = any(TROUBLE);
const LOCATED_ANY = any(LOCATED_TROUBLE);
const SUMMARY_ANY = any(SUMMARY);
const isTrouble = (line: string) => {
  const l = head(line);
  return TROUBLE_ANY.test(l) || (LOCATED.test(l) && LOCATED_ANY.test(l));
};
const isSummary = (l: string) => SUMMARY_ANY.test(head(l));
/** Asked only of a line that is no trouble. */
const isWarning = (l: string) => WARNING.test(head(l));

/** A line's shape: what look-alike lines share (numbers, hashes, durations and quoted names reduced). */
function shapeOf(line: string): string {
  return head(line)
    .trim()
    .replace(/\([^)]*\d[^)]*\)/g, "(…)")
    .replace(/"[^"]*"|'[^']*'|`[^`]*`/g, "…")
    .replace(/[0-9a-f]{7,}/gi, "#")
    .replace(/\d+(\.\d+)?/g, "#")
    .split(/\s+/)
    .slice(0, 2)
    .join(" ")
    .replace(/[\w.-]+\/[\w./-]+/g, "PATH");
}

// ---- the digest

export interface Digest {
  text: string;
  /** Lines in the output, and lines shown whole. */
  lines: number;
  shown: number;
}

/** A run of hidden lines as one line: how many, which, and what they looked like. */
/** Lines of a run whose shapes are counted (its first and last): a run of 100,000 costs no more. */
const SHAPES_SAMPLED = 40;

function foldLine(lines: readonly string[], from: number, to: number, lineChars: number): string {
  const counts = new Map<string, { n: number; example: string }>();
  const sampled = to - from > SHAPES_SAMPLED;
  for (let i = from; i < to; i++) {
    if (sampled && i === from + SHAPES_SAMPLED / 2) i = to - SHAPES_SAMPLED / 2;
    const s = shapeOf(lines[i]!);
    const c = counts.get(s);
    if (c) c.n++;
    else counts.set(s, { n: 1, example: lines[i]! });
  }
  const top = [...counts.values()].sort((a, b) => b.n - a.n).slice(0, 2);
  const like = top.map((c) => `${sampled ? "mostly" : c.n} like \`${clip(c.example.trim(), Math.min(lineChars, 100))}\``).join(", ");
  const n = to - from;
  return `[… ${n} line${n === 1 ? "" : "s"} folded (lines ${from + 1}–${to}): ${like}${counts.size > 2 ? `, and ${counts.size - 2} other kind${counts.size === 3 ? "" : "s"}` : ""} …]`;
}

function clip(line: string, max: number): string {
  if (line.length <= max) return line;
  const chars = Array.from(line.slice(0, max * 2));
  if (chars.length <= max && line.length <= max * 2) return line;
  const kept = chars.slice(0, max).join("");
  return `${kept}… [${line.length - kept.length} more characters]`;
}

/**
 * The digest of `lines` (screenLines'): which lines to show whole, the rest folded. Every trouble and
 * summary line is kept (with its context, within `maxChars`: past it the lowest-priority kept lines,
 * context and warnings, are folded first; trouble lines go last).
 */
export function digestLines(lines: readonly string[], limits: DigestLimits = DEFAULT_DIGEST): Digest {
  const n = lines.length;
  // priority per line: 0 hidden, 1 head/tail/context, 2 warning, 3 summary, 4 trouble
  const keep = new Uint8Array(n);
  const mark = (i: number, p: number) => {
    if (i >= 0 && i < n && keep[i]! < p) keep[i] = p;
  };
  for (let i = 0; i < Math.min(limits.head, n); i++) mark(i, 1);
  for (let i = Math.max(0, n - limits.tail); i < n; i++) mark(i, 1);
  let warnings = 0;
  let warningsHidden = 0;
  for (let i = 0; i < n; i++) {
    const l = lines[i]!;
    if (isTrouble(l)) {
      mark(i, 4);
      for (let k = 1; k <= limits.before; k++) mark(i - k, 1);
      for (let k = 1; k <= limits.after; k++) mark(i + k, 1);
    } else if (isSummary(l)) {
      mark(i, 3);
    } else if (isWarning(l)) {
      if (warnings++ < limits.warnings) {
        mark(i, 2);
        mark(i + 1, 1);
        mark(i + 2, 1);
      } else warningsHidden++;
    }
  }
  // Within the size bound: drop the lowest priorities first.
  const size = (p: number) => {
    let chars = 0;
    for (let i = 0; i < n; i++) if (keep[i]! >= p) chars += Math.min(lines[i]!.length, limits.lineChars) + 1;
    return chars;
  };
  let floor = 1;
  while (floor < 4 && size(floor) > limits.maxChars) floor++;
  const out: string[] = [];
  let shown = 0;
  for (let i = 0; i < n; ) {
    if (keep[i]! >= floor) {
      out.push(clip(lines[i]!, limits.lineChars));
      shown++;
      i++;
      continue;
    }
    let j = i;
    while (j < n && keep[j]! < floor) j++;
    out.push(j - i === 1 ? clip(lines[i]!, limits.lineChars) : foldLine(lines, i, j, limits.lineChars));
    if (j - i === 1) shown++;
    i = j;
  }
  if (warningsHidden > 0) out.push(`[${warningsHidden} more warning line${warningsHidden === 1 ? "" : "s"} not shown in full: they are in the folded runs above]`);
  return { text: out.join("\n"), lines: n, shown };
}

/** The digest of an output as printed (bytes or text). */
export function digestOutput(output: string, limits: DigestLimits = DEFAULT_DIGEST): Digest {
  return digestLines(screenLines(output), limits);
}

/** A command that reads a file for the model to see as it is (`cat f`, `sed -n 'a,bp' f`, `head`,
 *  `tail`, `nl`, `bat` of files, without a pipe into another program): its output is not digested. */
export function readsAFile(command: string): boolean {
  const c = command.trim();
  if (/[|;&`$]|\n/.test(c.replace(/'[^']*'|"[^"]*"/g, ""))) return false;
  return /^(cat|head|tail|nl|sed\s+-n|awk\s+'NR|bat|less|more|wc)\b/.test(c);
}
