// Owns ignore-file rules as ripgrep applies them: `.rgignore` > `.ignore` > `.gitignore` > `.git/info/exclude`
// (a worktree's `.git` file followed), the deepest directory wins, git rules only inside a repository (anywhere
// under --no-require-git) and never above its root, then --ignore-file rules; compiled once per file, a
// directory's ignored state kept for its files. Does not walk directories (walk.ts) nor read git's global excludes.
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { POSIX } from "./rg-regex.ts";

/** A rule's say on a path: skip it, keep it despite later rules, or no opinion. */
export type Verdict = "ignore" | "whitelist" | undefined;

/** The rules one directory contributes, linked to its parent directory's frame. */
export interface RuleFrame {
  readonly parent: RuleFrame | undefined;
  readonly hasGit: boolean;
  /** True when this directory or any ancestor holds `.git`: git rules apply only then. */
  readonly anyGit: boolean;
  /** Turns a walk-relative path into one relative to this directory: prefix + path.slice(strip). */
  readonly prefix: string;
  readonly strip: number;
  readonly custom: RuleSet | undefined;
  readonly dotIgnore: RuleSet | undefined;
  readonly git: RuleSet | undefined;
  readonly exclude: RuleSet | undefined;
  /** Filled on first use: the frames from here up with rules to ask. */
  steps?: readonly Step[];
}

const FILES = [".rgignore", ".ignore", ".gitignore"] as const;

/** Which ignore files count (ripgrep's --no-ignore-dot, --no-ignore-vcs, --no-ignore-exclude, --no-ignore-parent). */
export interface IgnoreSources {
  /** `.rgignore` (ripgrep reads it even with --no-ignore-dot). */
  readonly custom: boolean;
  /** `.ignore`. */
  readonly dot: boolean;
  /** `.gitignore` and `.git/info/exclude`. */
  readonly vcs: boolean;
  readonly exclude: boolean;
  /** Ignore files in directories above a walk root. */
  readonly parent: boolean;
  /** false (--no-require-git): `.gitignore` files apply outside a git repository too. */
  readonly requireGit?: boolean;
}

export const ALL_SOURCES: IgnoreSources = { custom: true, dot: true, vcs: true, exclude: true, parent: true };
const NO_SOURCES: IgnoreSources = { custom: false, dot: false, vcs: false, exclude: false, parent: false };

function load(path: string): RuleSet | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined; // unreadable rules are skipped, as git does
  }
  return new RuleSet(text);
}

interface Rule {
  readonly re: RegExp;
  readonly negative: boolean;
  /** A trailing `/`: only directories match. */
  readonly dirOnly: boolean;
  /** No `/` inside: matched against the last path component, at any depth. */
  readonly basename: boolean;
}

const inClass = (c: string) => ("\\]^-[".includes(c) ? `\\${c}` : c);
const outsideClass = (c: string) => ("\\^$.*+?()[]{}|/".includes(c) ? `\\${c}` : c);

/** A bracket expression at `p[i] === "["` as a regex class and the index after it, or undefined when unclosed. */
function bracketClass(p: string, i: number): [string, number] | undefined {
  let j = i + 1;
  const negated = p[j] === "!" || p[j] === "^";
  if (negated) j++;
  let body = "";
  for (let first = true; j < p.length; first = false) {
    let c = p[j]!;
    if (c === "]" && !first) return [negated ? `[^/${body}]` : `[${body}]`, j + 1];
    if (c === "[" && p[j + 1] === ":") {
      const end = p.indexOf(":]", j + 2);
      const cls = end > 0 ? POSIX[p.slice(j + 2, end)] : undefined;
      if (cls !== undefined) {
        body += cls;
        j = end + 2;
        continue;
      }
    }
    if (c === "\\" && j + 1 < p.length) c = p[++j]!;
    if (p[j + 1] === "-" && p[j + 2] !== undefined && p[j + 2] !== "]") {
      let hi = p[j + 2]!;
      let next = j + 3;
      if (hi === "\\" && j + 3 < p.length) hi = p[j + 3]!, next = j + 4;
      body += `${inClass(c)}-${inClass(hi)}`;
      j = next;
      continue;
    }
    body += inClass(c);
    j++;
  }
  return undefined;
}

/** One gitignore glob (without its `!`, anchoring `/` and trailing `/`) as an anchored regex source. */
function globSource(p: string): string {
  let out = "";
  for (let i = 0; i < p.length; ) {
    const c = p[i]!;
    if (c === "*") {
      let j = i;
      while (p[j] === "*") j++;
      const delimited = j - i >= 2 && (i === 0 || p[i - 1] === "/") && (j === p.length || p[j] === "/");
      if (!delimited) out += "[^/]*";
      else if (j === p.length) out += ".*";
      else {
        out += "(?:.*/)?"; // `**/`: any number of directories, none included
        j++;
      }
      i = j;
    } else if (c === "?") {
      out += "[^/]";
      i++;
    } else if (c === "[") {
      const cls = bracketClass(p, i);
      out += cls ? cls[0] : "\\[";
      i = cls ? cls[1] : i + 1;
    } else if (c === "\\") {
      out += outsideClass(p[i + 1] ?? "");
      i += 2;
    } else {
      out += outsideClass(c);
      i++;
    }
  }
  return `^${out}$`;
}

