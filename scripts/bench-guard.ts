// Owns `npm run bench:guard`: the quick rows of the benchmark, measured by the same functions as
// `npm run bench` with fewer runs, each against its goal in scripts/bench-goals.json; one line per row
// with the figure, the goal and OVER where it misses. Exits 0 over or under: a benchmark is not a test
// (1 only when a row could not be measured at all, 2 for a bad goals file or argument).
import { existsSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { measureInitialize, measureRoundTrips, type RoundTripFigures } from "./bench/agent.ts";
import { measureIdleAgent } from "./bench/footprint.ts";
import { benchOutput, median } from "./bench/harness.ts";
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

/** One line: what, the figure, the goal, and OVER when the figure is above it. */
export function guardLine(goal: Goal, value: number): string {
  const fmt = (n: number) => (goal.unit === "x" ? `${n.toFixed(2)}×` : goal.unit === "ms" ? `${n >= 0 ? "+" : ""}${n.toFixed(1)} ms` : `${n.toFixed(1)} MiB`);
  const over = value > goal.goal ? "  OVER" : "";
  return `${goal.what.padEnd(100)} ${fmt(value).padStart(10)}   goal ≤ ${fmt(goal.goal)}${over}`;
}

/** The guard's rows, in the order they are measured and printed. */
export const GUARD_ROWS = ["startup", "initialize", "tool-round-trip", "tool-round-trip-cpu", "prompt", "idle-rss", "idle-rss-mib", "tree", "rg", "session-load"] as const;

const load = () => loadavg().map((l) => l.toFixed(2)).join(" ");

/** Runs the rows; resolves with the exit code: 0 whatever the figures, 1 when a row could not be measured. */
async function main(args: string[]): Promise<number> {
  for (const a of args) if (a !== "--tables") throw new Error(`bench:guard: unknown argument ${a} (only --tables, to print every table too)`);
  benchOutput.quiet = !args.includes("--tables");
  const goals = readGoals(readFileSync(GOALS_FILE, "utf8"), GUARD_ROWS);
  if (!existsSync("dist/tendril")) throw new Error("bench:guard: dist/tendril is missing (run `npm run build` first)");
  const t0 = performance.now();
  console.log(`bench:guard (load average at start: ${load()})`);
  let broken = false;
  /** One row: its line, or what stopped its measurement (the other rows still run). */
  const row = async (key: (typeof GUARD_ROWS)[number], figure: () => number | Promise<number>) => {
    try {
      console.log(guardLine(goals[key]!, await figure()));
    } catch (err) {
      broken = true;
      console.log(`${goals[key]!.what.padEnd(100)} not measured: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  await row("startup", () => {
    const s = measureStartup(10);
    return s.tendril.medianMs / s.node.medianMs;
  });
  let peerRss: number | undefined;
  await row("initialize", async () => {
    const init = await measureInitialize(8);
    peerRss = init.peerRss?.medianMs;
    return init.tendril.medianMs - init.version.medianMs;
  });
  // One measurement, two rows: the wall-clock ratio the goal was set on, and the agent's CPU per trip,
  // which a loaded machine moves far less (wall read 2.1-6.3x across runs of one build).
  let trips: Promise<RoundTripFigures> | undefined;
  const roundTrips = () => (trips ??= measureRoundTrips(5, 50));
  await row("tool-round-trip", async () => (await roundTrips()).wallRatio);
  await row("tool-round-trip-cpu", async () => (await roundTrips()).cpuRatio);
  await row("prompt", async () => {
    const p = await measurePrompt(8, true);
    return p.inProcess.medianMs / p.version.medianMs;
  });
  await row(peerRss ? "idle-rss" : "idle-rss-mib", async () => {
    const idle: number[] = [];
    for (let i = 0; i < 3; i++) idle.push((await measureIdleAgent()).rssMiB);
    return peerRss ? median(idle) / peerRss : median(idle);
  });
  await row("tree", () => {
    const tree = measureTree(5, true);
    return tree.tendril.medianMs / tree.findWc.medianMs;
  });
  await row("rg", () => {
    const rg = measureRgLiteral(5);
    return rg.tendril.medianMs / rg.ripgrep.medianMs;
  });
  await row("session-load", async () => {
    const sl = await measureSessionLoad(5, true);
    return sl.load.medianMs / sl.nodeParse.medianMs;
  });
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
