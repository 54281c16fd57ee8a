// Owns the guards of git dirs in a writable workspace (SPEC §3.8): the bounded walk that finds every
// `.git` under the roots (nested repositories, submodule checkouts, linked worktrees), which parts of
// each git dir are mounted read-only so no hook, config or pointer git later obeys as the user can be
// planted. Returns bwrap arguments; sandbox-args.ts places them. What a command changed anyway is
// git-watch.ts's after-command check.
import { type Dirent, existsSync, readdirSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { GitState } from "./git-watch.ts";
import { isInside } from "../../core/path-inside.ts";
import { entryKind, isDir, isRealDir, isSymlink, readOrEmpty, subdirs } from "./sandbox-paths.ts";

/**
 * A git dir in a writable workspace stays writable (commits work), but git runs hooks and reads config
 * (core.hooksPath, core.fsmonitor, aliases …) later, as the user: those are read-only, and the dir is a
 * mount of its own, so it cannot be renamed away and replaced by one with a config the command wrote
 * (EBUSY). The same for each submodule's git dir (.git/modules/…), and a linked worktree's pointer to
 * its common dir (.git/worktrees/NAME/commondir). `config.worktree` is guarded when git would read it.
 */
export function gitDirGuards(dir: string, roots: readonly string[], depth = 0): string[] {
  const config = join(dir, "config");
  const configText = readOrEmpty(config);
  // The workspace's own repository (not a submodule's): the folder its core.hooksPath names.
  const hooksPath = depth === 0 ? hooksPathGuard(dirname(dir), configText, roots) : [];
  // A link (hooks -> ../.githooks) cannot be made a mount itself (a mount follows it), so the command could
  // replace it with a folder of its own: such a git dir (or one with stranger entries) is read-only as a
  // whole, and commits inside it fail.
  if (!plainGitEntries(dir)) return [...readOnlyGitDir(dir, roots), ...hooksPath];
  const args = ["--bind", dir, dir];
  const hooks = join(dir, "hooks");
  if (isRealDir(hooks)) args.push("--ro-bind", hooks, hooks);
  else args.push("--tmpfs", hooks, "--remount-ro", hooks);
  args.push("--ro-bind", existsSync(config) ? config : "/dev/null", config);
  const perWorktree = /^\s*worktreeconfig\s*=\s*(true|yes|on|1)\s*$/im.test(configText);
  for (const d of [dir, ...subdirs(join(dir, "worktrees"))]) {
    if (d !== dir && !plainGitEntries(d)) {
      args.push(...readOnlyGitDir(d, roots));
      continue;
    }
    if (d !== dir) args.push("--bind", d, d);
    const wt = join(d, "config.worktree");
    if (existsSync(wt) || perWorktree) args.push("--ro-bind", existsSync(wt) ? wt : "/dev/null", wt);
    // A pointer to the common dir, where git reads config and hooks: not re-pointed (a missing one is
    // gitReport's, since a mount would leave an empty file that git refuses).
    const common = join(d, "commondir");
    if (existsSync(common)) args.push("--ro-bind", common, common);
  }
  // Submodules nest (.git/modules/a/modules/b); a bound on the depth keeps a hostile tree finite.
  if (depth < 8) for (const m of gitDirsUnder(join(dir, "modules"))) args.push(...gitDirGuards(m, roots, depth + 1));
  return [...args, ...hooksPath];
}

/**
 * `core.hooksPath` in the repository's config naming a folder in a writable root (husky's `.husky/_`,
 * gitignored, so a planted hook there shows in no diff): read-only like .git/hooks, or made empty and
 * read-only when it does not exist yet. Relative paths are the work tree's, as git reads them.
 */
function hooksPathGuard(worktree: string, configText: string, roots: readonly string[]): string[] {
  const match = /^\s*hookspath\s*=\s*(.*?)\s*$/im.exec(configText);
  let value = match?.[1];
  if (!value) return [];
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  if (value.startsWith("~/") && process.env.HOME) value = join(process.env.HOME, value.slice(2));
  let target = resolve(worktree, value);
  try {
    target = realpathSync(target);
  } catch {
    // not there yet: the mount below makes it, empty
  }
  if (!roots.some((r) => isInside(r, target))) return [];
  if (existsSync(target)) return ["--ro-bind", target, target];
  return ["--tmpfs", target, "--remount-ro", target];
}

/** The git dirs below a `modules` folder: a submodule named `a/b` lives at modules/a/b. */
function gitDirsUnder(dir: string, depth = 0): string[] {
  const found: string[] = [];
  for (const d of subdirs(dir)) {
    if (existsSync(join(d, "HEAD")) && existsSync(join(d, "objects"))) found.push(d);
    else if (depth < 8) found.push(...gitDirsUnder(d, depth + 1));
  }
  return found;
}

/**
 * A git dir read-only as a whole, and what its linked entries lead to when that is in a writable root
 * (a `hooks -> ../.githooks`): read-only too, or, when it does not exist yet, made there empty and
 * read-only (the command could otherwise make it and fill it).
 */
export function readOnlyGitDir(dir: string, roots: readonly string[]): string[] {
  const args = ["--ro-bind", dir, dir];
  for (const name of GUARDED_GIT_ENTRIES) {
    const p = join(dir, name);
    if (!isSymlink(p)) continue;
    let target: string;
    try {
      target = existsSync(p) ? realpathSync(p) : resolve(dirname(p), readlinkSync(p));
    } catch {
      continue;
    }
    if (!roots.some((r) => isInside(r, target))) continue; // outside the writable roots: read-only already
    if (existsSync(target)) args.push("--ro-bind", target, target);
    else if (name === "hooks") args.push("--tmpfs", target, "--remount-ro", target);
    else args.push("--ro-bind", "/dev/null", target);
  }
  return args;
}

const GUARDED_GIT_ENTRIES = ["hooks", "config", "config.worktree", "commondir"];

/** Whether a git dir's guarded entries are what they should be, or absent: `hooks` a folder; `config`,
 *  `config.worktree` and `commondir` files (not links, which a mount would follow). */
function plainGitEntries(dir: string): boolean {
  const hooks = entryKind(join(dir, "hooks"));
  return (hooks === "dir" || hooks === "none") && GUARDED_GIT_ENTRIES.slice(1).every((n) => ["file", "none"].includes(entryKind(join(dir, n))));
}

/** What a walk of the writable roots found: each `.git` folder, `.git` file (a submodule checkout's or
 *  linked worktree's pointer) and `.git` link, and every git dir of theirs with no `commondir`. */
export interface GitEntries {
  dirs: string[];
  files: string[];
  links: string[];
  /** Git dirs (a `.git`, its linked worktrees' and submodules' dirs) where a `commondir` would redirect git. */
  noCommondir: string[];
  /** False when the walk stopped at its bound: deeper `.git` entries were not looked for. */
  complete: boolean;
}

/**
 * Finds every `.git` under the roots, breadth first, visiting at most `maxDirs` folders (links are not
 * followed; a `.git` folder is not entered, its submodules are gitDirGuards' business).
 */
export function findGitEntries(roots: readonly string[], maxDirs: number): GitEntries {
  const found: GitEntries = { dirs: [], files: [], links: [], noCommondir: [], complete: true };
  const seen = new Set<string>();
  const queue = roots.filter((r) => !seen.has(r) && seen.add(r));
  let visited = 0;
  for (let at = 0; at < queue.length; at++) {
    if (visited++ >= maxDirs) {
      found.complete = false;
      break;
    }
    let entries: Dirent[];
    try {
      entries = readdirSync(queue[at]!, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = join(queue[at]!, e.name);
      if (e.name === ".git") {
        if (e.isDirectory()) found.dirs.push(p);
        else if (e.isSymbolicLink()) found.links.push(p);
        else if (e.isFile()) found.files.push(p);
      } else if (e.isDirectory() && !seen.has(p)) {
        seen.add(p);
        queue.push(p);
      }
    }
  }
  for (const dir of found.dirs) found.noCommondir.push(...gitDirsOf(dir).filter((d) => entryKind(join(d, "commondir")) === "none"));
  return found;
}

/** A git dir with its linked worktrees' dirs and (nested) submodules' git dirs. */
function gitDirsOf(dir: string, depth = 0): string[] {
  const out = [dir, ...subdirs(join(dir, "worktrees"))];
  if (depth < 8) for (const m of gitDirsUnder(join(dir, "modules"))) out.push(...gitDirsOf(m, depth + 1));
  return out;
}

/** The `.git` entries of a git check's walk (git-watch.ts), as the mounts need them: one walk serves both. */
export function gitEntriesOf(state: GitState): GitEntries {
  const found: GitEntries = { dirs: [], files: [], links: [], noCommondir: [], complete: state.complete };
  const walked = [...state.dirs.keys()].filter((d) => !state.pointed.has(d));
  // A submodule's or linked worktree's git dir is guarded with the git dir that holds it.
  found.dirs = walked.filter((d) => !walked.some((o) => o !== d && d.startsWith(`${o}/`)));
  for (const p of state.pointers.keys()) {
    if (basename(p) !== ".git") continue;
    const kind = entryKind(p);
    if (kind === "file") found.files.push(p);
    else if (kind === "link") found.links.push(p);
  }
  return found;
}

/** The guards of every git dir and `.git` pointer the walk found (bwrap arguments, after the roots' binds). */
export function gitGuards(found: GitEntries, roots: readonly string[]): string[] {
  const args: string[] = [];
  for (const dir of found.dirs) args.push(...gitDirGuards(dir, roots));
  // A .git that is a link: what it leads to is read-only (the link itself can still be replaced, like a new .git).
  for (const link of found.links) if (isDir(link)) args.push("--ro-bind", link, link);
  for (const file of found.files) {
    // A submodule checkout's or linked worktree's pointer to its git dir: not re-pointed at one the command made.
    args.push("--ro-bind", file, file);
    // Its git dir, when it lies in a writable root outside every `.git` guarded above (a worktree of a
    // repository kept elsewhere in the workspace), is guarded the same way.
    const target = pointedGitDir(file);
    if (target && roots.some((r) => isInside(r, target)) && !found.dirs.some((d) => isInside(d, target))) args.push(...gitDirGuards(target, roots, 1));
  }
  return args;
}

/** The git dir a `.git` file's `gitdir:` line names, resolved, when it is a folder. */
function pointedGitDir(file: string): string | undefined {
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(readOrEmpty(file));
  if (!m) return undefined;
  try {
    const target = realpathSync(resolve(dirname(file), m[1]!));
    return isRealDir(target) ? target : undefined;
  } catch {
    return undefined;
  }
}
