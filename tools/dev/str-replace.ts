// Owns the `str_replace` tool: exactly-one-match edits (or creation with an empty old_str) of text
// files inside the workspace root, written atomically, answered with a unified diff. The file is read
// and written only through its pinned parent directory, so a symlink swapped into the path mid-edit
// cannot redirect the write outside the root. Does not search or read files for the model; edits of
// one file are serialised here.
import { logFailure } from "../../core/log.ts";
import { constants as fsc } from "node:fs";
import { type FileHandle, lstat, open } from "node:fs/promises";
import { lstatSync, readdirSync, type Stats } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { GIT_SHAPE_NAMES, gitConfigFiles, gitShaped, hooksFolder, pointerTarget, readGitConfig } from "./git-shape.ts";
import { editPatch } from "./edit-diff.ts";
import type { z } from "zod";
import { lazySchema, type SchemaOf } from "../../core/zod-issue.ts";
import { formatBytes, headBytes } from "../../core/text-bounds.ts";
import { sweepStaleTemps, writeFileAtomic } from "./atomic-write.ts";
import { describeManyMatches, describeNoMatch, findMatches } from "./match-report.ts";
import { PinnedDir } from "./pinned-dir.ts";
import { displayPath, resolveInside } from "./workspace-path.ts";

const MAX_COUNTED_MATCHES = 1000;

/** The input schema, built (and zod loaded) at the first call. */
export const strReplaceInput = lazySchema((z) =>
  z.object({
    path: z.string().min(1).describe("file path, relative to the workspace root or absolute inside it"),
    old_str: z.string().describe("exact text to replace (must occur exactly once); empty to create a new file"),
    new_str: z.string().describe("replacement text"),
  }),
);
export type StrReplaceArgs = z.infer<SchemaOf<typeof strReplaceInput>>;

export interface EditorOptions {
  /** Real path of the workspace root. */
  root: string;
  /** Real paths of the session's additional workspace roots (edits may land there too). */
  extraRoots?: readonly string[];
  maxFileBytes: number;
  /** The diff in the reply is cut here, with a marker. */
  maxReplyBytes: number;
  /** Temp files of interrupted edits older than this are deleted by the next edit in their directory. */
  tempStaleMs: number;
}

export interface EditReply {
  text: string;
  isError?: boolean;
}

class EditError extends Error {}

const fail = (message: string): never => {
  throw new EditError(message);
};

/** Git's own files (a `.git` folder's hooks and config, a `.git` pointer file) run code when git next
 *  runs there, even with no sandbox; every `.git` path segment counts, nested repositories' too, and
 *  so does every folder that is a git directory by shape (HEAD with objects/ and refs/, whatever its
 *  name) or that this write would make one. */
function gitOwned(root: string, real: string): boolean {
  const parts = relative(root, real).split(sep);
  if (parts.some((part) => part.toLowerCase() === ".git")) return true;
  for (let i = 0; i < parts.length; i++) {
    const folder = join(root, ...parts.slice(0, i));
    let entries: GitEntry[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      entries = []; // made by this write
    }
    if (gitShaped(entries)) return true;
    const name = parts[i]!;
    if (!GIT_SHAPE_NAMES.has(name) || entries.some((e) => e.name === name)) continue;
    const last = i === parts.length - 1;
    const made: GitEntry = { name, isDirectory: () => !last, isFile: () => last, isSymbolicLink: () => false };
    if (gitShaped([...entries, made])) return true;
  }
  return false;
}
type GitEntry = Parameters<typeof gitShaped>[0][number];

/** The hooks folder of a repository holding `real` (any `.git` from its folder up, in or above the
 *  root) when `real` is in it: git runs what is there at the next commit (`core.hooksPath`, such as
 *  husky's `.husky/_`, or `.git/hooks`). */
function hooksFolderHolding(real: string): string | undefined {
  for (let dir = dirname(real); ; dir = dirname(dir)) {
    const dotGit = join(dir, ".git");
    const st = lstatSafe(dotGit);
    const gitDir = st?.isDirectory() ? dotGit : st ? pointerTarget(dotGit, st.isSymbolicLink()) : undefined;
    if (gitDir !== undefined) {
      const hooks = hooksFolder(gitDir, gitConfigFiles(gitDir).files, st!.isDirectory() ? undefined : dotGit);
      if (real.startsWith(`${hooks}${sep}`)) return hooks;
    }
    if (dir === dirname(dir)) return undefined;
  }
}

