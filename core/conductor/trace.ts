// Owns the trace file format: one JSON line per message of every hop, `{"t", "hop", "dir", "message"}`
// (t = ms since the chain started, hop = component index or "client", dir = "in" to the conductor or
// "out" from it), written through one buffered stream, and read back leniently. Printing is trace-print.ts.
import { createWriteStream, readFileSync } from "node:fs";
import type { Hop } from "./router.ts";

export interface TraceRecord {
  t: number;
  hop: Hop;
  dir: "in" | "out";
  message: any;
}

export interface TraceWriter {
  record(hop: Hop, dir: "in" | "out", message: unknown): void;
  close(): Promise<void>;
}

/** Opens FILE for writing (truncating it); throws when it cannot be created. */
export function openTrace(path: string, now: () => number = () => performance.now()): Promise<TraceWriter> {
  const start = now();
  const out = createWriteStream(path, { flags: "w" });
  return new Promise((resolve, reject) => {
    out.once("error", reject);
    out.once("open", () => {
      out.on("error", () => {}); // a full disk must not take the chain down; the trace just stops
      resolve({
        record(hop, dir, message) {
          const t = Math.round((now() - start) * 1000) / 1000;
          out.write(JSON.stringify({ t, hop, dir, message }) + "\n");
        },
        close: () => new Promise<void>((done) => out.end(done)),
      });
    });
  });
}

/** Reads a trace file; lines that are not records are skipped and counted. */
export function readTrace(path: string): { records: TraceRecord[]; skipped: number } {
  const records: TraceRecord[] = [];
  let skipped = 0;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    try {
      const r = JSON.parse(line) as TraceRecord;
      if (typeof r.t === "number" && (r.dir === "in" || r.dir === "out") && (r.hop === "client" || typeof r.hop === "number")) {
        records.push(r);
        continue;
      }
    } catch {
      // counted below
    }
    skipped++;
  }
  return { records, skipped };
}
