// Owns the trace file format: a first line `{"components": [names]}` (hop N is components[N]), then one
// JSON line per message of every hop, `{"t", "hop", "dir", "message"}` (t = ms since the chain started,
// hop = component index or "client", dir = "in" to the conductor or "out" from it), written through one
// buffered stream to a private (0600) file, and read back leniently. Printing is trace-print.ts.
import { createReadStream, createWriteStream } from "node:fs";
import { createInterface } from "node:readline";
import { openPrivateFile } from "../private-file.ts";
import type { Hop } from "./router.ts";

export interface TraceRecord {
  t: number;
  hop: Hop;
  dir: "in" | "out";
  /** What the conductor read or wrote: a JSON-RPC message or a batch of them, but a file is read leniently, so any JSON value. */
  message: unknown;
}

export interface TraceWriter {
  record(hop: Hop, dir: "in" | "out", message: unknown): void;
  close(): Promise<void>;
}

/** What a trace says besides its records: the components' short names, by hop. */
export interface TraceMeta {
  components?: string[];
}

/**
 * Opens FILE for writing (truncating it) and writes the component names; throws when it cannot be
 * created. The file holds tokens (MCP `env`, `headers`) and whole conversations: it is private (0600).
 */
export async function openTrace(path: string, components: string[], now: () => number = () => performance.now()): Promise<TraceWriter> {
  const start = now();
  const out = createWriteStream(path, { fd: openPrivateFile(path, "w") });
  out.on("error", () => {}); // a full disk must not take the chain down; the trace just stops
  out.write(JSON.stringify({ components }) + "\n");
  return {
    record(hop, dir, message) {
      const t = Math.round((now() - start) * 1000) / 1000;
      out.write(JSON.stringify({ t, hop, dir, message }) + "\n");
    },
    close: () => new Promise<void>((done) => out.end(done)),
  };
}

/**
 * The records of a trace file, streamed; lines that are not records are skipped and counted in
 * `skipped`; the components line, when there is one, fills `meta`.
 */
export async function* traceRecords(path: string, skipped: { count: number }, meta: TraceMeta = {}): AsyncGenerator<TraceRecord> {
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    const r = parseRecord(line);
    if (r) yield r;
    else if (!readMeta(line, meta)) skipped.count++;
  }
}

function readMeta(line: string, meta: TraceMeta): boolean {
  try {
    const m = JSON.parse(line) as { components?: unknown };
    if (!Array.isArray(m.components) || !m.components.every((c) => typeof c === "string")) return false;
    meta.components = m.components;
    return true;
  } catch {
    return false;
  }
}

function parseRecord(line: string): TraceRecord | undefined {
  try {
    const r = JSON.parse(line) as TraceRecord;
    const ok = typeof r.t === "number" && (r.dir === "in" || r.dir === "out") && (r.hop === "client" || typeof r.hop === "number");
    return ok ? r : undefined;
  } catch {
    return undefined;
  }
}
