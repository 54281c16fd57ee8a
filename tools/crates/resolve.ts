// Owns version choice: which published version a request means, given the index's versions and an
// optional Cargo.lock pin. Pure; knows nothing about where versions come from or how they are fetched.
import semver from "semver";
import { CrateError } from "./errors.ts";
import type { CrateRequest } from "./crate-spec.ts";

/** One line of a sparse index file, reduced to what fetching needs. */
export interface IndexVersion {
  name: string;
  vers: string;
  /** SHA-256 of the .crate, hex; empty when unknown (versions seen only in local caches). */
  cksum: string;
  yanked: boolean;
}

export interface Resolution {
  entry: IndexVersion;
  /** Why this version, when it is not simply the highest match (for the `message` field). */
  note?: string;
}

const NEAREST_SHOWN = 5;

export function resolveVersion(req: CrateRequest, versions: IndexVersion[], locked?: string): Resolution {
  const valid = versions.filter((v) => semver.valid(v.vers) !== null);
  if (req.exact) return pick(req, valid, req.exact, "pinned");
  if (!req.range && locked) return pick(req, valid, locked, "locked by Cargo.lock");
  const live = valid.filter((v) => !v.yanked);
  const range = req.range ?? "*";
  const stable = maxMatching(live, range, false);
  if (stable) return { entry: stable };
  const pre = maxMatching(live, range, true);
  if (pre) return { entry: pre, note: req.range ? undefined : "no stable version published; took a prerelease" };
  throw noMatch(req, valid);
}

function maxMatching(versions: IndexVersion[], range: string, includePrerelease: boolean): IndexVersion | undefined {
  const best = semver.maxSatisfying(
    versions.map((v) => v.vers),
    range,
    { includePrerelease },
  );
  return best === null ? undefined : versions.find((v) => v.vers === best);
}

/** An exact version is served even when yanked: it was asked for by name (as Cargo.lock pins are). */
function pick(req: CrateRequest, versions: IndexVersion[], version: string, why: string): Resolution {
  const entry = versions.find((v) => semver.eq(v.vers, version));
  if (!entry) throw noMatch(req, versions, why === "pinned" ? undefined : `${why} at ${version}, `);
  return { entry, note: entry.yanked ? `${why}; version ${entry.vers} is yanked` : why === "pinned" ? undefined : why };
}

function noMatch(req: CrateRequest, versions: IndexVersion[], prefix = ""): CrateError {
  const what = req.range ?? "any version";
  const near = nearestVersions(versions, req.exact ?? req.range);
  const list = near.length > 0 ? `; nearest: ${near.join(", ")}` : "; no versions are published";
  const allYanked = versions.length > 0 && versions.every((v) => v.yanked) ? " (every version is yanked)" : "";
  return new CrateError("no-match", `${req.name}: ${prefix}no version matches ${what}${allYanked}${list}`);
}

/** Up to five versions around where the range starts, yanked ones marked. */
export function nearestVersions(versions: IndexVersion[], range?: string): string[] {
  const sorted = [...versions].sort((a, b) => semver.compare(a.vers, b.vers));
  const floor = range && semver.validRange(range) ? semver.minVersion(range) : null;
  let at = floor ? sorted.findIndex((v) => semver.gte(v.vers, floor)) : sorted.length;
  if (at < 0) at = sorted.length;
  const start = Math.max(0, Math.min(at - 3, sorted.length - NEAREST_SHOWN));
  return sorted.slice(start, start + NEAREST_SHOWN).map((v) => (v.yanked ? `${v.vers} (yanked)` : v.vers));
}
