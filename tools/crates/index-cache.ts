// Owns the on-disk copies of sparse-index files: the body plus the validators (ETag, Last-Modified) that
// revalidation sends back, as cargo keeps them; written atomically. Read when the registry answers 304
// or cannot be reached. Knows nothing about HTTP or what the lines mean.
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
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
    const [text, st] = await Promise.all([readFile(file, "utf8").catch(() => undefined), stat(file).catch(() => undefined)]);
    if (text === undefined || st === undefined) return undefined;
    const nl = text.indexOf("\n");
    try {
      const meta = JSON.parse(text.slice(0, nl)) as { etag?: unknown; last_modified?: unknown };
      return {
        body: text.slice(nl + 1),
        ...(typeof meta.etag === "string" ? { etag: meta.etag } : {}),
        ...(typeof meta.last_modified === "string" ? { lastModified: meta.last_modified } : {}),
        savedMs: st.mtimeMs,
      };
    } catch {
      return undefined; // a copy this version cannot read is as good as none
    }
  }

  /** Saves a copy (first line: the validators as JSON, then the body); a failure only costs the copy. */
  async write(path: string, entry: { body: string; etag?: string; lastModified?: string }): Promise<void> {
    const file = join(this.dir, path);
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    const meta = JSON.stringify({ etag: entry.etag, last_modified: entry.lastModified });
    try {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(tmp, `${meta}\n${entry.body}`);
      await rename(tmp, file);
    } catch {
      await rm(tmp, { force: true });
    }
  }

  async remove(path: string): Promise<void> {
    await rm(join(this.dir, path), { force: true });
  }
}
