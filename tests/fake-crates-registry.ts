// A loopback sparse registry for crate-fetch tests and benchmarks: index files with `cksum` and `yanked`,
// `.crate` tarballs built here (well-formed or hostile), a request log, scripted failures per path, and
// the ways real servers differ (gzip-encoded answers, Retry-After, cut-off and truncated bodies).
import { createHash } from "node:crypto";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { Header } from "tar";

export interface TarEntry {
  path: string;
  type?: "File" | "Directory" | "SymbolicLink" | "Link" | "CharacterDevice" | "FIFO";
  body?: string | Buffer;
  linkpath?: string;
  /** Declared size, when it should differ from the body (size bombs declare and never send). */
  size?: number;
  mode?: number;
}

/** A gzipped tar of exactly these entries, paths unchecked: hostile archives are built with it. */
export function rawTarball(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const body = typeof e.body === "string" ? Buffer.from(e.body) : (e.body ?? Buffer.alloc(0));
    const header = Buffer.alloc(512);
    new Header({
      path: e.path,
      type: e.type ?? "File",
      size: e.size ?? body.length,
      mode: e.mode ?? (e.type === "Directory" ? 0o755 : 0o644),
      linkpath: e.linkpath,
      mtime: new Date(0),
      uid: 0,
      gid: 0,
    }).encode(header);
    parts.push(header, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts), { level: 1 });
}

/** A well-formed .crate: every file under `NAME-VER/`, a Cargo.toml unless given. */
export function crateTarball(name: string, vers: string, files: Record<string, string | Buffer> = {}): Buffer {
  const top = `${name}-${vers}`;
  const all = { "Cargo.toml": `[package]\nname = "${name}"\nversion = "${vers}"\n`, "src/lib.rs": `// ${name} ${vers}\n`, ...files };
  return rawTarball(Object.entries(all).map(([path, body]) => ({ path: `${top}/${path}`, body })));
}

/** The expected checksum, computed here rather than by core/ids.ts so the tests do not check the product with itself. */
export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** A trickled download arrives in this many pieces. */
export const TRICKLE_PIECES = 8;

export interface FakeVersion {
  vers: string;
  yanked?: boolean;
  /** The .crate served; built from `files` when absent. */
  tarball?: Buffer;
  files?: Record<string, string | Buffer>;
  /** The index's cksum; the tarball's real one when absent (set it to provoke a mismatch). */
  cksum?: string;
}

export class FakeRegistry {
  private server?: Server;
  private readonly crates = new Map<string, { name: string; versions: (FakeVersion & { tarball: Buffer })[] }>();
  /** Every request path, in arrival order. */
  readonly requests: string[] = [];
  /** Index requests answered 304 because the client's If-None-Match matched. */
  notModified = 0;
  /** Statuses to answer, in order, before serving a path normally (e.g. [500] for one failure). */
  readonly failures = new Map<string, number[]>();
  /** The `Retry-After` header sent with scripted failures, when set (seconds, or an HTTP date). */
  retryAfter?: string;
  /** Paths never answered (the connection stays open until stop()), for timeouts. */
  readonly hangs = new Set<string>();
  /** Answers (index files or downloads) to cut off half-way (connection dropped) this many times before serving them whole. */
  readonly cutOffs = new Map<string, number>();
  /**
   * Encode every 200 answer with `Content-Encoding: gzip` when the client accepts it (nginx `gzip on`,
   * Artifactory, a CDN): `Content-Length` is then the encoded size.
   */
  gzip = false;
  /** Answers sent gzip-encoded so far. */
  gzipAnswers = 0;
  /** With `gzip`: answers to send this many times as a well-framed body holding only the first half of the gzip stream. */
  readonly truncatedGzip = new Map<string, number>();
  /** Milliseconds to pause between the TRICKLE_PIECES pieces of each download body (slow links; not with `gzip`). */
  trickleMs = 0;
  /** Milliseconds to hold each download before answering (to overlap concurrent fetchers). */
  downloadDelayMs = 0;
  /** The `dl` that config.json advertises; `{base}` is replaced by the server's address. */
  dlTemplate = "{base}/dl";
  base = "";

  add(name: string, ...versions: FakeVersion[]): this {
    const key = name.toLowerCase();
    const entry = this.crates.get(key) ?? { name, versions: [] };
    for (const v of versions) entry.versions.push({ ...v, tarball: v.tarball ?? crateTarball(name, v.vers, v.files) });
    this.crates.set(key, entry);
    return this;
  }

  get indexUrl(): string {
    return `${this.base}/index/`;
  }