function lstatSafe(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

/** A text git would read as a config that runs a program (an include target anywhere can be one). */
function plantsGitProgram(text: string, before = ""): string | undefined {
  const programs = (t: string) => {
    if (!/^\s*\[/m.test(t)) return [];
    const reading = readGitConfig(t, "/");
    return reading.valid ? reading.programs : [];
  };
  const had = programs(before);
  return programs(text).find((p) => !had.includes(p));
}

function toCrlf(s: string): string {
  return s.replace(/\r?\n/g, "\r\n");
}

export class StrReplaceTool {
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(private readonly opts: EditorOptions) {}

  /** The MCP handler: never throws; every refusal is an isError reply that says what to do. */
  async call(args: StrReplaceArgs): Promise<EditReply> {
    try {
      const { real, exists, root } = await resolveInside(this.opts.root, args.path, this.opts.extraRoots);
      return await this.serialised(real, () => this.apply(real, exists, root, args));
    } catch (err) {
      return { text: (err as Error).message, isError: true };
    }
  }

  /** Two edits of one file in parallel would lose one of them; chain them per real path. */
  private async serialised<T>(key: string, work: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(key) ?? Promise.resolve();
    const next = prev.catch(() => {}).then(work);
    this.locks.set(key, next);
    try {
      return await next;
    } finally {
      if (this.locks.get(key) === next) this.locks.delete(key);
    }
  }

  /** Pins the parent directory (making it when creating), then edits or creates the file in it. */
  private async apply(real: string, exists: boolean, root: string, args: StrReplaceArgs): Promise<EditReply> {
    const shown = displayPath(this.opts.root, real);
    if (real === root) fail(`${shown} is a directory; give a file path`);
    if (gitOwned(root, real)) {
      fail(`${shown} is one of git's own files (under .git or a git directory, a .git pointer, or a file that would make its folder a git directory): str_replace does not write there, since a hook or config there runs code the next time anyone runs git; change the repository with git commands in the shell`);
    }
    const hooks = hooksFolderHolding(real);
    if (hooks !== undefined) {
      fail(`${shown} is in ${displayPath(this.opts.root, hooks)}, the folder whose files git runs as hooks for this repository (core.hooksPath or .git/hooks): a file there runs as the user at the next commit, so str_replace does not write it. Ask the user to make this change themselves`);
    }
    if (!exists && args.old_str !== "") {
      fail(`${shown} does not exist; to create it, call str_replace with an empty old_str and the whole file as new_str`);
    }
    const dir = await PinnedDir.open(root, dirname(real), !exists);
    try {
      await sweepStaleTemps(dir, this.opts.tempStaleMs);
      const name = basename(real);
      return exists ? await this.edit(dir, name, shown, args) : await this.create(dir, name, shown, args);
    } finally {
      await dir.close().catch(logFailure("closing the edited directory"));
    }
  }

  private async create(dir: PinnedDir, name: string, shown: string, args: StrReplaceArgs): Promise<EditReply> {
    this.checkSize(Buffer.byteLength(args.new_str), shown);
    this.checkGitProgram(args.new_str, shown);
    const there = await lstat(dir.path(name)).catch(() => undefined);
    if (there?.isSymbolicLink()) fail(`${shown} is a symlink to a missing file; str_replace does not create files through symlinks`);
    if (there) fail(`${shown} appeared while it was being created; read it and retry`);
    await writeFileAtomic(dir, name, args.new_str);
    return { text: this.reply(`created ${shown}`, editPatch(shown, "", 0, 0, args.new_str)) };
  }

  private async edit(dir: PinnedDir, name: string, shown: string, args: StrReplaceArgs): Promise<EditReply> {
    const fh = await openNoFollow(dir.path(name), shown);
    let content: string;
    let mode: number;
    try {
      const st = await fh.stat();
      if (st.isDirectory()) fail(`${shown} is a directory; give a file path`);
      if (!st.isFile()) fail(`${shown} is not a regular file`);
      if (st.size > this.opts.maxFileBytes) {
        fail(`${shown} is ${formatBytes(st.size)}, over MAX_EDIT_FILE_BYTES (${formatBytes(this.opts.maxFileBytes)}); edit it with the shell tool instead`);
      }
      content = decodeText(await fh.readFile(), shown);
      mode = st.mode & 0o7777;
    } finally {
      await fh.close().catch(logFailure("closing the edited file"));
    }
    const edit = this.replaced(content, args, shown);
    this.checkSize(Buffer.byteLength(edit.next), shown);
    this.checkGitProgram(edit.next, shown, content);
    await writeFileAtomic(dir, name, edit.next, mode);
    return { text: this.reply(`edited ${shown}`, editPatch(shown, content, edit.at, edit.oldLen, edit.newStr)) };
  }

  /** The edited text, and where the one replacement went (for the diff). */
  private replaced(content: string, args: StrReplaceArgs, shown: string): { next: string; at: number; oldLen: number; newStr: string } {
    if (args.old_str === "") {
      if (content === "") return { next: args.new_str, at: 0, oldLen: 0, newStr: args.new_str };
      fail(`old_str is empty but ${shown} already has ${formatBytes(Buffer.byteLength(content))}; give the exact text to replace (an empty old_str only creates files)`);
    }
    if (args.old_str === args.new_str) fail("old_str and new_str are identical; nothing would change");
    let [oldStr, newStr] = [args.old_str, args.new_str];
    let at = findMatches(content, oldStr, MAX_COUNTED_MATCHES);
    // Models write "\n"; a CRLF file keeps its endings when old_str matches once its newlines are CRLF.
    if (at.length === 0 && content.includes("\r\n") && oldStr.includes("\n")) {
      const crlfAt = findMatches(content, toCrlf(oldStr), MAX_COUNTED_MATCHES);
      if (crlfAt.length > 0) [oldStr, newStr, at] = [toCrlf(oldStr), toCrlf(newStr), crlfAt];
    }
    if (at.length === 0) fail(describeNoMatch(content, oldStr, shown));
    if (at.length > 1) fail(describeManyMatches(content, at, at.length, shown));
    const i = at[0]!;
    return { next: content.slice(0, i) + newStr + content.slice(i + oldStr.length), at: i, oldLen: oldStr.length, newStr };
  }

  /** Any file can be a config's include target: one that reads as a git config running a program is refused. */
  private checkGitProgram(text: string, shown: string, before?: string): void {
    const program = plantsGitProgram(text, before);
    if (program !== undefined) {
      fail(`${shown} would read as a git config that makes git run a program (${program}); git runs such a setting as the user when a repository includes the file, so str_replace does not write it. Ask the user to make this change themselves`);
    }
  }

  private checkSize(bytes: number, shown: string): void {
    if (bytes > this.opts.maxFileBytes) {
      fail(`the result for ${shown} would be ${formatBytes(bytes)}, over MAX_EDIT_FILE_BYTES (${formatBytes(this.opts.maxFileBytes)})`);
    }
  }

  private reply(headline: string, patch: string): string {
    const text = `${headline}\n${patch}`;
    if (Buffer.byteLength(text) <= this.opts.maxReplyBytes) return text;
    const cut = headBytes(text, this.opts.maxReplyBytes);
    return `${cut}\n[diff cut at ${formatBytes(this.opts.maxReplyBytes)}; the edit itself was applied in full]`;
  }
}

/** O_NONBLOCK: a FIFO must not hang the open; it is refused as not a regular file just after. */
async function openNoFollow(path: string, shown: string): Promise<FileHandle> {
  try {
    return await open(path, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") fail(`${shown} became a symlink while it was being edited; retry`);
    if ((err as NodeJS.ErrnoException).code === "ENOENT") fail(`${shown} disappeared while it was being edited; retry`);
    throw err;
  }
}

function decodeText(buf: Buffer, shown: string): string {
  if (buf.subarray(0, 8192).includes(0)) fail(`${shown} looks binary (it contains NUL bytes); str_replace edits text files only`);
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(buf);
  } catch {
    return fail(`${shown} is not valid UTF-8; str_replace would corrupt it, so edit it with the shell tool`);
  }
}