/** One line of an ignore file as a rule, or undefined for blanks, comments and lines git skips. */
function parseRule(line: string): Rule | undefined {
  if (line[0] === "#") return undefined;
  let body = line;
  const negative = body[0] === "!";
  if (negative) body = body.slice(1);
  // Trailing spaces go, unless the last is escaped by an odd run of backslashes (then one stays).
  let end = body.length;
  while (body[end - 1] === " ") end--;
  if (end < body.length) {
    let slashes = 0;
    while (body[end - 1 - slashes] === "\\") slashes++;
    body = slashes % 2 === 1 ? body.slice(0, end) + " " : body.slice(0, end);
  }
  let trailing = 0;
  while (body[body.length - 1 - trailing] === "\\") trailing++;
  if (body === "" || trailing % 2 === 1) return undefined; // nothing left, or a lone backslash at the end
  // git reads `\/` inside a pattern as a slash; one at either end leaves a pattern that matches nothing.
  let escapedSlash = false;
  body = body.replace(/\\(.)/gs, (all, c: string, at: number) => {
    if (c !== "/") return all;
    escapedSlash ||= at === 0 || at + 2 === body.length;
    return "/";
  });
  if (escapedSlash) return undefined;
  const dirOnly = body.endsWith("/");
  if (dirOnly) body = body.slice(0, -1);
  const basename = !body.includes("/");
  if (body.startsWith("/")) body = body.slice(1);
  if (body === "") return undefined;
  try {
    return { re: new RegExp(globSource(body), "s"), negative, dirOnly, basename };
  } catch {
    return undefined; // e.g. a range out of order, which matches nothing in git
  }
}

/**
 * One ignore file's rules, compiled once: the last rule matching a path decides, and a path below a
 * directory the rules ignore is ignored too (git cannot re-include it). Paths are relative to the file's
 * directory, without a trailing slash.
 */
export class RuleSet {
  private readonly rules: Rule[] = [];
  /** Directories seen so far: whether they or an ancestor are ignored. */
  private readonly dirs = new Map<string, boolean>();
  /** The last directory asked about and its answer: a walk asks about one directory's files in a row. */
  private lastDir = "";
  private lastIgnored = false;

  /** An ignore file's text, or (an array) one rule per entry, as -g globs come. */
  constructor(text: string | readonly string[]) {
    let lines: readonly string[];
    if (typeof text === "string") {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (text.endsWith("\r")) text = text.slice(0, -1);
      lines = text.split(/\r?\n/);
    } else lines = text;
    for (const line of lines) {
      const rule = parseRule(line);
      if (rule) this.rules.push(rule);
    }
  }

  verdict(path: string, isDir: boolean): Verdict {
    const cut = path.lastIndexOf("/");
    if (cut > 0) {
      const same = cut === this.lastDir.length && path.startsWith(this.lastDir);
      if (!same) {
        this.lastDir = path.slice(0, cut);
        this.lastIgnored = this.dirIgnored(this.lastDir);
      }
      if (this.lastIgnored) return "ignore";
    }
    return this.own(path, cut, isDir);
  }

  /** The rules' say on the path itself, its ancestors aside. */
  private own(path: string, cut: number, isDir: boolean): Verdict {
    const rules = this.rules;
    let name: string | undefined;
    for (let i = rules.length - 1; i >= 0; i--) {
      const r = rules[i]!;
      if (r.dirOnly && !isDir) continue;
      if (r.re.test(r.basename ? (name ??= path.slice(cut + 1)) : path)) return r.negative ? "whitelist" : "ignore";
    }
    return undefined;
  }

  private dirIgnored(dir: string): boolean {
    let known = this.dirs.get(dir);
    if (known === undefined) {
      const cut = dir.lastIndexOf("/");
      known = (cut > 0 && this.dirIgnored(dir.slice(0, cut))) || this.own(dir, cut, true) === "ignore";
      this.dirs.set(dir, known);
    }
    return known;
  }
}

/**
 * The repository directory holding `info/exclude`: `.git` itself, or for a worktree's `.git` file
 * (`gitdir: …`) the common directory its `commondir` names.
 */
export function gitCommonDir(dotGit: string): string {
  let text: string;
  try {
    text = readFileSync(dotGit, "utf8");
  } catch {
    return dotGit; // a directory (or unreadable): used as it is
  }
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!m) return dotGit;
  const gitdir = resolve(dirname(dotGit), m[1]!);
  try {
    const common = readFileSync(join(gitdir, "commondir"), "utf8").trim();
    return isAbsolute(common) ? common : resolve(gitdir, common);
  } catch {
    return gitdir;
  }
}