  count(prefix: string): number {
    return this.requests.filter((r) => r.startsWith(prefix)).length;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const accepts = /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""));
      void this.answer(req.url ?? "/", this.gzip && accepts ? this.gzipEncoder(req.url ?? "/", res) : res, req.headers["if-none-match"]);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /**
   * A stand-in for `res` whose 200 answers go out gzip-encoded: writeHead is held until the body is known,
   * then sent with the encoded length (so a cut-off or truncated answer stays cut off in encoded bytes).
   */
  private gzipEncoder(path: string, res: ServerResponse): ServerResponse {
    let status = 200;
    let headers: Record<string, string | number> = {};
    const body: Buffer[] = [];
    const flush = (cut: boolean, done?: () => void) => {
      if (status !== 200) return void res.writeHead(status, headers).end(Buffer.concat(body));
      const whole = gzipSync(Buffer.concat(body));
      const truncate = (this.truncatedGzip.get(path) ?? 0) > 0;
      if (truncate) this.truncatedGzip.set(path, this.truncatedGzip.get(path)! - 1);
      const sent = truncate ? whole.subarray(0, whole.length >> 1) : whole;
      this.gzipAnswers++;
      res.writeHead(200, { ...headers, "content-encoding": "gzip", "content-length": sent.length });
      if (cut) res.write(sent.subarray(0, sent.length >> 1), done);
      else res.end(sent);
    };
    const proxy = {
      writeHead(code: number, h: Record<string, string | number> = {}) {
        status = code;
        headers = Object.fromEntries(Object.entries(h).filter(([k]) => k.toLowerCase() !== "content-length"));
        return proxy;
      },
      // Only cut-offs write part of a body and then destroy the socket: the callback does that.
      write(chunk: Buffer, done?: () => void) {
        body.push(Buffer.from(chunk));
        if (done) flush(true, done);
        return true;
      },
      end(chunk?: string | Buffer) {
        if (chunk !== undefined) body.push(Buffer.from(chunk));
        flush(false);
        return proxy;
      },
      get socket() {
        return res.socket;
      },
    };
    return proxy as unknown as ServerResponse;
  }

  private async answer(path: string, res: ServerResponse, ifNoneMatch?: string): Promise<void> {
    this.requests.push(path);
    if (this.hangs.has(path)) return;
    const fail = this.failures.get(path)?.shift();
    if (fail) return void res.writeHead(fail, this.retryAfter !== undefined ? { "retry-after": this.retryAfter } : {}).end(`scripted ${fail}`);
    if (path === "/index/config.json") return void res.end(JSON.stringify({ dl: this.dlTemplate.replace("{base}", this.base) }));
    const index = /^\/index\/(?:[^/]+\/)+([^/]+)$/.exec(path);
    if (index) return this.serveIndex(path, index[1]!, res, ifNoneMatch);
    const dl = /^\/dl\/([^/]+)\/([^/]+)\/download(?:\?.*)?$/.exec(path);
    if (dl) {
      if (this.downloadDelayMs > 0) await new Promise((r) => setTimeout(r, this.downloadDelayMs));
      const v = this.crates.get(dl[1]!.toLowerCase())?.versions.find((x) => x.vers === dl[2]);
      if (!v) return void res.writeHead(404).end();
      if (this.cutOff(path)) return this.sendCutOff(res, v.tarball);
      res.writeHead(200, { "content-length": v.tarball.length });
      if (this.trickleMs <= 0) return void res.end(v.tarball);
      const piece = (i: number) => v.tarball.subarray(Math.floor((v.tarball.length * i) / TRICKLE_PIECES), Math.floor((v.tarball.length * (i + 1)) / TRICKLE_PIECES));
      const send = (i: number): void => {
        if (i === TRICKLE_PIECES - 1) return void res.end(piece(i));
        res.write(piece(i));
        setTimeout(() => send(i + 1), this.trickleMs);
      };
      send(0);
      return;
    }
    res.writeHead(404).end();
  }

  private serveIndex(path: string, name: string, res: ServerResponse, ifNoneMatch?: string): void {
    const c = this.crates.get(name);
    if (!c) return void res.writeHead(404).end();
    const lines = c.versions.map((v) =>
      JSON.stringify({ name: c.name, vers: v.vers, deps: [], cksum: v.cksum ?? sha256(v.tarball), features: {}, yanked: v.yanked ?? false }),
    );
    const body = lines.join("\n") + "\n";
    const etag = `"${sha256(Buffer.from(body)).slice(0, 16)}"`;
    if (ifNoneMatch === etag) {
      this.notModified++;
      return void res.writeHead(304, { etag }).end();
    }
    if (this.cutOff(path)) return this.sendCutOff(res, Buffer.from(body), { etag });
    res.writeHead(200, { etag }).end(body);
  }

  private cutOff(path: string): boolean {
    const cuts = this.cutOffs.get(path) ?? 0;
    if (cuts > 0) this.cutOffs.set(path, cuts - 1);
    return cuts > 0;
  }

  /** Declares the whole length, sends half, and drops the connection. */
  private sendCutOff(res: ServerResponse, body: Buffer, headers: Record<string, string> = {}): void {
    res.writeHead(200, { ...headers, "content-length": body.length });
    res.write(body.subarray(0, body.length >> 1), () => res.socket?.destroy());
  }
}

/**
 * Environments for `tendril crate-fetch` runs against `reg`: each call makes a fresh folder under
 * `root` as the run's HOME, caches and config (so runs share nothing unless a test passes one on),
 * with retries quick; `over` adds or replaces variables.
 */
export function crateRunEnv(root: string, reg: FakeRegistry): (over?: Record<string, string>) => Record<string, string> {
  let n = 0;
  return (over = {}) => {
    const dir = join(root, `run-${n++}`);
    mkdirSync(dir);
    return {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      XDG_CACHE_HOME: join(dir, "cache"),
      XDG_CONFIG_HOME: join(dir, "config"),
      CARGO_HOME: join(dir, "cargo"),
      TENDRIL_CRATES_INDEX: reg.indexUrl,
      TENDRIL_CRATES_RETRY_BACKOFF_S: "0.01",
      ...over,
    };
  };
}
