// Owns one crate-fetch call: each request → its checkout folder, trying cargo's unpacked sources,
// tendril's cache, cargo's .crate files, then the registry (one download per crate across processes,
// under a lock file). Requests of one call run concurrently, bounded. Knows no argv, env or output
// format: cli/ turns results and CrateErrors into lines, JSON and exit codes.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { sha256 } from "../../core/ids.ts";
import type { Limits } from "../../core/limits.ts";
import { log, logFailure } from "../../core/log.ts";
import { type CargoLock, findCargoLock, type LockedPackage, lockedVersion } from "./cargo-lock.ts";
import { parseCrateSpec, type CrateRequest } from "./crate-spec.ts";
import { asCrateError, CrateError } from "./errors.ts";
import { Http } from "./http.ts";
import { IndexCache } from "./index-cache.ts";
import { downloadUrl, type IndexAnswer, indexRoot, Registry } from "./index-client.ts";
import { withFileLock } from "./lock.ts";
import { type IndexVersion, resolveVersion } from "./resolve.ts";
import * as cache from "./cache.ts";
import { checkDigest, verifyChecksum } from "./checksum.ts";
import type { CrateExtraction } from "./verify-extract.ts";

export type CrateLimits = Pick<
  Limits,
  | "MAX_CRATE_BYTES"
  | "MAX_CRATE_UNPACKED_BYTES"
  | "MAX_CRATE_FILES"
  | "MAX_CRATE_INDEX_BYTES"
  | "CRATES_HTTP_TIMEOUT_S"
  | "CRATES_HTTP_RETRIES"
  | "CRATES_RETRY_BACKOFF_S"
  | "CRATE_LOCK_STALE_S"
  | "CRATE_TEMP_STALE_S"
  | "MAX_PARALLEL_CRATES"
>;

export interface CrateProgress {
  crate: string;
  received: number;
  total?: number;
  done: boolean;
}

export interface FetcherOptions {
  /** `$XDG_CACHE_HOME/tendril`. */
  cacheDir: string;
  cargoHome?: string;
  /** Where the search for Cargo.lock starts. */
  cwd: string;
  indexUrl: string;
  dl?: string;
  limits: CrateLimits;
  userAgent: string;
  onProgress?: (p: CrateProgress) => void;
  fetch?: typeof fetch;
}

/** The `--json` shape, also the MCP tool's structured result. */
export interface CrateResult {
  crate_name: string;
  version: string;
  checkout_path: string;
  message: string;
}

interface Found {
  path: string;
  how: string;
}

export class CrateFetcher {
  private readonly http: Http;
  private readonly registry: Registry;
  private readonly store: cache.CrateStore;
  private lock?: Promise<CargoLock | undefined>;
  private swept = false;

  constructor(private readonly opts: FetcherOptions) {
    const l = opts.limits;
    this.http = new Http({
      timeoutS: l.CRATES_HTTP_TIMEOUT_S,
      retries: l.CRATES_HTTP_RETRIES,
      backoffS: l.CRATES_RETRY_BACKOFF_S,
      userAgent: opts.userAgent,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    });
    const indexUrl = indexRoot(opts.indexUrl);
    const root = join(opts.cacheDir, "crates", cache.registryKey(indexUrl));
    const indexCache = new IndexCache(join(root, ".index"));
    this.registry = new Registry(this.http, { indexUrl, dl: opts.dl, maxIndexBytes: l.MAX_CRATE_INDEX_BYTES, cache: indexCache });
    this.store = { root, ...(opts.cargoHome ? { cargoHome: opts.cargoHome } : {}) };
  }

  /** Every spec, at most MAX_PARALLEL_CRATES at once; results in argument order, failures as CrateErrors. */
  async fetchAll(specs: string[], signal?: AbortSignal): Promise<(CrateResult | CrateError)[]> {
    const out: (CrateResult | CrateError)[] = new Array(specs.length);
    let next = 0;
    const worker = async () => {
      while (next < specs.length) {
        const i = next++;
        out[i] = await this.fetch(specs[i]!, signal).catch(asCrateError);
      }
    };
    await Promise.all(Array.from({ length: Math.min(specs.length, this.opts.limits.MAX_PARALLEL_CRATES) }, worker));
    return out;
  }

