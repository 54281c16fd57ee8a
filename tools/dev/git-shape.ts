// Owns what a git directory is, judged by shape and content rather than by name (SPEC §3.8): a folder
// holding `HEAD` with `objects/` and `refs/` (or a `commondir`), and which git config settings make git
// run a program as the user. Pure reads; what to do about a planted one is git-watch.ts's.
import { type Dirent, lstatSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";

/** Whether a folder's entries make it a git directory git would use (HEAD, and objects/refs or a commondir). */
export function gitShaped(entries: readonly Pick<Dirent, "name" | "isDirectory" | "isFile" | "isSymbolicLink">[]): boolean {
  let head = false, objects = false, refs = false, common = false;
  for (const e of entries) {
    if (e.name === "HEAD" && (e.isFile() || e.isSymbolicLink())) head = true;
    else if (e.name === "objects" && (e.isDirectory() || e.isSymbolicLink())) objects = true;
    else if (e.name === "refs" && (e.isDirectory() || e.isSymbolicLink())) refs = true;
    else if (e.name === "commondir" && (e.isFile() || e.isSymbolicLink())) common = true;
  }
  return head && ((objects && refs) || common);
}

/** Whether the folder at `dir` is a git directory by shape. */
export function isGitDir(dir: string): boolean {
  try {
    return gitShaped(readdirSync(dir, { withFileTypes: true }));
  } catch {
    return false;
  }
}

/** Names a git-shaped folder needs: a file or folder of one of these names completes the shape. */
export const GIT_SHAPE_NAMES: ReadonlySet<string> = new Set(["HEAD", "objects", "refs", "commondir"]);

// Keys (section.key, or section.*.key for any subsection) whose value git runs as a program.
const PROGRAM_KEYS = [
  "core.fsmonitor", "core.hookspath", "core.sshcommand", "core.pager", "core.editor", "core.askpass", "core.gitproxy",
  "core.alternaterefscommand", "sequence.editor", "diff.external", "diff.*.textconv", "diff.*.command", "filter.*.clean",
  "filter.*.smudge", "filter.*.process", "merge.*.driver", "credential.helper", "credential.*.helper", "gpg.program",
  "gpg.*.program", "gpg.ssh.defaultkeycommand", "uploadpack.packobjectshook", "interactive.difffilter", "pager.*",
  "difftool.*.cmd", "mergetool.*.cmd", "remote.*.uploadpack", "remote.*.receivepack", "hook.*.command", "hook.*.run",
  "trailer.*.command", "trailer.*.cmd", "submodule.*.update", "ssh.variant", "web.browser", "browser.*.cmd", "man.*.cmd",
  "sendemail.sendmailcmd", "sendemail.smtpserver", "sendemail.tocmd", "sendemail.cccmd",
];
/** Keys that make git read another file or folder: their targets are checked like the config itself. */
const POINTER_KEYS = ["include.path", "includeif.*.path", "core.worktree"];

function keyMatches(pattern: string, key: string): boolean {
  const p = pattern.split(".");
  const k = key.split(".");
  if (p.length === 2 && k.length === 2) return p[0] === k[0] && p[1] === k[1];
  if (p.length === 3 && k.length >= 3) return p[0] === k[0] && p[2] === k[k.length - 1] && (p[1] === "*" || p[1] === k.slice(1, -1).join("."));
  if (p.length === 2 && p[1] === "*" && k.length >= 2) return p[0] === k[0];
  return false;
}

export interface ConfigReading {
  /** `key=value` of each setting that runs a program (values as written). */
  programs: string[];
  /** Files or folders the config makes git read: include targets and core.worktree, resolved. */
  pointers: string[];
  /** False when the text is not a config git would accept: git refuses it whole, so nothing in it runs. */
  valid: boolean;
  /** core.hooksPath as written (the last one): the folder whose files git runs as hooks. */
  hooksPath?: string;
  /** core.worktree, resolved: where git takes the work tree's top to be. */
  worktree?: string;
}

const SECTION = /^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\\n]|\\.)*)")?\s*\]\s*(.*)$/;
const ENTRY = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/;

/**
 * Reads a git config text as git does, enough to find what runs a program: sections (`[core]`,
 * `[diff "x"]`, the old `[diff.x]`), case-insensitive keys, continuation lines, comments. An entry it
 * cannot read with certainty counts as a program (fail closed).
 */
