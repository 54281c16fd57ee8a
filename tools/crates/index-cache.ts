// Owns the on-disk copies of sparse-index files: the body plus the validators (ETag, Last-Modified) that
// revalidation sends back, as cargo keeps them; written atomically. Read when the registry answers 304
// or cannot be reached. Knows nothing about HTTP or what the lines mean.
import { randomHex } from "../../core/ids.ts";
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export interface CachedIndex {
  body: string;
  etag?: string;
  lastModified?: string;
  savedMs: number;
}

export class IndexCache {
  constructor(private readonly dir: string) {}

  /** The saved copy of the index file at `path` (e.g. `se/rd/serde`), if a readable one exists. */
  async read(path: string): Promise<CachedIndex | undefined> {
    const file = join(this.dir, path);
    // Synchronous on purpose: microsecond calls, cheaper than thread-pool round trips.
    let text: string;
    let savedMs: number;
    try {
      text = readFileSync(file, "utf8");
      savedMs = statSync(file).mtimeMs;
    } catch {
      return undefined;
    }
    const nl = text.indexOf("\n");
    try {
      const meta = JSON.parse(text.slice(0, nl)) as { etag?: unknown; last_modified?: unknown };
      return {
        body: text.slice(nl + 1),
        ...(typeof meta.etag === "string" ? { etag: meta.etag } : {}),
        ...(typeof meta.last_modified === "string" ? { lastModified: meta.last_modified } : {}),
        savedMs,
      };
    } catch {
      return undefined; // a copy this version cannot read is as good as none
    }
  }

  /** Saves a copy (first line: the validators as JSON, then the body); a failure only costs the copy. */
  async write(path: string, entry: { body: string; etag?: string; lastModified?: string }): Promise<void> {
    const file = join(this.dir, path);
    const tmp = `${file}.${process.pid}.${randomHex(4)}.tmp`;
    const meta = JSON.stringify({ etag: entry.etag, last_modified: entry.lastModified });
    const text = `${meta}\n${entry.body}`;
    try {
      try {
        writeFileSync(tmp, text);
      } catch (err) {
        // The folder is made when a write finds it missing, not asked for before every write.
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(tmp, text);
      }
      renameSync(tmp, file);
    } catch {
      rmSync(tmp, { force: true });
    }
  }

  async remove(path: string): Promise<void> {
    rmSync(join(this.dir, path), { force: true });
  }
}
