// Owns `npm run bench:guard`: the quick rows of the benchmark, measured by the same functions as
// `npm run bench` with fewer runs, each against its goal in scripts/bench-goals.json; one line per row
// with the figure, the goal and OVER where it misses. Exits 0 over or under: a benchmark is not a test
// (1 only when a row could not be measured at all, 2 for a bad goals file or argument).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { measureInitialize, measureRoundTrips, type RoundTripFigures } from "./bench/agent.ts";
import { measureIdleAgent } from "./bench/footprint.ts";
import { benchOutput, BUILT, median } from "./bench/harness.ts";
import { measureSessionLoad } from "./bench/lifecycle.ts";
import { measurePrompt } from "./bench/prompt.ts";
import { measureRgLiteral, measureTree } from "./bench/shims.ts";
import { measureStartup } from "./bench/startup.ts";

const GOALS_FILE = new URL("./bench-goals.json", import.meta.url);
const UNITS = ["x", "ms", "MiB"] as const;
type Unit = (typeof UNITS)[number];
interface Goal {
  what: string;
  goal: number;
  unit: Unit;
}

/** The goals file, refused whole if a row has no goal, an entry names no row, or a goal is malformed. */
export function readGoals(text: string, rows: readonly string[]): Record<string, Goal> {
  const raw = JSON.parse(text) as Record<string, Partial<Goal>>;
  for (const key of Object.keys(raw)) if (!rows.includes(key)) throw new Error(`bench-goals.json: "${key}" is no row of the guard (rows: ${rows.join(", ")})`);
  for (const key of rows) {
    const g = raw[key];
    if (!g) throw new Error(`bench-goals.json: no goal for the row "${key}"`);
    if (typeof g.goal !== "number" || !(g.goal > 0)) throw new Error(`bench-goals.json: "${key}".goal must be a positive number, got ${JSON.stringify(g.goal)}`);
    if (!UNITS.includes(g.unit as Unit)) throw new Error(`bench-goals.json: "${key}".unit must be one of ${UNITS.join(", ")}, got ${JSON.stringify(g.unit)}`);
    if (typeof g.what !== "string") throw new Error(`bench-goals.json: "${key}".what must say what is measured`);
  }
  return raw as Record<string, Goal>;
}

/** How a figure is written in its unit. */
function formatFigure(unit: Unit, n: number): string {
  return unit === "x" ? `${n.toFixed(2)}×` : unit === "ms" ? `${n >= 0 ? "+" : ""}${n.toFixed(1)} ms` : `${n.toFixed(1)} MiB`;
}

/** One line: what, the figure, the goal, and OVER when the figure is above it. */
export function guardLine(goal: Goal, value: number): string {
  const over = value > goal.goal ? "  OVER" : "";
  return `${goal.what.padEnd(100)} ${formatFigure(goal.unit, value).padStart(10)}   goal ≤ ${formatFigure(goal.unit, goal.goal)}${over}`;
}

/** A change `--before` calls SLOWER: 10 % of the figure, and for a row in ms at least 1 ms. */
const SLOWER_SHARE = 0.1;
const SLOWER_MIN_MS = 1;

/**
 * The line of a row measured for two builds in one run: the guard's line for this build, then the
 * other build's figure, the change, and SLOWER when this build is slower by more than the noise
 * allowance (a row a busy day pushes OVER for both builds alike is the machine, not the change).
 */
export function comparedLine(goal: Goal, before: number, after: number): string {
  const change = goal.unit === "ms" ? formatFigure("ms", after - before) : `×${(after / before).toFixed(2)}`;
  const allowed = goal.unit === "ms" ? Math.max(SLOWER_MIN_MS, SLOWER_SHARE * Math.abs(before)) : SLOWER_SHARE * before;
  const slower = after - before > allowed ? "  SLOWER" : "";
  return `${guardLine(goal, after)}   before ${formatFigure(goal.unit, before)} (${change})${slower}`;
}

/** The guard's rows, in the order they are measured and printed. */
export const GUARD_ROWS = ["startup", "initialize", "tool-round-trip", "tool-round-trip-cpu", "prompt", "idle-rss", "idle-rss-mib", "tree", "rg", "session-load"] as const;
type RowKey = (typeof GUARD_ROWS)[number];

const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");

/** The arguments: `--tables` (print every table too), `--before PATH` (another build, measured beside this one). */
export function guardArgs(args: string[]): { tables: boolean; before?: string } {
  const out: { tables: boolean; before?: string } = { tables: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--tables") out.tables = true;
    else if (a === "--before") {
      const path = args[++i];
      if (path === undefined || path.startsWith("--")) throw new Error("bench:guard: --before needs the path of another tendril binary (e.g. one built from the commit before a change)");
      out.before = resolve(path);
    } else throw new Error(`bench:guard: unknown argument ${a} (--tables prints every table too; --before PATH measures another build beside this one)`);
  }
  return out;
}

