// Owns the gitignore-aware directory walk shared by the rg and tree shims: ripgrep's filter order
// (globs, then ignore files, then types, then hidden), /proc, /sys, /dev always skipped (`.git` for tree),
// symbolic links reported but not followed unless asked (ripgrep's -L, with its loop and broken-link errors).
// Does not read files or decide what to print.
import { lstatSync, readdirSync, realpathSync, statSync, type Dirent } from "node:fs";
import { errorText } from "./file-bytes.ts";
import { relative } from "node:path";
import { ancestorFrames, anyRules, frameFor, ruleVerdict, type IgnoreSources, type RuleFrame, type Verdict } from "./ignore-rules.ts";

export type EntryKind = "file" | "dir" | "symlink" | "other" | "error";

export interface WalkOptions {
  /** Include names starting with a dot. */
  readonly hidden: boolean;
  /** Disregard `.gitignore`, `.ignore`, `.rgignore` and `.git/info/exclude`. */
  readonly noIgnore: boolean;
  /** Deepest level listed (children of a root are level 1). */
  readonly maxDepth?: number;
  /** Highest precedence (ripgrep's -g): gets the path relative to the working directory. */
  readonly override?: (path: string, isDir: boolean) => Verdict;
  /** After ignore files, before the hidden rule (ripgrep's -t): gets the file name. */
  readonly types?: (name: string, isDir: boolean) => Verdict;
  /** --ignore-file rules: below every ignore file, in force even with noIgnore; get the path as printed. */
  readonly explicitIgnores?: readonly ((shown: string, isDir: boolean) => Verdict)[];
  /** Which ignore files count; all unless ripgrep's --no-ignore-dot/-vcs/-exclude/-parent say otherwise. */
  readonly sources?: IgnoreSources;
  /** Follow symbolic links (ripgrep's -L): a link to a file is a file, to a directory is walked. */
  readonly follow?: boolean;
  /** Never list `.git` (tree); ripgrep lists it with --hidden. */
  readonly skipGitDir?: boolean;
}

/** A directory to list: where it is, how to print it, and the rules in force above it. */
export interface DirHandle {
  readonly abs: string;
  /** Path below the walk root ("" for the root). */
  readonly rel: string;
  /** Path as printed ("" when the root is the implicit working directory). */
  readonly display: string;
  /** Path relative to the working directory for -g globs, or below the root when the root lies outside it. */
  readonly globPath: string;
  readonly depth: number;
  readonly frame: RuleFrame | undefined;
  /** With `follow`: the directory's real path and its parent's handle, to find links that loop. */
  readonly real?: string;
  readonly up?: DirHandle;
}

export interface WalkEntry {
  readonly name: string;
  readonly kind: EntryKind;
  readonly abs: string;
  readonly display: string;
  readonly depth: number;
  /** Set for directories: the handle to list it with. */
  readonly dir?: DirHandle;
  /** Set for kind "error" (a broken link or a loop under `follow`): ripgrep's message. */
  readonly message?: string;
}

const PSEUDO_FS = new Set(["/proc", "/sys", "/dev"]);

export function joinDisplay(base: string, name: string): string {
  if (base === "") return name;
  return base.endsWith("/") ? base + name : `${base}/${name}`;
}

/** A walk root: `display` is the argument as given ("" for none), `abs` its absolute form. */
export function rootHandle(abs: string, display: string, cwd: string, opts: WalkOptions): DirHandle {
  const fromCwd = relative(cwd, abs);
  const inside = fromCwd === "" || !(fromCwd.startsWith("..") || fromCwd.startsWith("/"));
  return {
    abs,
    rel: "",
    display,
    globPath: inside ? fromCwd : "",
    depth: 0,
    frame: opts.noIgnore ? undefined : ancestorFrames(abs, opts.sources),
    real: opts.follow ? realOf(abs) : undefined,
  };
}

export function kindOf(d: Dirent, abs: string): EntryKind {
  if (d.isFile()) return "file";
  if (d.isDirectory()) return "dir";
  if (d.isSymbolicLink()) return "symlink";
  if (d.isFIFO() || d.isSocket() || d.isCharacterDevice() || d.isBlockDevice()) return "other";
  try {
    const st = lstatSync(abs); // some filesystems leave the entry type unknown
    return st.isFile() ? "file" : st.isDirectory() ? "dir" : st.isSymbolicLink() ? "symlink" : "other";
  } catch {
    return "other";
  }
}

export function keep(h: DirHandle, frame: RuleFrame | undefined, name: string, abs: string, isDir: boolean, opts: WalkOptions): boolean {
  if (opts.override) {
    const v = opts.override(h.globPath ? `${h.globPath}/${name}` : name, isDir);
    if (v) return v === "whitelist";
  }
  let v = frame ? ruleVerdict(frame, h.rel ? `${h.rel}/${name}` : name, isDir) : undefined;
  // A later --ignore-file takes precedence over an earlier one, as in ripgrep.
  if (opts.explicitIgnores) for (let k = opts.explicitIgnores.length - 1; k >= 0 && v === undefined; k--) v = opts.explicitIgnores[k]!(joinDisplay(h.display, name), isDir);
  if (v === "ignore") return false;
  let whitelisted = v === "whitelist";
  if (opts.types) {
    const v = opts.types(name, isDir);
    if (v === "ignore") return false;
    whitelisted ||= v === "whitelist";
  }
  return whitelisted || opts.hidden || name.charCodeAt(0) !== 46; // "."
}