export function readGitConfig(text: string, file: string): ConfigReading {
  const out: ConfigReading = { programs: [], pointers: [], valid: true };
  let section: string | undefined;
  // A backslash-newline continues a value only (git refuses one inside a key).
  const lines: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last]!.endsWith("\\") && lines[last]!.includes("=")) lines[last] = lines[last]!.slice(0, -1) + raw;
    else lines.push(raw);
  }
  for (let line of lines) {
    if (/^\s*([#;].*)?$/.test(line)) continue;
    const s = SECTION.exec(line);
    if (s) {
      const name = s[1]!.toLowerCase();
      section = s[2] !== undefined ? `${name.split(".")[0]}.${s[2]}` : name.includes(".") ? `${name.split(".")[0]}.${name.slice(name.indexOf(".") + 1)}` : name;
      line = s[3]!;
      if (/^\s*([#;].*)?$/.test(line)) continue;
    }
    const e = ENTRY.exec(line);
    if (!e || section === undefined) {
      out.valid = false;
      continue;
    }
    const dot = section.indexOf(".");
    const key = dot < 0 ? `${section}.${e[1]!.toLowerCase()}` : `${section.slice(0, dot)}.${section.slice(dot + 1)}.${e[1]!.toLowerCase()}`;
    const value = unquote(e[2] ?? "");
    if (key.startsWith("alias.")) {
      if (value.trimStart().startsWith("!")) out.programs.push(`${key}=${value}`);
      continue;
    }
    if (key === "core.hookspath") out.hooksPath = value.startsWith("~/") && process.env.HOME ? resolve(process.env.HOME, value.slice(2)) : value;
    if (key === "core.worktree" && value !== "") out.worktree = resolveConfigPath(value, file);
    if (PROGRAM_KEYS.some((p) => keyMatches(p, key))) {
      if (key === "core.fsmonitor" && /^(false|no|off|0|)$/i.test(value.trim())) continue;
      if (/^submodule\..+\.update$/.test(key) && !value.trimStart().startsWith("!")) continue; // only `!cmd` runs
      out.programs.push(`${key}=${value}`);
    } else if (POINTER_KEYS.some((p) => keyMatches(p, key)) && value.trim() !== "") {
      out.pointers.push(resolveConfigPath(value.trim(), file));
    }
  }
  return out;
}

function unquote(raw: string): string {
  let v = "";
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === "#" || c === ";")) break;
    else if (c === "\\" && i + 1 < raw.length) v += { n: "\n", t: "\t", b: "\b" }[raw[++i]!] ?? raw[i];
    else v += c;
  }
  return v.trim();
}

/** An include path is relative to the config file's folder; core.worktree to the git dir (the file's folder). */
function resolveConfigPath(value: string, file: string): string {
  const home = process.env.HOME;
  if (value.startsWith("~/") && home) return resolve(home, value.slice(2));
  return resolve(dirname(file), value);
}

/** Reads a config file (empty when missing or unreadable). */
export function readGitConfigFile(file: string): ConfigReading {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return { programs: [], pointers: [], valid: true };
  }
  return readGitConfig(text, file);
}

/** The git dir a `.git` file (`gitdir: …`) or link leads to. */
export function pointerTarget(p: string, link: boolean): string | undefined {
  try {
    if (link) return realpathSync(p);
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(p, "utf8").slice(0, 4096));
    return m ? resolve(dirname(p), m[1]!) : undefined;
  } catch {
    return undefined;
  }
}

export interface GitConfigFile {
  file: string;
  reading: ConfigReading;
  /** Reached through the git dir's `commondir` (moving that pointer aside undoes it). */
  viaCommondir?: true;
}

/**
 * The config files git reads for a git dir, each read: `config`, `config.worktree`, the common dir's
 * `config` (through `commondir`, whose path is returned), and every include target they name, at most 32.
 * `beforeRead` is told each folder first (the watcher's hook).
 */
export function gitConfigFiles(dir: string, beforeRead: (dir: string) => void = () => {}): { files: GitConfigFile[]; commondir?: string } {
  const queue: { file: string; viaCommondir?: true }[] = [{ file: resolve(dir, "config") }, { file: resolve(dir, "config.worktree") }];
  let commondir: string | undefined;
  try {
    const common = readFileSync(resolve(dir, "commondir"), "utf8").trim();
    if (common) {
      commondir = resolve(dir, "commondir");
      queue.push({ file: resolve(dir, common, "config"), viaCommondir: true });
    }
  } catch {
    // no commondir
  }
  const files: GitConfigFile[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < queue.length && i < 32; i++) {
    const { file, viaCommondir } = queue[i]!;
    if (seen.has(file)) continue;
    seen.add(file);
    beforeRead(dirname(file));
    const reading = readGitConfigFile(file);
    files.push({ file, reading, ...(viaCommondir && { viaCommondir }) });
    for (const target of reading.pointers) queue.push({ file: target, ...(viaCommondir && { viaCommondir }) });
  }
  return { files, ...(commondir !== undefined && { commondir }) };
}

/**
 * The folder whose files git runs as a git dir's hooks: the one `core.hooksPath` names (the last one
 * read wins, as in git; relative to where hooks run, the work tree's top), else the git dir's `hooks/`.
 * The work tree's top: core.worktree when set, the folder of the `.git` pointer that led here, the
 * folder holding a `.git` folder, else the git dir itself (bare).
 */
export function hooksFolder(gitDir: string, files: readonly GitConfigFile[], pointer?: string): string {
  let hooksPath: string | undefined;
  let worktree: string | undefined;
  for (const { reading } of files) {
    if (reading.hooksPath !== undefined) hooksPath = reading.hooksPath;
    if (reading.worktree !== undefined) worktree = reading.worktree;
  }
  if (hooksPath === undefined) return resolve(gitDir, "hooks");
  worktree ??= pointer !== undefined ? dirname(pointer) : basename(gitDir) === ".git" ? dirname(gitDir) : gitDir;
  return resolve(worktree, hooksPath);
}

