// Owns the shell tool's shim folder: a 0700 temp dir `tendril-shims-PID-XXXXXX` holding `rg` and
// `tree` (links to the binary, or wrapper scripts when run from source), its removal, and the sweep
// of folders whose owner died without removing them (SIGKILL). Does not decide when to remove.
import { readdirSync, rmSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { selfCommand } from "./self.ts";

const PREFIX = "tendril-shims-";
const OWNED = /^tendril-shims-(\d+)-/;

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A fresh shim dir named after this process, so a later start can tell whether its owner lives. */
export async function makeShimDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `${PREFIX}${process.pid}-`));
  const self = selfCommand();
  if (self.args.length === 0) {
    const { writeShimLinks } = await import("./shim-links.ts");
    await writeShimLinks(dir, self.command);
    return dir;
  }
  for (const name of ["rg", "tree"]) {
    const argv = [self.command, ...self.args, name].map(shQuote).join(" ");
    await writeFile(join(dir, name), `#!/bin/sh\nexec ${argv} "$@"\n`, { mode: 0o755 });
  }
  return dir;
}

export function removeShimDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes shim dirs in TMPDIR whose owner pid is gone; returns how many. Never throws. */
export function sweepStaleShimDirs(dir: string = tmpdir()): number {
  let removed = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    const owner = OWNED.exec(name)?.[1];
    if (owner === undefined || Number(owner) === process.pid || alive(Number(owner))) continue;
    try {
      rmSync(join(dir, name), { recursive: true, force: true });
      removed++;
    } catch {
      // another user's folder, or already gone
    }
  }
  return removed;
}