function realOf(abs: string): string {
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}

/** What a link points to under -L, or ripgrep's message for a broken link or one to an ancestor. */
function followLink(h: DirHandle, abs: string, display: string): EntryKind | { message: string } {
  let root = h;
  while (root.up) root = root.up;
  // ripgrep names paths under the implicit root `./…` in these messages.
  const shownInError = (d: string) => (root.display === "" ? `./${d}` : d);
  let isDir: boolean;
  try {
    const st = statSync(abs);
    if (!st.isDirectory()) return st.isFile() ? "file" : "other";
    isDir = true;
  } catch (err) {
    return { message: `${shownInError(display)}: ${errorText(err)}` };
  }
  const real = realOf(abs);
  for (let a: DirHandle | undefined = h; isDir && a; a = a.up) {
    if (a.real === real) return { message: `File system loop found: ${shownInError(display)} points to an ancestor ${shownInError(a.display)}` };
  }
  return "dir";
}

const RULE_NAMES = new Set([".git", ".rgignore", ".ignore", ".gitignore"]);

/** The names in a listing that bear on ignore rules (only these are asked about). */
function ruleFileNames(dirents: readonly Dirent[]): Set<string> {
  const found = new Set<string>();
  for (const d of dirents) if (d.name.charCodeAt(0) === 46 && RULE_NAMES.has(d.name)) found.add(d.name);
  return found;
}

/** The kept children of a directory, sorted by name; unreadable directories list as empty. */
export function readDir(h: DirHandle, opts: WalkOptions): WalkEntry[] {
  let dirents: Dirent[];
  try {
    dirents = readdirSync(h.abs, { withFileTypes: true });
  } catch {
    return [];
  }
  const frame = opts.noIgnore ? undefined : frameFor(h.abs, h.frame, { prefix: "", strip: h.rel ? h.rel.length + 1 : 0 }, ruleFileNames(dirents), opts.sources);
  const rules = frame && anyRules(frame) ? frame : undefined; // asked about each entry only when it has a say
  const depth = h.depth + 1;
  const out: WalkEntry[] = [];
  const atRoot = h.abs === "/";
  const absBase = atRoot ? "/" : `${h.abs}/`;
  const displayBase = joinDisplay(h.display, ""); // "", or the directory with one trailing "/"
  for (const d of dirents) {
    const name = d.name;
    const abs = absBase + name;
    if ((name === ".git" && opts.skipGitDir) || (atRoot && PSEUDO_FS.has(abs))) continue;
    let kind = kindOf(d, abs);
    const display = displayBase + name;
    if (kind === "symlink" && opts.follow) {
      const target = followLink(h, abs, display);
      if (typeof target !== "string") {
        out.push({ name, kind: "error", abs, display, depth, message: target.message });
        continue;
      }
      kind = target;
    }
    if (!keep(h, rules, name, abs, kind === "dir", opts)) continue;
    if (kind !== "dir") {
      out.push({ name, kind, abs, display, depth });
      continue;
    }
    const rel = h.rel ? `${h.rel}/${name}` : name;
    const globPath = h.globPath ? `${h.globPath}/${name}` : name;
    const dir: DirHandle = { abs, rel, display, globPath, depth, frame, real: opts.follow ? realOf(abs) : undefined, up: h };
    out.push({ name, kind, abs, display, depth, dir });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Every kept regular file below `root` (and -L's errors), depth first in name order, one per `next()`
 * (undefined at the end); `stop()`, asked before each directory is read, ends the walk early (the caller
 * stops taking files itself). A class rather than a generator: a large search takes tens of thousands of
 * files from it, and each generator step costs more.
 */
export class FileWalk {
  private readonly stack: WalkEntry[][];
  private readonly index: number[] = [0];

  constructor(
    root: DirHandle,
    private readonly opts: WalkOptions,
    private readonly stop?: () => boolean,
  ) {
    this.stack = [readDir(root, opts)];
  }

  next(): WalkEntry | undefined {
    const { stack, index, opts } = this;
    while (stack.length > 0) {
      const top = stack.length - 1;
      const level = stack[top]!;
      const i = index[top]!;
      if (i >= level.length) {
        stack.pop();
        index.pop();
        continue;
      }
      index[top] = i + 1;
      const e = level[i]!;
      if (e.kind === "file" || e.kind === "error") return e;
      if (e.dir && (opts.maxDepth === undefined || e.depth < opts.maxDepth)) {
        if (this.stop?.()) {
          stack.length = 0;
          return undefined;
        }
        stack.push(readDir(e.dir, opts));
        index.push(0);
      }
    }
    return undefined;
  }
}

/** The files of a `FileWalk` as an iterable. */
export function* walkFiles(root: DirHandle, opts: WalkOptions, stop?: () => boolean): Generator<WalkEntry> {
  const walk = new FileWalk(root, opts, stop);
  for (let e = walk.next(); e; e = walk.next()) yield e;
}