  /** One request; index copies it saved are on disk when it settles. */
  async fetch(spec: string | CrateRequest, signal?: AbortSignal): Promise<CrateResult> {
    try {
      return await this.fetchOne(spec, signal);
    } finally {
      await this.registry.settle();
    }
  }

  private async fetchOne(spec: string | CrateRequest, signal?: AbortSignal): Promise<CrateResult> {
    const req = typeof spec === "string" ? parseCrateSpec(spec) : spec;
    const locked = req.range ? undefined : lockedVersion(await this.cargoLock(), req.name);
    const pin = req.exact ?? locked?.version;
    if (pin) {
      const hit = await this.findLocal(locked?.name ?? req.name, pin, locked?.checksum);
      if (hit) return result(locked?.name ?? req.name, pin, hit, req.exact ? undefined : "locked by Cargo.lock");
    }
    // A custom registry's config.json (the download template) is asked for alongside the index file.
    this.registry.template(signal).catch(logFailure("reading the registry config ahead"));
    let index: IndexAnswer | undefined;
    try {
      index = await this.registry.versions(req.name, signal);
    } catch (err) {
      if (err instanceof CrateError && err.kind === "offline") return this.offline(req, locked, err);
      throw err;
    }
    if (!index) throw await this.notFound(req.name, signal);
    const { entry, note } = resolveVersion(req, index.versions, locked?.version);
    if (locked?.checksum && locked.version === entry.vers && locked.checksum.toLowerCase() !== entry.cksum) {
      // cargo refuses this too: the registry now serves different bytes than the workspace locked.
      throw new CrateError("checksum", `${entry.name} ${entry.vers}: Cargo.lock's checksum ${locked.checksum} differs from the index's ${entry.cksum}`);
    }
    const found = (await this.findLocal(entry.name, entry.vers, entry.cksum)) ?? (await this.download(entry, signal));
    return result(entry.name, entry.vers, found, [note, index.stale].filter(Boolean).join("; ") || undefined);
  }

  /** crates.io treats `-` and `_` alike for uniqueness, so the other spelling is worth suggesting. */
  private async notFound(name: string, signal?: AbortSignal): Promise<CrateError> {
    const other = name.includes("-") ? name.replaceAll("-", "_") : name.replaceAll("_", "-");
    const found = other !== name ? await this.registry.versions(other, signal).catch(() => undefined) : undefined;
    const hint = found ? `; did you mean ${found.versions[0]!.name}?` : "";
    return new CrateError("not-found", `no crate named ${name} in the registry ${this.registry.indexUrl}${hint}`);
  }

  private cargoLock(): Promise<CargoLock | undefined> {
    this.lock ??= findCargoLock(this.opts.cwd).catch((err: Error) => {
      log.warn("ignoring Cargo.lock", { error: err.message });
      return undefined;
    });
    return this.lock;
  }

  /** cargo's sources, tendril's cache, then cargo's .crate (extracted into tendril's cache). */
  private async findLocal(name: string, version: string, cksum?: string): Promise<Found | undefined> {
    const unpacked = await cache.findUnpacked(this.store, name, version);
    // A run that only hits the cache still clears what a killed fetch left (once per call: one directory read).
    if (unpacked?.source === "tendril-cache") this.sweepOnce();
    if (unpacked) return { path: unpacked.path, how: unpacked.source === "cargo-src" ? "found in cargo's unpacked sources" : "found in tendril's cache" };
    const file = await cache.findCargoCrateFile(this.store, name, version);
    if (!file) return undefined;
    const gz = await readFile(file);
    if (cksum) {
      try {
        verifyChecksum(gz, cksum, file);
      } catch (err) {
        log.warn("skipping cargo's .crate file", { file, error: (err as Error).message });
        return undefined;
      }
    }
    const path = await this.install(name, version, cache.fromBytes(gz));
    return { path, how: `extracted from cargo's download ${file}` };
  }

