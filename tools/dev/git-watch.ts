// Owns the after-command git check (SPEC §3.8): a bounded walk of the writable roots that finds every
// git directory by shape (git-shape.ts) and every `.git` pointer, what each makes git run (config,
// config.worktree, include targets, commondir's config, hooks) by identity and content, and the
// comparison with the state before a command: a program that appeared is made inert by moving what
// holds it aside into Tendril's state (never deleted), and the result and the user are told how to restore it.
import { type Dirent, type Stats, cpSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { gitConfigFiles, gitShaped, hookFiles, hooksFolder, indexGitlinks, pointerTarget } from "./git-shape.ts";
import { FolderEvents } from "./fs-events.ts";
import { sha256Hex } from "../../core/ids.ts";

/** What git would run, per file that says it (a config, an include target, a hook). */
interface Source {
  /** Identity and content stamp: device, inode, size, change time. */
  id: string;
  programs: string[];
  /** The git dir it belongs to. */
  gitDir: string;
  /** The pointer git followed to reach it (a `commondir`, a `.git` file or link to a git dir outside the
   *  writable roots): moving the pointer aside undoes it. */
  via?: string;
  /** A hook: what it runs is its whole content, so a changed one is a new program (`id` is its content). */
  hook?: true;
}

export interface GitState {
  /** Every git directory found by shape, with its identity (device:inode). */
  dirs: Map<string, string>;
  /** Every file whose content makes git run a program, and what it runs. */
  sources: Map<string, Source>;
  /** `.git` files and links, and `commondir` files: their identity stamp. */
  pointers: Map<string, string>;
  /** Git dirs found only through a pointer (a `.git` file's or link's target). */
  pointed: Set<string>;
  /** Folders past the walk's bound, not looked into. */
  unseen: string[];
  /** Indexes whose gitlinks could not be read past the bound, each with why. */
  unreadIndexes: string[];
  complete: boolean;
}

/** Hooks larger than this, or past the first HOOKS_READ of a folder, are judged by their stamp, not read. */
const HOOK_READ_BYTES = 1 << 20;
const HOOKS_READ = 64;
/** A hook's identity: its content (a rewrite with the same bytes, as hook managers do at each install, is no change). */
const contentId = (p: string) => {
  try {
    if (lstatSync(p).size > HOOK_READ_BYTES) return idOf(p); // too large to read at each walk: judged by its stamp
    return sha256Hex(readFileSync(p));
  } catch {
    return "none";
  }
};
const stamp = (st: Stats) => `${st.dev}:${st.ino}:${st.size}:${st.ctimeMs}`;
const idOf = (p: string) => {
  try {
    return stamp(lstatSync(p));
  } catch {
    return "none";
  }
};

/** Finds every git directory and `.git` pointer under the roots, breadth first, reading at most `maxDirs` folders. */
export function snapshotGit(roots: readonly string[], maxDirs: number, beforeRead: (dir: string) => void = () => {}): GitState {
  const state: GitState = { dirs: new Map(), sources: new Map(), pointers: new Map(), pointed: new Set(), unseen: [], unreadIndexes: [], complete: true };
  const queue = [...new Set(roots)];
  let read = 0;
  for (let at = 0; at < queue.length; at++) {
    const dir = queue[at]!;
    if (read++ >= maxDirs) {
      state.complete = false;
      state.unseen.push(...queue.slice(at));
      break;
    }
    let entries: Dirent[];
    beforeRead(dir);
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    // Any `.git` folder counts, shaped or not yet (git init may fill it later, and its guards must be there first).
    if (gitShaped(entries) || (at >= roots.length && basename(dir) === ".git")) {
      state.pointed.delete(dir);
      addGitDir(state, dir, beforeRead);
      // Inside a git dir only submodules' and linked worktrees' git dirs matter.
      for (const sub of ["modules", "worktrees"]) if (entries.some((e) => e.name === sub && e.isDirectory())) queue.push(join(dir, sub));
      continue;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.name === ".git" && !e.isDirectory()) {
        state.pointers.set(p, idOf(p));
        const target = pointerTarget(p, e.isSymbolicLink());
        if (target && !state.dirs.has(target)) {
          state.pointed.add(target);
          // A git dir outside the writable roots is not the command's to change, but a pointer to it is:
          // what that dir runs is then reached through the pointer, and the pointer is what is moved.
          addGitDir(state, target, beforeRead, inAny(roots, target) ? undefined : p, p);
        }
      } else if (e.isDirectory()) queue.push(p);
    }
  }
  if (!state.complete) followGitlinks(state, roots, maxDirs, beforeRead);
  return state;
}

/** The largest index read for its gitlinks (a repository of a million files has one of ~100 MB). */
const INDEX_READ_BYTES = 256 << 20;

