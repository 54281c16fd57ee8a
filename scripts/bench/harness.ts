// Owns the side-by-side benchmark harness: run commands (or async functions) alternately in one run,
// report medians and ratios against the first case. Benchmarks print figures; they never assert.
// The measuring functions of each area are shared by `npm run bench` and `npm run bench:guard`.
import { spawnSync, type SpawnSyncOptions } from "node:child_process";

export interface CommandCase {
  name: string;
  cmd: string;
  args?: string[];
  options?: SpawnSyncOptions;
  /** Untimed set-up before every run (e.g. emptying a cache for cold-start figures). */
  before?: () => void;
}

export interface FnCase {
  name: string;
  fn: () => Promise<void> | void;
}

export interface Row {
  name: string;
  medianMs: number;
  minMs: number;
}

/** The build every benchmark measures unless told another (`bench:guard --before` passes one). */
export const BUILT = new URL("../../dist/tendril", import.meta.url).pathname;

/** How a table names a build: `dist/tendril` for this one, its path for another. */
export function buildLabel(bin: string): string {
  return bin === BUILT ? "dist/tendril" : bin;
}

/** `quiet`: the tables are not printed (the guard prints one line per goal instead). */
export const benchOutput = { quiet: false };

/** A line beside a table (skipped when quiet, as the tables are). */
export function note(text: string): void {
  if (!benchOutput.quiet) console.log(text);
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Prints a table: each row's median, min and ratio to the first row. */
export function report(title: string, rows: Row[], unit = "ms"): void {
  if (benchOutput.quiet) return;
  const base = rows[0]?.medianMs ?? 1;
  console.log(`\n## ${title}`);
  for (const r of rows) {
    const ratio = base > 0 ? (r.medianMs / base).toFixed(2) : "n/a";
    console.log(
      `  ${r.name.padEnd(44)} median ${r.medianMs.toFixed(2).padStart(9)} ${unit}  min ${r.minMs.toFixed(2).padStart(9)} ${unit}  ×${ratio}`,
    );
  }
}

/** Runs each command `runs` times, interleaved so machine noise hits every case alike. */
export function compareCommands(title: string, cases: CommandCase[], runs = 15): Row[] {
  const times: number[][] = cases.map(() => []);
  for (let i = 0; i < runs + 1; i++) {
    cases.forEach((c, j) => {
      c.before?.();
      const t0 = performance.now();
      const r = spawnSync(c.cmd, c.args ?? [], { stdio: "ignore", ...c.options });
      const dt = performance.now() - t0;
      if (r.error) throw new Error(`${c.name}: ${r.error.message}`);
      if (i > 0) times[j]!.push(dt); // first round warms caches
    });
  }
  const rows = cases.map((c, j) => ({ name: c.name, medianMs: median(times[j]!), minMs: Math.min(...times[j]!) }));
  report(title, rows);
  return rows;
}

/** Same as compareCommands for in-process async functions. */
export async function compareFns(title: string, cases: FnCase[], runs = 15): Promise<Row[]> {
  const times: number[][] = cases.map(() => []);
  for (let i = 0; i < runs + 1; i++) {
    for (const [j, c] of cases.entries()) {
      const t0 = performance.now();
      await c.fn();
      const dt = performance.now() - t0;
      if (i > 0) times[j]!.push(dt);
    }
  }
  const rows = cases.map((c, j) => ({ name: c.name, medianMs: median(times[j]!), minMs: Math.min(...times[j]!) }));
  report(title, rows);
  return rows;
}

export function which(cmd: string): string | undefined {
  const r = spawnSync("sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : undefined;
}