/** The hook files git would run from a hooks folder (a git dir's `hooks/`, or core.hooksPath): every
 *  entry but git init's `*.sample` files. */
export function hookFiles(hooksDir: string): string[] {
  try {
    return readdirSync(hooksDir).filter((n) => !n.endsWith(".sample")).map((n) => resolve(hooksDir, n));
  } catch {
    return [];
  }
}

/** The mode of an index entry that is a gitlink (a submodule's commit). */
const GITLINK_MODE = 0o160000;

/**
 * The paths the git dir's index registers as gitlinks (mode 160000: submodules), relative to its work
 * tree: `git status` there runs git in each of them. Reads index versions 2, 3 and 4, SHA-1 and SHA-256
 * object names, and a split index's shared part. Undefined when there is no index; a string saying why
 * when it cannot be read (the caller fails closed).
 */
export function indexGitlinks(gitDir: string, maxBytes: number): string[] | string | undefined {
  const file = resolve(gitDir, "index");
  let stamp: string;
  try {
    const st = lstatSync(file);
    if (st.size > maxBytes) return `the index is larger than ${maxBytes} bytes`;
    stamp = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  } catch {
    return undefined;
  }
  // A large repository's index (~100 bytes a file) is read once per change, not at every walk.
  const known = readIndexes.get(file);
  if (known?.stamp === stamp) return known.links;
  const links = readGitlinks(gitDir, file);
  if (readIndexes.size >= MAX_INDEXES_KEPT) readIndexes.delete(readIndexes.keys().next().value!);
  readIndexes.set(file, { stamp, links });
  return links;
}

/** Indexes read, by path: their stamp then, and their gitlinks. */
const readIndexes = new Map<string, { stamp: string; links: string[] | string | undefined }>();
const MAX_INDEXES_KEPT = 64;

function readGitlinks(gitDir: string, file: string): string[] | string | undefined {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch {
    return undefined;
  }
  let config = "";
  try {
    config = readFileSync(resolve(gitDir, "config"), "utf8");
  } catch {
    // none: SHA-1
  }
  const oidBytes = /^\s*objectformat\s*=\s*sha256\s*$/im.test(config) ? 32 : 20;
  const main = readIndex(data, oidBytes);
  if (typeof main === "string") return main;
  if (main.shared === undefined) return main.gitlinks;
  try {
    const shared = readIndex(readFileSync(resolve(gitDir, `sharedindex.${main.shared}`)), oidBytes);
    if (typeof shared === "string") return shared;
    return [...new Set([...shared.gitlinks, ...main.gitlinks])];
  } catch {
    return `its shared index sharedindex.${main.shared} cannot be read`;
  }
}

/** One index file's gitlinks, and the shared index it names (split index), or why it cannot be read. */
function readIndex(data: Buffer, oidBytes: number): { gitlinks: string[]; shared?: string } | string {
  if (data.length < 12 || data.toString("latin1", 0, 4) !== "DIRC") return "it is not an index file";
  const version = data.readUInt32BE(4);
  if (version < 2 || version > 4) return `its version ${version} is not one git writes`;
  const count = data.readUInt32BE(8);
  const end = data.length - oidBytes; // the trailing checksum
  const gitlinks: string[] = [];
  let at = 12;
  let previous: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    const start = at;
    if (at + 40 + oidBytes + 2 > end) return "it ends inside an entry";
    const mode = data.readUInt32BE(at + 24);
    const flags = data.readUInt16BE(at + 40 + oidBytes);
    at += 40 + oidBytes + 2;
    if (version >= 3 && flags & 0x4000) at += 2;
    let path: Buffer;
    if (version === 4) {
      let strip = 0;
      for (let c = 0x80, first = true; c & 0x80; first = false) {
        if (at >= end) return "it ends inside an entry";
        c = data[at++]!;
        strip = first ? c & 0x7f : ((strip + 1) * 128) + (c & 0x7f);
      }
      const nul = data.indexOf(0, at);
      if (nul < 0 || nul >= end || strip > previous.length) return "an entry's path cannot be read";
      path = Buffer.concat([previous.subarray(0, previous.length - strip), data.subarray(at, nul)]);
      at = nul + 1;
    } else {
      const nul = data.indexOf(0, at);
      if (nul < 0 || nul >= end) return "an entry's path cannot be read";
      path = data.subarray(at, nul);
      at = start + ((at - start + path.length + 8) & ~7);
    }
    previous = path;
    if ((mode & 0o170000) === GITLINK_MODE) gitlinks.push(path.toString("utf8"));
  }
  let shared: string | undefined;
  while (at + 8 <= end) {
    const sig = data.toString("latin1", at, at + 4);
    const size = data.readUInt32BE(at + 4);
    if (sig === "link" && size >= oidBytes) {
      const oid = data.toString("hex", at + 8, at + 8 + oidBytes);
      if (!/^0+$/.test(oid)) shared = oid;
    }
    at += 8 + size;
  }
  return { gitlinks, ...(shared !== undefined && { shared }) };
}
