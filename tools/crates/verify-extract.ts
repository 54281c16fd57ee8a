// Owns turning .crate bytes into files as they arrive: gunzip + tar parse that writes regular files and
// folders of the crate's `NAME-VER/` into a given folder and refuses (naming the entry) anything outside the rules of archive-paths.ts or
// over the size and file-count caps. Symlinks are created last, after every one has been checked, so
// nothing is ever written through a link. Does not pick `dest`, check the checksum, or clean up.
import { closeSync, copyFileSync, mkdirSync, openSync, symlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { Parser, type ReadEntry } from "tar";
import { linkStaysInside, normalizeEntry, pathProblem, symlinkAncestor } from "./archive-paths.ts";
import { CrateError } from "./errors.ts";

export interface ExtractLimits {
  maxUnpackedBytes: number;
  maxFiles: number;
}

interface State {
  /** Where the archive's `top/` is written. */
  topDir: string;
  top: string;
  limits: ExtractLimits;
  entries: number;
  bytes: number;
  problem?: CrateError;
  /** The file being written, while its entry's bytes arrive. */
  openFd?: number;
  files: Set<string>;
  dirs: Set<string>;
  symlinks: Map<string, string>;
}

const FILE_TYPES = new Set(["File", "OldFile", "ContiguousFile"]);
/** Compressed bytes handed to the parser at a time, so a refusal stops decompression early. */
const SLICE_BYTES = 256 * 1024;

/**
 * One extraction of a gzipped tar whose entries must all lie under `top/`, fed chunk by chunk (a download
 * streams straight in). Synchronous: tar's parser inflates each slice and calls back per entry, and a
 * refusal aborts it at once. Decompressed size is bounded by the declared entry sizes (checked against
 * the cap before any byte of the entry is used) and by tar's decompression-ratio guard after the archive.
 */
export class CrateExtraction {
  private readonly st: State;
  private readonly parser: Parser;

  /** Writes the archive's `top/` as `topDir`, which it makes at once (parents included). */
  constructor(topDir: string, top: string, limits: ExtractLimits) {
    const st: State = { topDir, top, limits, entries: 0, bytes: 0, files: new Set(), dirs: new Set(), symlinks: new Map() };
    makeDir(st, topDir);
    const parser = new Parser({ strict: true, onReadEntry: (entry) => onEntry(entry, st, parser) });
    parser.on("error", (err: Error) => (st.problem ??= new CrateError("hostile", `not a valid crate archive: ${err.message}`)));
    this.st = st;
    this.parser = parser;
  }

  /** Feeds compressed bytes; throws the first refusal. */
  write(gz: Uint8Array): void {
    const bytes = Buffer.from(gz.buffer, gz.byteOffset, gz.byteLength);
    for (let at = 0; at < bytes.length && !this.st.problem; at += SLICE_BYTES) this.parser.write(bytes.subarray(at, at + SLICE_BYTES));
    if (this.st.problem) throw this.st.problem;
  }

  /** Closes the file a cut-off stream left open; the caller removes the folder. */
  dispose(): void {
    if (this.st.openFd !== undefined) closeSync(this.st.openFd);
    this.st.openFd = undefined;
  }

  /** Ends the archive: checks and creates the symlinks. Throws a refusal or an empty archive. */
  finish(): void {
    if (!this.st.problem) this.parser.end();
    if (this.st.problem) throw this.st.problem;
    if (this.st.entries === 0) throw new CrateError("hostile", "not a valid crate archive: no entries");
    createSymlinks(this.st);
  }
}

/** Extracts a whole gzipped tar held in memory into `dest` (see CrateExtraction). */
export function extractCrate(gz: Uint8Array, dest: string, top: string, limits: ExtractLimits): void {
  const x = new CrateExtraction(join(dest, top), top, limits);
  x.write(gz);
  x.finish();
}

function refuse(st: State, entry: ReadEntry, why: string, parser?: Parser): void {
  st.problem ??= new CrateError("hostile", `refused archive entry ${JSON.stringify(entry.path)}: ${why}`);
  entry.resume();
  parser?.abort(st.problem);
}

function onEntry(entry: ReadEntry, st: State, parser: Parser): void {
  if (st.problem) return void entry.resume();
  const why = entryProblem(entry, st);
  if (why) return refuse(st, entry, why, parser);
  const rel = normalizeEntry(entry.path);
  try {
    if (entry.type !== "SymbolicLink" && placed(st, rel) === undefined) {
      // `top\x`: pathProblem reads it as inside `top/`, but on disk it would lie beside the crate's
      // folder, which alone is installed: nothing is written (a link to it finds no file).
      entry.resume();
    } else if (entry.type === "Directory") {
      makeDir(st, placed(st, rel)!);
      entry.resume();
    } else if (FILE_TYPES.has(entry.type)) {
      writeFile(entry, st, rel);
    } else if (entry.type === "SymbolicLink") {
      st.symlinks.set(rel, entry.linkpath ?? "");
      entry.resume();
    } else if (entry.type === "Link") {
      copyHardLink(entry, st, rel);
    } else {
      refuse(st, entry, `is a ${entry.type} entry (only files, folders and links inside the crate are extracted)`);
    }
  } catch (err) {
    refuse(st, entry, (err as Error).message, parser);
  }
  if (st.problem) parser.abort(st.problem);
}

/** Count, size and path rules, checked on the header before any of the entry's bytes are used. */
function entryProblem(entry: ReadEntry, st: State): string | undefined {
  if (++st.entries > st.limits.maxFiles) return `more than MAX_CRATE_FILES (${st.limits.maxFiles}) entries`;
  // Every entry's declared size counts, not only files': the parser inflates what a header declares.
  st.bytes += entry.size ?? 0;
  if (st.bytes > st.limits.maxUnpackedBytes) return `brings the unpacked size over MAX_CRATE_UNPACKED_BYTES (${st.limits.maxUnpackedBytes} bytes)`;
  const bad = pathProblem(entry.path, st.top);
  if (bad) return bad;
  const via = symlinkAncestor(normalizeEntry(entry.path), st.symlinks);
  return via ? `lies below the symlink ${via}` : undefined;
}

function makeDir(st: State, dir: string): void {
  if (st.dirs.has(dir)) return;
  mkdirSync(dir, { recursive: true });
  st.dirs.add(dir);
}

/** Where archive path `rel` (normalized, under `top`) is written; undefined when it is not `top` or below `top/`. */
function placed(st: State, rel: string): string | undefined {
  if (rel === st.top) return st.topDir;
  return rel.startsWith(`${st.top}/`) ? join(st.topDir, rel.slice(st.top.length + 1)) : undefined;
}

function writeFile(entry: ReadEntry, st: State, rel: string): void {
  const path = placed(st, rel)!;
  makeDir(st, dirname(path));
  const fd = openSync(path, "w", (entry.mode ?? 0o644) & 0o111 ? 0o755 : 0o644);
  st.openFd = fd;
  st.files.add(rel);
  entry.on("data", (chunk: Buffer) => {
    try {
      writeSync(fd, chunk);
    } catch (err) {
      st.problem ??= new CrateError("failed", `writing ${rel}: ${(err as Error).message}`);
    }
  });
  entry.on("end", () => {
    closeSync(fd);
    st.openFd = undefined;
  });
}

/** A hard link becomes a copy of a file the archive wrote earlier: never a link to anything outside. */
function copyHardLink(entry: ReadEntry, st: State, rel: string): void {
  const raw = entry.linkpath ?? "";
  const bad = pathProblem(raw, st.top);
  if (bad) return refuse(st, entry, `hard link target ${JSON.stringify(raw)} ${bad}`);
  const target = normalizeEntry(raw);
  if (!st.files.has(target)) return refuse(st, entry, `hard link to ${JSON.stringify(raw)}, which is not a file earlier in the archive`);
  const path = placed(st, rel)!;
  makeDir(st, dirname(path));
  copyFileSync(placed(st, target)!, path);
  st.files.add(rel);
  entry.resume();
}

function createSymlinks(st: State): void {
  for (const [path, target] of st.symlinks) {
    if (!linkStaysInside(path, target, st.top, st.symlinks)) {
      throw new CrateError("hostile", `refused archive entry ${JSON.stringify(path)}: symlink to ${JSON.stringify(target)} points outside the crate`);
    }
  }
  for (const [path, target] of st.symlinks) {
    const at = placed(st, path);
    if (at === undefined) continue; // `top\x`: beside the crate's folder, never installed (see onEntry)
    try {
      makeDir(st, dirname(at));
      symlinkSync(target, at);
    } catch (err) {
      // e.g. EEXIST: the archive also has a file or folder at this path (or below it)
      throw new CrateError("hostile", `refused archive entry ${JSON.stringify(path)}: ${(err as Error).message}`);
    }
  }
}
