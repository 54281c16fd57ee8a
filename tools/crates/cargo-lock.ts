// Owns reading the workspace's Cargo.lock: found upward from a directory, registry packages only
// (path and git dependencies have no published source). Does not decide what a pin means (resolve.ts).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import semver from "semver";
import { parse as parseToml } from "smol-toml";

export interface LockedPackage {
  name: string;
  version: string;
  /** SHA-256 of the .crate as cargo recorded it, when present. */
  checksum?: string;
}

export interface CargoLock {
  path: string;
  packages: LockedPackage[];
}

/** The nearest Cargo.lock at or above `dir`, or undefined. An unreadable or malformed file is an error. */
export async function findCargoLock(dir: string): Promise<CargoLock | undefined> {
  for (let at = dir; ; at = dirname(at)) {
    const path = join(at, "Cargo.lock");
    const text = readIfPresent(path);
    if (text !== undefined) return { path, packages: parseCargoLock(text, path) };
    if (dirname(at) === at) return undefined;
  }
}

function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
}

export function parseCargoLock(text: string, path: string): LockedPackage[] {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${path}: not valid TOML: ${(err as Error).message.split("\n")[0]}`);
  }
  const raw = Array.isArray(doc.package) ? (doc.package as Record<string, unknown>[]) : [];
  const out: LockedPackage[] = [];
  for (const p of raw) {
    const source = typeof p.source === "string" ? p.source : "";
    const version = typeof p.version === "string" ? semver.valid(p.version) : null;
    if (typeof p.name !== "string" || version === null) continue;
    if (!source.startsWith("registry+") && !source.startsWith("sparse+")) continue;
    out.push({ name: p.name, version, ...(typeof p.checksum === "string" ? { checksum: p.checksum } : {}) });
  }
  return out;
}

/** The pin for `name` (the highest, when a workspace locks several versions of one crate). */
export function lockedVersion(lock: CargoLock | undefined, name: string): LockedPackage | undefined {
  const key = name.toLowerCase();
  const hits = (lock?.packages ?? []).filter((p) => p.name.toLowerCase() === key);
  return hits.sort((a, b) => semver.rcompare(a.version, b.version)).at(0);
}