/** Refuses a `--before` that is not a tendril binary that runs, naming what is wrong. */
function checkBefore(path: string): void {
  if (!existsSync(path)) throw new Error(`bench:guard: --before ${path}: no such file`);
  const r = spawnSync(path, ["--version"], { encoding: "utf8", timeout: 10_000 });
  if (r.status !== 0 || !/^\d+\.\d+\.\d+/.test(r.stdout)) throw new Error(`bench:guard: --before ${path}: \`--version\` did not answer as tendril does (${r.error?.message ?? `exit ${r.status}: ${(r.stdout + r.stderr).trim().split("\n")[0]!.slice(0, 120)}`})`);
}

/** A row's figure for one build (`bin`); `round` tells apart the measurements `--before` makes of one build. */
type Figure = (bin: string, round: number) => number | Promise<number>;

/** The rows and their figures; `state.peerRss` is the published peer's RSS once initialize has run (the idle
 *  row's key depends on it). */
function guardFigures(state: { peerRss?: number }): [RowKey | (() => RowKey), Figure][] {
  // One measurement, two rows: the wall-clock ratio the goal was set on, and the agent's CPU per trip,
  // which a loaded machine moves far less (wall read 2.1-6.3x across runs of one build).
  const trips = new Map<string, Promise<RoundTripFigures>>();
  const roundTrips = (bin: string, round: number) => {
    const key = `${round} ${bin}`;
    const got = trips.get(key) ?? measureRoundTrips(5, 50, bin);
    trips.set(key, got);
    return got;
  };
  return [
    ["startup", (bin) => {
      const s = measureStartup(10, bin);
      return s.tendril.medianMs / s.node.medianMs;
    }],
    ["initialize", async (bin) => {
      const init = await measureInitialize(8, bin);
      state.peerRss = init.peerRss?.medianMs;
      return init.tendril.medianMs - init.version.medianMs;
    }],
    ["tool-round-trip", async (bin, round) => (await roundTrips(bin, round)).wallRatio],
    ["tool-round-trip-cpu", async (bin, round) => (await roundTrips(bin, round)).cpuRatio],
    ["prompt", async (bin) => {
      const p = await measurePrompt(8, true, bin);
      return p.inProcess.medianMs / p.version.medianMs;
    }],
    [() => (state.peerRss ? "idle-rss" : "idle-rss-mib"), async (bin) => {
      const idle: number[] = [];
      for (let i = 0; i < 3; i++) idle.push((await measureIdleAgent(bin)).rssMiB);
      return state.peerRss ? median(idle) / state.peerRss : median(idle);
    }],
    ["tree", (bin) => {
      const tree = measureTree(5, true, bin);
      return tree.tendril.medianMs / tree.findWc.medianMs;
    }],
    ["rg", (bin) => {
      const rg = measureRgLiteral(5, bin);
      return rg.tendril.medianMs / rg.ripgrep.medianMs;
    }],
    ["session-load", async (bin) => {
      const sl = await measureSessionLoad(5, true, bin);
      return sl.load.medianMs / sl.nodeParse.medianMs;
    }],
  ];
}

/** Runs the rows; resolves with the exit code: 0 whatever the figures, 1 when a row could not be measured. */
async function main(argv: string[]): Promise<number> {
  const args = guardArgs(argv);
  benchOutput.quiet = !args.tables;
  const goals = readGoals(readFileSync(GOALS_FILE, "utf8"), GUARD_ROWS);
  if (!existsSync(BUILT)) throw new Error("bench:guard: dist/tendril is missing (run `npm run build` first)");
  if (args.before) checkBefore(args.before);
  const t0 = performance.now();
  console.log(`bench:guard (load average at start: ${load()})${args.before ? `; each row measured for ${args.before} and this build in turn (before, after, after, before)` : ""}`);
  let broken = false;
  const state: { peerRss?: number } = {};
  for (const [name, figure] of guardFigures(state)) {
    const goal = () => goals[typeof name === "string" ? name : name()]!;
    try {
      if (!args.before) {
        const value = await figure(BUILT, 0);
        console.log(guardLine(goal(), value));
        continue;
      }
      // Before, after, after, before: a machine that drifts during the row moves both builds alike.
      const before: number[] = [];
      const after: number[] = [];
      for (const [round, bin, into] of [[0, args.before, before], [0, BUILT, after], [1, BUILT, after], [1, args.before, before]] as const) into.push(await figure(bin, round));
      console.log(comparedLine(goal(), median(before), median(after)));
    } catch (err) {
      broken = true;
      console.log(`${goal().what.padEnd(100)} not measured: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  console.log(`(${((performance.now() - t0) / 1000).toFixed(1)} s; load average at end: ${load()})`);
  return broken ? 1 : 0;
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    return 2;
  });
  process.exit(code);
}
