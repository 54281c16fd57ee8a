// Shared by the end-to-end tests: where the built binary is, and a bounded way to run it.
import { type ChildProcess, spawn, spawnSync, type SpawnSyncOptions } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "..");
export const BIN = join(ROOT, "dist", "tendril");

if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` (npm test does it first)`);

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** How long it ran (runBinAsync). */
  ms?: number;
}

/** Runs the binary (or a link to it) with a hard time bound. */
export function runBin(args: string[], opts: SpawnSyncOptions & { bin?: string } = {}): RunResult {
  const r = spawnSync(opts.bin ?? BIN, args, { encoding: "utf8", timeout: 20_000, ...opts });
  return { code: r.status, stdout: String(r.stdout ?? ""), stderr: String(r.stderr ?? "") };
}

export interface RunAsyncOptions {
  env?: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
  /** Written to its stdin, which is then closed; absent: no stdin at all. */
  input?: string;
  /** Sees the child once it is started (to signal it). */
  onSpawn?: (child: ChildProcess) => void;
}

/** Like runBin, without blocking the event loop (needed when the test process serves a fake). */
export function runBinAsync(args: string[], opts: RunAsyncOptions = {}): Promise<RunResult> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(BIN, args, { env: opts.env, cwd: opts.cwd, stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    if (opts.input !== undefined) {
      child.stdin!.on("error", () => {});
      child.stdin!.end(opts.input);
    }
    opts.onSpawn?.(child);
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 20_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - t0 });
    });
  });
}
