// Owns the `rg`/`tree` links to the binary: created atomically (temp link + rename), replacing
// an older link but never a regular file a user put there.
import { lstat, mkdir, rename, rm, symlink } from "node:fs/promises";
import { join, resolve } from "node:path";

export const SHIM_NAMES = ["rg", "tree"] as const;

export async function writeShimLinks(dir: string, binary: string): Promise<string[]> {
  const target = resolve(binary);
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const name of SHIM_NAMES) {
    const path = join(dir, name);
    const existing = await lstat(path).catch(() => undefined);
    if (existing && !existing.isSymbolicLink()) {
      throw new Error(`${path} exists and is not a link; remove it first`);
    }
    const tmp = `${path}.tendril-${process.pid}`;
    await rm(tmp, { force: true });
    await symlink(target, tmp);
    await rename(tmp, path);
    written.push(path);
  }
  return written;
}