/**
 * Past the walk's bound, the submodules git itself would enter: each git dir's index names its gitlinks
 * (mode 160000), and `git status` in the work tree runs git in each one's folder, however deep. Their
 * `.git` (folder, file or link) is recorded as the walk would have, nested submodules too, at most
 * `maxDirs` of them. An index that cannot be read is named in `unreadIndexes`.
 */
function followGitlinks(state: GitState, roots: readonly string[], maxDirs: number, beforeRead: (dir: string) => void): void {
  const work: [gitDir: string, worktree: string][] = [];
  for (const dir of state.dirs.keys()) if (basename(dir) === ".git") work.push([dir, dirname(dir)]);
  for (const p of state.pointers.keys()) {
    const target = basename(p) === ".git" ? pointerTarget(p, lstatSafe(p)?.isSymbolicLink() ?? false) : undefined;
    if (target) work.push([target, dirname(p)]);
  }
  let followed = 0;
  for (let i = 0; i < work.length && followed < maxDirs; i++) {
    const [gitDir, worktree] = work[i]!;
    const links = indexGitlinks(gitDir, INDEX_READ_BYTES);
    if (typeof links === "string") state.unreadIndexes.push(`${join(gitDir, "index")} (${links})`);
    for (const rel of Array.isArray(links) ? links : []) {
      const dotGit = join(resolve(worktree, rel), ".git");
      if (!inAny(roots, dotGit) || state.dirs.has(dotGit) || state.pointers.has(dotGit) || followed++ >= maxDirs) continue;
      const st = lstatSafe(dotGit);
      if (st?.isDirectory()) {
        addGitDir(state, dotGit, beforeRead);
        work.push([dotGit, dirname(dotGit)]);
      } else if (st) {
        state.pointers.set(dotGit, stamp(st));
        const target = pointerTarget(dotGit, st.isSymbolicLink());
        if (target && !state.dirs.has(target)) {
          state.pointed.add(target);
          addGitDir(state, target, beforeRead, inAny(roots, target) ? undefined : dotGit, dotGit);
          work.push([target, dirname(dotGit)]);
        }
      }
    }
  }
}

