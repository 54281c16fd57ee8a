// Owns where crate sources live on disk: cargo's unpacked sources and downloaded .crate files under
// $CARGO_HOME (read only), and tendril's cache `<cache>/crates/<registry>/NAME-VER`, filled atomically
// (extract into `.tmp/`, then rename) so a folder that exists is complete, and the sweep of temp folders
// a killed fetch left there. Does not download or resolve.
import { createHash } from "node:crypto";
import { randomHex } from "../../core/ids.ts";
import { existsSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { HOST, ownerGone } from "./owner.ts";
import type { CrateExtraction, ExtractLimits } from "./verify-extract.ts";

export interface CrateStore {
  /** tendril's folder for one registry: `<cache>/crates/<host>-<hash>`. */
  root: string;
  cargoHome?: string;
}

export type LocalSource = "cargo-src" | "tendril-cache";

/** A readable, stable folder name per index URL (cargo does the same with `index.crates.io-<hash>`). */
export function registryKey(indexUrl: string): string {
  const host = (URL.canParse(indexUrl) ? new URL(indexUrl).host : "registry").replace(/[^A-Za-z0-9.-]/g, "_");
  return `${host}-${createHash("sha256").update(indexUrl).digest("hex").slice(0, 16)}`;
}

export function checkoutDir(store: CrateStore, name: string, version: string): string {
  return join(store.root, `${name}-${version}`);
}

export function lockPath(store: CrateStore, name: string, version: string): string {
  return join(store.root, ".locks", `${name}-${version}.lock`);
}

// Metadata calls here are synchronous on purpose: each is microseconds, a thread-pool round trip costs more.
function exists(path: string): boolean {
  return existsSync(path);
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

async function subdirs(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.filter((e) => e.isDirectory()).map((e) => join(dir, e.name)).sort();
}

/** cargo's unpacked copy (complete once cargo wrote `.cargo-ok`), then tendril's cache. */
export async function findUnpacked(store: CrateStore, name: string, version: string): Promise<{ path: string; source: LocalSource } | undefined> {
  if (store.cargoHome) {
    for (const reg of await subdirs(join(store.cargoHome, "registry", "src"))) {
      const path = join(reg, `${name}-${version}`);
      if (exists(join(path, ".cargo-ok"))) return { path, source: "cargo-src" };
    }
  }
  const ours = await cachedCheckout(store, name, version);
  return ours ? { path: ours, source: "tendril-cache" } : undefined;
}

/** tendril's own complete copy, if present. */
export async function cachedCheckout(store: CrateStore, name: string, version: string): Promise<string | undefined> {
  const path = checkoutDir(store, name, version);
  return (exists(path)) ? path : undefined;
}

/** cargo's downloaded `NAME-VER.crate`, if any registry folder has one. */
export async function findCargoCrateFile(store: CrateStore, name: string, version: string): Promise<string | undefined> {
  if (!store.cargoHome) return undefined;
  for (const reg of await subdirs(join(store.cargoHome, "registry", "cache"))) {
    const path = join(reg, `${name}-${version}.crate`);
    if (exists(path)) return path;
  }
  return undefined;
}

/** Versions of `name` present in any local store, for resolving without the registry. */
export async function localVersions(store: CrateStore, name: string): Promise<string[]> {
  const dirs = [store.root];
  if (store.cargoHome) {
    dirs.push(...(await subdirs(join(store.cargoHome, "registry", "src"))));
    dirs.push(...(await subdirs(join(store.cargoHome, "registry", "cache"))));
  }
  const found = new Set<string>();
  const prefix = `${name}-`.toLowerCase();
  for (const dir of dirs) {
    for (const entry of listDir(dir)) {
      if (!entry.toLowerCase().startsWith(prefix)) continue;
      const version = semver.valid(entry.slice(prefix.length).replace(/\.crate$/, ""));
      if (version) found.add(version);
    }
  }
  return [...found];
}

/** Starts (or, after a cut-off download, restarts) an extraction into a fresh temp folder. */
export type BeginExtraction = () => CrateExtraction;

/** A `fill` for installCrate from bytes already in memory (cargo's .crate files, tests). */
export function fromBytes(gz: Uint8Array): (begin: BeginExtraction) => Promise<CrateExtraction> {
  return async (begin) => {
    const x = begin();
    x.write(gz);
    return x;
  };
}

/**
 * `fill` feeds an extraction into `.tmp/` (checking whatever it must, e.g. the checksum, before it returns);
 * the finished folder is then renamed into place. The temp folder is removed whatever happens.
 */
export async function installCrate(
  store: CrateStore,
  name: string,
  version: string,
  fill: (begin: BeginExtraction) => Promise<CrateExtraction>,
  limits: ExtractLimits,
): Promise<string> {
  const top = `${name}-${version}`;
  const final = checkoutDir(store, name, version);
  const tmp = join(store.root, ".tmp", tempName(top));
  // Loaded here: a cache hit never needs the tar parser.
  const { CrateExtraction } = await import("./verify-extract.ts");
  let current: CrateExtraction | undefined;
  // The temp folder is the crate's folder itself (the extraction makes it): renamed into place, it leaves
  // nothing to remove.
  const begin = () => {
    if (current) {
      current.dispose();
      rmSync(tmp, { recursive: true, force: true });
    }
    return (current = new CrateExtraction(tmp, top, limits));
  };
  let renamed = false;
  try {
    (await fill(begin)).finish();
    try {
      renameSync(tmp, final);
      renamed = true;
    } catch (err) {
      // Another writer (without our lock: an older tendril, a copy by hand) finished first: theirs is complete.
      if (!exists(final)) throw err;
    }
    return final;
  } finally {
    current?.dispose();
    if (!renamed) rmSync(tmp, { recursive: true, force: true });
  }
}

/** `NAME-VER@HOST.PID.NONCE`: the host says where the pid means something (`@` is in no crate name or version). */
function tempName(top: string): string {
  return `${top}@${HOST}.${process.pid}.${randomHex(6)}`;
}

const TEMP_NAME = /@([A-Za-z0-9._-]+)\.(\d+)\.[0-9a-f]+$/;

/**
 * Removes temp folders whose fetch is over without having removed them (SIGKILL, a power cut): on this
 * host, those whose pid is gone; another host's (or an older tendril's, whose name has no host) only
 * once older than `otherHostStaleS` (the folder's mtime: when its attempt began), since their pid
 * cannot be checked from here. Cheap when there is nothing to sweep (one directory read); never throws.
 */
export function sweepTemps(store: CrateStore, otherHostStaleS: number): void {
  const dir = join(store.root, ".tmp");
  for (const entry of listDir(dir)) {
    const path = join(dir, entry);
    const owner = TEMP_NAME.exec(entry);
    const gone = owner && owner[1] === HOST ? ownerGone(Number(owner[2]), owner[1]) : olderThan(path, otherHostStaleS);
    if (!gone) continue;
    try {
      rmSync(path, { recursive: true, force: true });
    } catch {
      // another user's folder, or being removed by someone else
    }
  }
}

function olderThan(path: string, seconds: number): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > seconds * 1000;
  } catch {
    return false;
  }
}