  private async download(entry: IndexVersion, signal?: AbortSignal): Promise<Found> {
    const url = downloadUrl(await this.registry.template(signal), entry.name, entry.vers, entry.cksum);
    const crate = `${entry.name} ${entry.vers}`;
    // The body streams through the hash into the extraction as it arrives; a mismatch found at the end
    // throws before the rename, so the temp folder (all there is) goes.
    const path = await this.install(entry.name, entry.vers, async (begin) => {
      let hash = sha256();
      let extraction: CrateExtraction | undefined;
      let bytes = 0;
      const got = await this.http.get(url, {
        maxBytes: this.opts.limits.MAX_CRATE_BYTES,
        limitName: "MAX_CRATE_BYTES",
        signal,
        onProgress: (received, total) => {
          bytes = received;
          this.opts.onProgress?.({ crate, received, total, done: false });
        },
        sink: () => {
          hash = sha256();
          const x = (extraction = begin());
          return (chunk) => {
            hash.update(chunk);
            x.write(chunk);
          };
        },
      });
      if (got.status === "missing") throw new CrateError("failed", `${url}: HTTP ${got.code}: the index lists ${crate} but the registry has no download`);
      checkDigest(hash.hex(), entry.cksum, `${url} (index cksum)`);
      log.info("downloaded", { crate, url, bytes });
      this.opts.onProgress?.({ crate, received: bytes, total: bytes, done: true });
      return extraction ?? begin();
    }, signal);
    return { path, how: `downloaded from ${url}` };
  }

  /** Under the crate's lock: unless another process finished meanwhile, extract and install. */
  private install(name: string, version: string, fill: (begin: cache.BeginExtraction) => Promise<CrateExtraction>, signal?: AbortSignal): Promise<string> {
    const l = this.opts.limits;
    const limits = { maxUnpackedBytes: l.MAX_CRATE_UNPACKED_BYTES, maxFiles: l.MAX_CRATE_FILES };
    return withFileLock(
      cache.lockPath(this.store, name, version),
      { staleS: l.CRATE_LOCK_STALE_S, maxWaitS: holderBoundS(l), ...(signal ? { signal } : {}) },
      () => cache.cachedCheckout(this.store, name, version),
      () => {
        // Swept under the lock: a holder killed while we waited is dead by now, and its folder goes.
        this.sweep();
        return cache.installCrate(this.store, name, version, fill, limits);
      },
    );
  }

  private sweep(): void {
    this.swept = true;
    cache.sweepTemps(this.store, this.opts.limits.CRATE_TEMP_STALE_S);
  }

  private sweepOnce(): void {
    if (!this.swept) this.sweep();
  }

  /** The registry is unreachable: resolve among the versions cached locally, or say what failed. */
  private async offline(req: CrateRequest, locked: LockedPackage | undefined, cause: CrateError): Promise<CrateResult> {
    const local = await cache.localVersions(this.store, req.name);
    const versions = local.map((vers) => ({ name: req.name, vers, cksum: "", yanked: false }));
    let chosen: IndexVersion;
    try {
      chosen = resolveVersion(req, versions, locked?.version).entry;
    } catch {
      const have = local.length > 0 ? `cached versions (${local.join(", ")}) do not match` : `no cached copy of ${req.name}`;
      throw new CrateError("offline", `registry unreachable: ${cause.message}; ${have}`);
    }
    const hit = await this.findLocal(chosen.name, chosen.vers);
    if (!hit) throw new CrateError("offline", `registry unreachable: ${cause.message}; no usable cached copy of ${req.name}`);
    return result(chosen.name, chosen.vers, hit, "registry unreachable, served from the local cache (yanked status not checked)");
  }
}

/** How long to wait for another process's download before doing it too: every attempt idling out, plus staleness. */
function holderBoundS(l: CrateLimits): number {
  const backoffs = l.CRATES_RETRY_BACKOFF_S * (2 ** l.CRATES_HTTP_RETRIES - 1);
  return l.CRATES_HTTP_TIMEOUT_S * (l.CRATES_HTTP_RETRIES + 1) + backoffs + l.CRATE_LOCK_STALE_S;
}

function result(name: string, version: string, found: Found, note?: string): CrateResult {
  return { crate_name: name, version, checkout_path: found.path, message: note ? `${found.how}; ${note}` : found.how };
}
