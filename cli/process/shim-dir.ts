// Owns the shell tool's shim folder: a 0700 temp dir `tendril-shims-PID-XXXXXX` holding `rg` and
// `tree` (links to the binary, or wrapper scripts when run from source), its removal, and the sweep
// of folders whose owner died without removing them (SIGKILL). Does not decide when to remove.
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pidAlive } from "../../core/process-group.ts";
import { selfCommand } from "./self.ts";
import { SHIM_NAMES } from "./shim-links.ts";

const PREFIX = "tendril-shims-";
const OWNED = /^tendril-shims-(\d+)-/;

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * A fresh shim dir named after this process, so a later start can tell whether its owner lives.
 * Synchronous: no signal handler can run between the folder's creation and its being known (a stop
 * that came while it was being made would otherwise exit with the folder left behind).
 */
export function makeShimDir(): string {
  const dir = mkdtempSync(join(tmpdir(), `${PREFIX}${process.pid}-`));
  try {
    const self = selfCommand();
    for (const name of SHIM_NAMES) {
      const path = join(dir, name);
      // A fresh private folder: nothing to replace, so no temp-link-and-rename as `tendril shims` does.
      if (self.args.length === 0) symlinkSync(resolve(self.command), path);
      else writeFileSync(path, `#!/bin/sh\nexec ${[self.command, ...self.args, name].map(shQuote).join(" ")} "$@"\n`, { mode: 0o755 });
    }
  } catch (err) {
    removeShimDir(dir);
    throw err;
  }
  return dir;
}

export function removeShimDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
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
    if (owner === undefined || Number(owner) === process.pid || pidAlive(Number(owner))) continue;
    try {
      rmSync(join(dir, name), { recursive: true, force: true });
      removed++;
    } catch {
      // another user's folder, or already gone
    }
  }
  return removed;
}
