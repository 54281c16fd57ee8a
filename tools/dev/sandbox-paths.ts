// Owns what a path is, as the sandbox's mount plans ask it (its last link not followed, or followed),
// and the small tolerant reads they make of the file system. No mounts are decided here.
import { readdirSync, readFileSync, statSync, lstatSync } from "node:fs";
import { join } from "node:path";

/** What a path itself is, its last link not followed. */
export function entryKind(p: string): "dir" | "file" | "link" | "other" | "none" {
  try {
    const st = lstatSync(p);
    return st.isDirectory() ? "dir" : st.isFile() ? "file" : st.isSymbolicLink() ? "link" : "other";
  } catch {
    return "none";
  }
}

export function isSymlink(p: string): boolean {
  return entryKind(p) === "link";
}

export function isRealFile(p: string): boolean {
  return entryKind(p) === "file";
}

/** A directory that is not a symlink (`/var/run` is usually a link to `/run`, masked with it). */
export function isRealDir(p: string): boolean {
  return entryKind(p) === "dir";
}

export function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}


export function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

export function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