function lstatSafe(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

/** Records a git dir and every file of it (or that it points to) that can make git run a program;
 *  `reachedBy`: the `.git` pointer inside the roots through which a dir outside them is used. */
function addGitDir(state: GitState, dir: string, beforeRead: (dir: string) => void, reachedBy?: string, pointer = reachedBy): void {
  state.dirs.set(dir, idOf(dir).split(":").slice(0, 2).join(":"));
  const read = gitConfigFiles(dir, beforeRead);
  if (read.commondir !== undefined) state.pointers.set(read.commondir, idOf(read.commondir));
  for (const { file, reading, viaCommondir } of read.files) {
    const programs = reading.valid ? reading.programs : [...reading.programs, "(a line git's reader may take differently)"];
    const through = viaCommondir ? read.commondir : reachedBy;
    state.sources.set(file, { id: idOf(file), programs, gitDir: dir, ...(through !== undefined && { via: through }) });
  }
  const hooks = hooksFolder(dir, read.files, pointer);
  beforeRead(dir);
  beforeRead(hooks);
  // Read by content up to a bound: a hooks path set to a large folder is judged by stamps past it.
  for (const [k, hook] of hookFiles(hooks).entries()) {
    const id = k < HOOKS_READ ? contentId(hook) : idOf(hook);
    state.sources.set(hook, { id, programs: [`hook ${basename(hook)}`], gitDir: dir, hook: true, ...(reachedBy !== undefined && { via: reachedBy }) });
  }
}

/** What one check found and did. */
export interface GitCheck {
  /** Lines for the model's result (and the user's notice), undefined when nothing happened. */
  note?: string;
  /** Each path moved aside and where it is now. */
  moved: { from: string; to: string }[];
}

/**
 * Compares the state now with `before` and makes inert what would run a program that was not there
 * before: a new or replaced git dir that runs one is moved aside whole; a changed config, include target
 * or new hook of a git dir that was there before is moved aside alone. `since`: when the command started
 * (folders past the walk's bound that changed since then are moved aside too: the walk fails closed).
 */
export function checkGit(before: GitState, roots: readonly string[], maxDirs: number, quarantine: string, since: number, beforeRead?: (dir: string) => void): GitCheck {
  const after = snapshotGit(roots, maxDirs, beforeRead);
  const moved: GitCheck["moved"] = [];
  const made: string[] = [];
  const replaced = (dir: string) => before.dirs.get(dir) !== after.dirs.get(dir);
  const targets = new Map<string, string>();
  for (const [file, src] of after.sources) {
    const old = before.sources.get(file);
    if (old?.id === src.id && old.via === src.via) continue;
    const fresh = src.hook && old !== undefined ? src.programs.map((p) => `${p} (changed)`) : src.programs.filter((p) => !(old?.programs ?? []).includes(p) || src.via !== old?.via);
    if (fresh.length === 0) continue;
    const pointerMoved = src.via !== undefined && before.pointers.get(src.via) !== after.pointers.get(src.via);
    const target = pointerMoved ? src.via! : replaced(src.gitDir) && inAny(roots, src.gitDir) ? src.gitDir : file;
    if (!inAny(roots, target)) continue; // outside the writable roots: not the command's doing
    targets.set(target, `${targets.has(target) ? `${targets.get(target)}, ` : ""}${fresh.join(", ")}`);
  }
  for (const dir of after.dirs.keys()) if (replaced(dir) && inAny(roots, dir) && !targets.has(dir)) made.push(dir);
  for (const p of after.pointers.keys()) if (!before.pointers.has(p) && basename(p) === ".git") made.push(p);
  if (!after.complete) {
    for (const dir of after.unseen) {
      try {
        if (lstatSync(dir).ctimeMs >= since) targets.set(dir, "a folder the check could not read");
      } catch {
        // gone
      }
    }
  }
  const lines: string[] = [];
  for (const t of outermost([...targets.keys()])) {
    const to = moveAside(t, quarantine);
    moved.push({ from: t, to });
    lines.push(`sandbox: this command wrote ${t}, which makes git run a program as the user at their next git command (${targets.get(t)}); it was moved aside to ${to} (nothing was deleted). Tell the user; to restore it after checking it: mv '${to}' '${t}'`);
  }
  if (!after.complete) {
    lines.push(`sandbox: the workspace has more folders than SANDBOX_GIT_WALK_DIRS (${maxDirs}); ${after.unseen.length} were not looked into for git directories, and those this command changed were moved aside (named above); submodules registered in an index were checked wherever they are.`);
    for (const index of after.unreadIndexes) lines.push(`sandbox: ${index} could not be read for submodules, so any past the bound were not checked: before running git there, look for .git folders or files the command made.`);
  }
  const shown = made.filter((m) => !moved.some((x) => m === x.from || m.startsWith(`${x.from}/`)));
  if (shown.length > 0) lines.push(`sandbox: this command created ${shown.join(" and ")} (a git directory or .git pointer; nothing in it makes git run a program now, and later changes to it are checked the same way).`);
  return { ...(lines.length > 0 && { note: lines.join("\n") }), moved };
}

function inAny(roots: readonly string[], p: string): boolean {
  return roots.some((r) => p === r || p.startsWith(r.endsWith("/") ? r : `${r}/`));
}

/** Drops paths inside another listed path (moving the outer one moves them). */
function outermost(paths: string[]): string[] {
  return paths.filter((p) => !paths.some((q) => q !== p && p.startsWith(`${q}/`)));
}

let moves = 0;
/** Moves a path into the quarantine folder (a copy then removal across file systems); returns where it is. */
export function moveAside(path: string, quarantine: string): string {
  const folder = join(quarantine, `${new Date().toISOString().replace(/[:.]/g, "-")}-${process.pid}-${moves++}`);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const to = join(folder, basename(path));
  try {
    renameSync(path, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
    cpSync(path, to, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
    rmSync(path, { recursive: true, force: true });
  }
  return to;
}

/**
 * The git check with a memory, for one set of writable roots (SPEC §3.8): where the system can watch
 * folders (fs-events.ts), a walk watches every folder it reads, and until one of them changes the last
 * walk is the state before the next command, and a command that changed none needs no check at all.
 * Any change (or a watch that could not be added, or a walk past its bound) means a walk, as without
 * it: it only ever skips a walk that would have read exactly what the last one read.
 */
export class GitGuard {
  readonly #events = new FolderEvents();
  #last: { state: GitState; generation: number } | undefined;

  constructor(
    readonly roots: readonly string[],
    readonly maxDirs: number,
  ) {}

  /** The state before a command, and the generation it holds for. */
  before(): { state: GitState; generation: number } {
    const now = this.#events.now();
    if (this.#last && this.#last.generation === now) return this.#last;
    return this.#walk();
  }

  #walk(): { state: GitState; generation: number } {
    this.#events.reset();
    const g0 = this.#events.now();
    const state = snapshotGit(this.roots, this.maxDirs, (dir) => this.#events.add(dir));
    const g1 = this.#events.now();
    const walked = { state, generation: g1 };
    // Kept only when every folder is watched and none changed while the walk read.
    this.#last = state.complete && g1 === g0 ? walked : undefined;
    return walked;
  }

  /** After a command: no folder changed since `before` (all watched): nothing to check; else the check. */
  after(before: { state: GitState; generation: number }, quarantine: string, since: number): GitCheck {
    if (before === this.#last && this.#events.now() === before.generation) return { moved: [] };
    this.#last = undefined;
    return checkGit(before.state, this.roots, this.maxDirs, quarantine, since, (dir) => this.#events.add(dir));
  }

  close(): void {
    this.#events.close();
  }
}
