// Shared by the end-to-end tests: where the built binary is, and a bounded way to run it.
import { spawnSync, type SpawnSyncOptions } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "..");
export const BIN = join(ROOT, "dist", "tendril");

if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` (npm test does it first)`);

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the binary (or a link to it) with a hard time bound. */
export function runBin(args: string[], opts: SpawnSyncOptions & { bin?: string } = {}): RunResult {
  const r = spawnSync(opts.bin ?? BIN, args, { encoding: "utf8", timeout: 20_000, ...opts });
  return { code: r.status, stdout: String(r.stdout ?? ""), stderr: String(r.stderr ?? "") };
}
