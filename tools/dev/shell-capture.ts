// Owns one shell call's output: kept whole while under the inline cap, otherwise a rolling tail per
// stream plus the full capture (interleaved, up to a byte cap) in an artifact file; past the digest
// threshold, the digest the model reads (output-digest.ts) of the whole capture, which is then always
// saved to an artifact; and the per-session artifact directory that keeps only the newest files. Does
// not run processes.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { log } from "../../core/log.ts";
import { tailBytes } from "../../core/text-bounds.ts";
import { type Digest, digestOutput } from "./output-digest.ts";

export interface CaptureLimits {
  inlineBytes: number;
  inlineLines: number;
  tailBytes: number;
  captureBytes: number;
  /** SHELL_DIGEST_ABOVE_BYTES: an output larger than this is digested for the model (saved whole);
   *  undefined: never (`shell_output = "raw"`). */
  digestAboveBytes?: number;
}

/** Numbered `shell-N.log` files in one directory (created 0700 on first use); the oldest beyond `keep` go. */
export class ArtifactStore {
  private seq = 0;
  private readonly kept: string[] = [];

  constructor(
    readonly dir: string,
    private readonly keep: number,
  ) {}

  /** Opens a new artifact for writing; throws when the directory cannot be made. */
  open(): { path: string; fd: number } {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const path = join(this.dir, `shell-${++this.seq}.log`);
    const fd = openSync(path, "w", 0o600);
    this.kept.push(path);
    while (this.kept.length > this.keep) rmSync(this.kept.shift()!, { force: true });
    return { path, fd };
  }
}

const MAX_SESSIONS_SCANNED = 1000;

/**
 * Other sessions' artifact directories under `parent` untouched for `maxAgeMs` are removed, so the cache
 * stays bounded without taking files away from a session that may still page them.
 */
export async function pruneStaleSessions(parent: string, maxAgeMs: number, now = Date.now()): Promise<number> {
  // No artifacts yet (most one-shot runs): nothing to list, and no failed listing to pay for.
  if (!existsSync(parent)) return 0;
  let names: string[];
  try {
    names = (await readdir(parent)).slice(0, MAX_SESSIONS_SCANNED);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const dir = join(parent, name);
    const st = await stat(dir).catch(() => undefined);
    if (!st?.isDirectory() || now - st.mtimeMs < maxAgeMs) continue;
    await rm(dir, { recursive: true, force: true }).then(() => removed++, () => {});
  }
  return removed;
}

export interface CaptureResult {
  stdout: string;
  stderr: string;
  /** Output went over the inline cap: stdout/stderr are tails. */
  truncated: boolean;
  totalBytes: number;
  totalLines: number;
  artifact?: string;
  /** The artifact stopped at the capture cap. */
  artifactCut?: boolean;
  artifactError?: string;
  /** What the model reads instead of stdout/stderr: the digest of the whole output (interleaved). */
  digest?: Digest;
}

function countNewlines(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) n++;
  return n;
}

/** A tail that was cut starts at its first whole line (when one starts early enough), on a UTF-8 boundary. */
function decodeTail(b: Buffer, cut: boolean): string {
  let start = 0;
  if (cut) {
    const nl = b.indexOf(10);
    if (nl !== -1 && nl < b.length / 2) start = nl + 1;
  }
  return tailBytes(b, b.length - start);
}

export class OutputCapture {
  private chunks: { stream: 0 | 1; data: Buffer }[] = [];
  private readonly tails: [Buffer, Buffer] = [Buffer.alloc(0), Buffer.alloc(0)];
  private bytes = 0;
  private readonly streamBytes: [number, number] = [0, 0];
  private lines = 0;
  private file?: { path: string; fd: number; written: number };
  private artifactError?: string;
  private artifactCut = false;

  constructor(
    private readonly limits: CaptureLimits,
    private readonly store: ArtifactStore,
  ) {}

  push(stream: 0 | 1, data: Buffer): void {
    this.bytes += data.length;
    this.streamBytes[stream] += data.length;
    this.lines += countNewlines(data);
    const tail = Buffer.concat([this.tails[stream], data]);
    this.tails[stream] = tail.length > this.limits.tailBytes ? tail.subarray(tail.length - this.limits.tailBytes) : tail;
    if (!this.overflowed()) {
      this.chunks.push({ stream, data });
      if (this.bytes > this.limits.inlineBytes || this.lines > this.limits.inlineLines) this.spill();
      return;
    }
    this.write(data);
  }

  private overflowed(): boolean {
    return this.file !== undefined || this.artifactError !== undefined;
  }

  private spill(): void {
    try {
      this.file = { ...this.store.open(), written: 0 };
    } catch (err) {
      this.artifactError = (err as Error).message;
      log.warn("shell artifact not written", { error: this.artifactError });
    }
    const pending = this.chunks;
    this.chunks = [];
    for (const c of pending) this.write(c.data);
  }

  private write(data: Buffer): void {
    const f = this.file;
    if (!f || this.artifactCut) return;
    const room = this.limits.captureBytes - f.written;
    const part = data.length > room ? data.subarray(0, room) : data;
    try {
      for (let off = 0; off < part.length; ) off += writeSync(f.fd, part, off);
      f.written += part.length;
    } catch (err) {
      this.artifactError = (err as Error).message;
      this.artifactCut = true;
      return;
    }
    if (data.length > room) this.artifactCut = true;
  }

  /** The call's output; `digest`: digest it when it is over the threshold (the caller decides for
   *  outputs that must reach the model as printed, a file read). */
  finish(digest = false): CaptureResult {
    const above = this.limits.digestAboveBytes;
    if (digest && above !== undefined && this.bytes > above) return this.digested();
    return this.plain();
  }

  /** The whole output digested, saved whole to an artifact the result names. */
  private digested(): CaptureResult {
    let whole: Buffer;
    if (!this.overflowed()) {
      whole = Buffer.concat(this.chunks.map((c) => c.data));
      this.spill();
    } else {
      whole = Buffer.alloc(0);
      if (this.file) {
        try {
          whole = readFileSync(this.file.path);
        } catch {
          // unreadable now: the tails below are what there is
        }
      }
    }
    const r = this.plain();
    if (whole.length === 0) return r;
    return { ...r, digest: digestOutput(whole.toString("utf8")) };
  }

  private plain(): CaptureResult {
    const base = { totalBytes: this.bytes, totalLines: this.lines };
    if (!this.overflowed()) {
      const pick = (s: 0 | 1) => Buffer.concat(this.chunks.filter((c) => c.stream === s).map((c) => c.data));
      return { ...base, stdout: pick(0).toString("utf8"), stderr: pick(1).toString("utf8"), truncated: false };
    }
    if (this.file) {
      try {
        closeSync(this.file.fd);
      } catch {
        // already closed or the disk went away; the path still names what was written
      }
    }
    return {
      ...base,
      stdout: decodeTail(this.tails[0], this.streamBytes[0] > this.tails[0].length),
      stderr: decodeTail(this.tails[1], this.streamBytes[1] > this.tails[1].length),
      truncated: true,
      ...(this.file ? { artifact: this.file.path, artifactCut: this.artifactCut } : {}),
      ...(this.artifactError ? { artifactError: this.artifactError } : {}),
    };
  }
}
