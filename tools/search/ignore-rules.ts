// Owns ignore-file rules as ripgrep applies them: `.rgignore` over `.ignore` over `.gitignore` over
// `.git/info/exclude` (a worktree's `.git` file followed to it), the deepest directory with a matching rule
// wins, git rules only inside a repository and never above its root, then --ignore-file rules.
// Does not walk directories (walk.ts) nor read git's global excludes file.
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import ignore, { type Ignore } from "ignore";

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
  readonly custom: Ignore | undefined;
  readonly dotIgnore: Ignore | undefined;
  readonly git: Ignore | undefined;
  readonly exclude: Ignore | undefined;
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
}

export const ALL_SOURCES: IgnoreSources = { custom: true, dot: true, vcs: true, exclude: true, parent: true };
const NO_SOURCES: IgnoreSources = { custom: false, dot: false, vcs: false, exclude: false, parent: false };

function load(path: string): Ignore | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined; // unreadable rules are skipped, as git does
  }
  // Case-sensitive like git on Linux; the package's default folds case.
  return ignore({ ignorecase: false }).add(text);
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
    anyGit: hasGit || (parent?.anyGit ?? false),
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

function ask(ig: Ignore | undefined, path: string): Verdict {
  if (!ig) return undefined;
  let r: ReturnType<Ignore["test"]>;
  try {
    r = ig.test(path);
  } catch {
    return undefined; // names like `...` are not paths the package accepts; no rule can name them either
  }
  return r.ignored ? "ignore" : r.unignored ? "whitelist" : undefined;
}

/** The verdict of all ignore files in force at `frame` on walk-relative path `rel`. */
export function ruleVerdict(frame: RuleFrame | undefined, rel: string, isDir: boolean): Verdict {
  let custom: Verdict, dotIgnore: Verdict, git: Verdict, exclude: Verdict;
  const useGit = frame?.anyGit ?? false;
  let sawGit = false;
  for (let f = frame; f; f = f.parent) {
    if (!f.custom && !f.dotIgnore && !(useGit && !sawGit && (f.git || f.exclude))) {
      sawGit ||= f.hasGit;
      continue;
    }
    const path = f.prefix + rel.slice(f.strip) + (isDir ? "/" : "");
    custom ??= ask(f.custom, path);
    dotIgnore ??= ask(f.dotIgnore, path);
    if (useGit && !sawGit) {
      git ??= ask(f.git, path);
      exclude ??= ask(f.exclude, path);
    }
    sawGit ||= f.hasGit;
  }
  return custom ?? dotIgnore ?? git ?? exclude;
}

/** An --ignore-file: its rules, matched relative to its own directory (by name for paths outside it). */
export function loadIgnoreFile(path: string): (abs: string, isDir: boolean) => Verdict {
  const ig = load(path);
  const base = dirname(path);
  return (abs, isDir) => {
    const rel = relative(base, abs);
    const p = rel.startsWith("..") || isAbsolute(rel) ? basename(abs) : rel;
    return ask(ig, p + (isDir ? "/" : ""));
  };
}
