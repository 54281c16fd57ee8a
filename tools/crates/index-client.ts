// Owns the sparse registry protocol: index file paths, parsing index lines, the registry's config.json
// and the download URL template (`{crate}`, `{version}`, `{prefix}`, `{lowerprefix}`, `{sha256-checksum}`).
// Does not choose versions (resolve.ts) or touch the disk.
import semver from "semver";
import { log } from "../../core/log.ts";
import { isCrateName } from "./crate-spec.ts";
import type { GetResult, Http } from "./http.ts";
import type { IndexCache } from "./index-cache.ts";
import { CrateError } from "./errors.ts";
import type { IndexVersion } from "./resolve.ts";

export const CRATES_IO_INDEX = "https://index.crates.io/";
export const CRATES_IO_DL = "https://static.crates.io/crates";

/** The index URL as paths are appended to it: with one trailing slash. */
export function indexRoot(url: string): string {
  return url.endsWith("/") ? url : `${url}/`;
}

/** Cargo's directory prefix for a name: `1`, `2`, `3/a`, or `se/rd`. */
export function namePrefix(name: string): string {
  if (name.length <= 2) return String(name.length);
  if (name.length === 3) return `3/${name[0]}`;
  return `${name.slice(0, 2)}/${name.slice(2, 4)}`;
}

/** The index file's path below the index root: always lower case. */
export function indexPath(name: string): string {
  const lower = name.toLowerCase();
  return `${namePrefix(lower)}/${lower}`;
}

const MARKERS = /\{(crate|version|prefix|lowerprefix|sha256-checksum)\}/;

/** Fills a `dl` template; one without markers gets `/{crate}/{version}/download` appended, as cargo does. */
export function downloadUrl(template: string, name: string, version: string, cksum: string): string {
  const t = MARKERS.test(template) ? template : `${template.replace(/\/+$/, "")}/{crate}/{version}/download`;
  const values: Record<string, string> = {
    crate: name,
    version,
    prefix: namePrefix(name),
    lowerprefix: namePrefix(name.toLowerCase()),
    "sha256-checksum": cksum,
  };
  return t.replace(new RegExp(MARKERS.source, "g"), (_, key: string) => values[key]!);
}

const SHA256 = /^[0-9a-fA-F]{64}$/;

/** Index lines → versions. Lines that are not JSON or lack the fields are skipped, as cargo skips them. */
export function parseIndexFile(text: string): IndexVersion[] {
  const out: IndexVersion[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const v = JSON.parse(line) as Record<string, unknown>;
      if (typeof v.name !== "string" || typeof v.vers !== "string" || typeof v.cksum !== "string") continue;
      // Names and versions become folder names: only a valid crate name, semver and a SHA-256 pass.
      const vers = semver.valid(v.vers);
      if (!isCrateName(v.name) || vers === null || !SHA256.test(v.cksum)) continue;
      out.push({ name: v.name, vers, cksum: v.cksum.toLowerCase(), yanked: v.yanked === true });
    } catch {
      // a line a newer cargo wrote in a format we do not know
    }
  }
  return out;
}

export interface RegistryOptions {
  indexUrl: string;
  /** An explicit `dl` template (TENDRIL_CRATES_DL); else config.json's, or crates.io's for crates.io. */
  dl?: string;
  maxIndexBytes: number;
  /** Saved copies of index files: revalidated with their ETag/Last-Modified, used when offline. */
  cache?: IndexCache;
}

/** A crate's versions; `stale` says why they come from a saved copy the registry could not confirm. */
export interface IndexAnswer {
  versions: IndexVersion[];
  stale?: string;
}

/** A file may only speak for the crate it is named after (cargo checks the same). */
function answer(name: string, body: string, stale?: string): IndexAnswer | undefined {
  const versions = parseIndexFile(body).filter((v) => v.name.toLowerCase() === name.toLowerCase());
  if (versions.length === 0) return undefined;
  return stale ? { versions, stale } : { versions };
}

export class Registry {
  private dlTemplate?: Promise<string>;
  /** One index request per crate per call, however many requests name it. */
  private readonly files = new Map<string, Promise<IndexAnswer | undefined>>();
  private readonly saving: Promise<void>[] = [];
  readonly indexUrl: string;

  constructor(
    private readonly http: Http,
    private readonly opts: RegistryOptions,
  ) {
    this.indexUrl = indexRoot(opts.indexUrl);
  }

  /** Every published version of `name`, or undefined when the registry has no such crate. */
  versions(name: string, signal?: AbortSignal): Promise<IndexAnswer | undefined> {
    const key = name.toLowerCase();
    let got = this.files.get(key);
    if (!got) this.files.set(key, (got = this.readIndex(name, signal)));
    return got;
  }

  /** Asks the registry, sending the saved copy's validators; an unreachable registry falls back to the copy. */
  private async readIndex(name: string, signal?: AbortSignal): Promise<IndexAnswer | undefined> {
    const path = indexPath(name);
    const url = this.indexUrl + path;
    const cached = await this.opts.cache?.read(path);
    const headers: Record<string, string> = {};
    if (cached?.etag) headers["if-none-match"] = cached.etag;
    if (cached?.lastModified) headers["if-modified-since"] = cached.lastModified;
    let got: GetResult;
    try {
      got = await this.http.get(url, { maxBytes: this.opts.maxIndexBytes, limitName: "MAX_CRATE_INDEX_BYTES", headers, signal });
    } catch (err) {
      if (!cached || !(err instanceof CrateError) || err.kind !== "offline") throw err;
      const saved = new Date(cached.savedMs).toISOString();
      return answer(name, cached.body, `registry unreachable (${err.message}); used the index copy saved ${saved}`);
    }
    log.debug("index", { url, answer: got.status });
    if (got.status === "missing") {
      await this.opts.cache?.remove(path);
      return undefined;
    }
    if (got.status === "not-modified") {
      if (!cached) throw new CrateError("failed", `${url}: HTTP 304 to a request without validators`);
      return answer(name, cached.body);
    }
    const body = new TextDecoder().decode(got.body);
    // Saved while the caller goes on (downloading, extracting); settle() waits for it before exit.
    if (this.opts.cache) this.saving.push(this.opts.cache.write(path, { body, etag: got.etag, lastModified: got.lastModified }));
    return answer(name, body);
  }

  /** Resolves once every index copy being saved is on disk (IndexCache.write never rejects). */
  async settle(): Promise<void> {
    await Promise.all(this.saving.splice(0));
  }

  /** The download template: asked once per call, and not at all when given or for crates.io. */
  template(signal?: AbortSignal): Promise<string> {
    if (this.opts.dl) return Promise.resolve(this.opts.dl);
    if (this.indexUrl === CRATES_IO_INDEX) return Promise.resolve(CRATES_IO_DL);
    this.dlTemplate ??= this.readConfig(signal);
    return this.dlTemplate;
  }

  private async readConfig(signal?: AbortSignal): Promise<string> {
    const url = `${this.indexUrl}config.json`;
    const got = await this.http.get(url, { maxBytes: this.opts.maxIndexBytes, limitName: "MAX_CRATE_INDEX_BYTES", signal });
    if (got.status !== "ok") throw new CrateError("failed", `${url}: ${got.status === "missing" ? `HTTP ${got.code}` : "HTTP 304"}: not a sparse registry`);
    let dl: unknown;
    try {
      dl = (JSON.parse(new TextDecoder().decode(got.body)) as { dl?: unknown }).dl;
    } catch {
      dl = undefined;
    }
    if (typeof dl !== "string" || dl === "") throw new CrateError("failed", `${url}: no "dl" download template`);
    return dl;
  }
}