/**
 * Rules of directory `abs`. `names` (its listing) avoids probing for files that are not there;
 * without it the files are probed (ancestors of a walk root).
 */
export function frameFor(
  abs: string,
  parent: RuleFrame | undefined,
  place: { prefix: string; strip: number },
  names?: ReadonlySet<string>,
  use: IgnoreSources = ALL_SOURCES,
): RuleFrame {
  const has = (n: string) => (names ? names.has(n) : existsSync(join(abs, n)));
  const hasGit = has(".git");
  const wanted = [use.custom, use.dot, use.vcs];
  const [custom, dotIgnore, git] = FILES.map((f, i) => (wanted[i] && has(f) ? load(join(abs, f)) : undefined));
  const exclude = hasGit && use.vcs && use.exclude ? load(join(gitCommonDir(join(abs, ".git")), "info", "exclude")) : undefined;
  return {
    parent,
    hasGit,
    anyGit: hasGit || (parent?.anyGit ?? false) || use.requireGit === false,
    ...place,
    custom,
    dotIgnore,
    git,
    exclude,
  };
}

/** Frames for the ancestors of a walk root, outermost first, so rules above the root apply too. */
export function ancestorFrames(rootAbs: string, use: IgnoreSources = ALL_SOURCES): RuleFrame | undefined {
  if (rootAbs === dirname(rootAbs)) return undefined;
  const chain: string[] = [];
  for (let d = dirname(rootAbs); ; d = dirname(d)) {
    chain.unshift(d);
    if (dirname(d) === d) break;
  }
  let frame: RuleFrame | undefined;
  const above = use.parent ? use : NO_SOURCES; // still tells whether the root is inside a repository
  for (const d of chain) frame = frameFor(d, frame, { prefix: relative(d, rootAbs) + "/", strip: 0 }, undefined, above);
  return frame;
}


/** One frame that has rules to ask, from a given frame up, and whether its git rules apply there. */
interface Step {
  readonly f: RuleFrame;
  readonly git: boolean;
}

/** The frames from `frame` up that have rules to ask (git rules only inside a repository, never above its root). */
function stepsFrom(frame: RuleFrame): readonly Step[] {
  const steps: Step[] = [];
  const useGit = frame.anyGit;
  let sawGit = false;
  for (let f: RuleFrame | undefined = frame; f; f = f.parent) {
    const git = useGit && !sawGit && (f.git !== undefined || f.exclude !== undefined);
    if (f.custom || f.dotIgnore || git) steps.push({ f, git });
    sawGit ||= f.hasGit;
  }
  return steps;
}

/** Whether any ignore file is in force at `frame`: when none is, a walk need not ask about each entry. */
export function anyRules(frame: RuleFrame): boolean {
  return (frame.steps ??= stepsFrom(frame)).length > 0;
}

/** The verdict of all ignore files in force at `frame` on walk-relative path `rel`. */
export function ruleVerdict(frame: RuleFrame | undefined, rel: string, isDir: boolean): Verdict {
  if (!frame) return undefined;
  const steps = (frame.steps ??= stepsFrom(frame)); // the same for every entry of a directory
  let dotIgnore: Verdict, git: Verdict, exclude: Verdict;
  for (let i = 0; i < steps.length; i++) {
    const { f, git: useGit } = steps[i]!;
    const path = f.strip === 0 ? (f.prefix === "" ? rel : f.prefix + rel) : f.prefix + rel.slice(f.strip);
    const custom = f.custom?.verdict(path, isDir);
    if (custom !== undefined) return custom; // the deepest .rgignore with a say beats every other file
    dotIgnore ??= f.dotIgnore?.verdict(path, isDir);
    if (useGit) {
      git ??= f.git?.verdict(path, isDir);
      exclude ??= f.exclude?.verdict(path, isDir);
    }
  }
  return dotIgnore ?? git ?? exclude;
}

/**
 * An --ignore-file, `given` as on the command line: its rules, matched as ripgrep matches them against a
 * path as it prints it (`./` dropped), with the file's own folder (as given) stripped when the path starts
 * with it. `why` is set when the file cannot be read (ripgrep says so and goes on without it).
 */
export function loadIgnoreFile(given: string, abs: string): { verdict: (shown: string, isDir: boolean) => Verdict; why?: string } {
  let text: string;
  try {
    text = readFileSync(abs, "utf8");
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === "EISDIR" ? "line 1: Is a directory (os error 21)" : e.code === "ENOENT" ? "No such file or directory (os error 2)" : e.message;
    return { verdict: () => undefined, why };
  }
  const ig = new RuleSet(text);
  const root = dirname(given).replace(/^\.\//, "");
  return {
    verdict: (shown, isDir) => {
      let p = shown.startsWith("./") ? shown.slice(2) : shown;
      if (root !== "." && root !== "" && p.includes("/") && (p.startsWith(root + "/") || root.endsWith("/") && p.startsWith(root))) p = p.slice(root.length).replace(/^\//, "");
      return ig.verdict(p, isDir);
    },
  };
}
