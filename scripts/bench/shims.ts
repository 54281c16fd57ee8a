// Benchmark: the built-in `rg` and `tree` shims against ripgrep and `tree` + `wc -l` on a generated tree of
// 20,000 files / ~200 MB (built once, cached under /tmp/tendril-bench-tree; never part of the repository),
// and rg and tree on a small tree (200 files) where start-up and the walk are the whole cost, beside the
// start-up alone (`tendril --version`). The first search, and tree, also run on one thread beside the default.
// TENDRIL_BENCH_BEFORE=path adds another build's rows (before/after in one run); TENDRIL_BENCH_RG=text
// keeps only the rg rows whose label contains it.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUILT, buildLabel, compareCommands, type CommandCase, type Row, which } from "./harness.ts";

const ROOT = "/tmp/tendril-bench-tree";
const SMALL_ROOT = "/tmp/tendril-bench-small";
const SMALL_FILES = 200;
const FILES = 20_000;
const FILE_BYTES = 10_000;
/** Another build to run beside dist/tendril (e.g. the binary before a change), for before/after in one run. */
const BEFORE = process.env.TENDRIL_BENCH_BEFORE;
/** Only the rg rows whose label contains this text (all when unset). */
const ONLY_RG = process.env.TENDRIL_BENCH_RG;

const WORDS = ("the of and to in is it that for on with as was at by be this have from or one had not but what all " +
  "were when we there can an your which their said if do will each about how up out them then she many some so " +
  "these would other into has more her two like him see time could no make than first been its who now people " +
  "config parser value result buffer stream handle error index session render module export import struct")
  .split(" ");

/** Deterministic pseudo-random numbers so every machine benches the same tree. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function makeLinePool(rand: () => number): string[] {
  const pool: string[] = [];
  for (let i = 0; i < 4096; i++) {
    const n = 3 + Math.floor(rand() * 12);
    const words: string[] = [];
    for (let j = 0; j < n; j++) words.push(WORDS[Math.floor(rand() * WORDS.length)]!);
    pool.push("    ".repeat(Math.floor(rand() * 3)) + words.join(" "));
  }
  return pool;
}

function makeFile(rand: () => number, pool: string[], index: number): string {
  const lines: string[] = [];
  let size = 0;
  while (size < FILE_BYTES) {
    const line = pool[Math.floor(rand() * pool.length)]!;
    lines.push(line);
    size += line.length + 1;
  }
  // One file in 50 holds the literal; one in 20 holds something the regex finds.
  if (index % 50 === 7) lines.splice(Math.floor(rand() * lines.length), 0, "let needle_value = compute();");
  if (index % 20 === 3) lines.splice(Math.floor(rand() * lines.length), 0, `fn handler_${index}(x: u32) -> Result<u32>`);
  return lines.join("\n") + "\n";
}

/** Writes `files` generated files under `root` once (a stamp file marks a complete tree). */
export function ensureTree(root = ROOT, files = FILES): void {
  const stamp = join(root, ".complete");
  if (existsSync(stamp)) return;
  console.log(`\n(generating ${files} files under ${root}, once)`);
  const rand = rng(42);
  const pool = makeLinePool(rand);
  const exts = [".rs", ".ts", ".py", ".md", ".txt"];
  for (let i = 0; i < files; i++) {
    const dir = join(root, `d${Math.floor(i / 1000)}`, `s${Math.floor(i / 100) % 10}`);
    if (i % 100 === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${i}${exts[i % exts.length]}`), makeFile(rand, pool, i));
  }
  writeFileSync(join(root, ".gitignore"), "*.log\n");
  mkdirSync(join(root, ".git"), { recursive: true });
  writeFileSync(stamp, "");
}

/** `bin` (the built binary by default), else `bun main.ts`, with the shims' output caps lifted and the
 *  built-in rg forced. */
function tendrilCommand(bin = BUILT) {
  const binary = existsSync(bin) ? bin : undefined;
  const cmd = binary ? { cmd: binary, pre: [] as string[] } : { cmd: process.execPath, pre: [join(process.cwd(), "main.ts")] };
  const env = { ...process.env, TENDRIL_RG_BUILTIN: "1", TENDRIL_SHIM_OUTPUT_LINES: "100000000", TENDRIL_SHIM_OUTPUT_BYTES: "1GiB" };
  return { ...cmd, label: binary ? buildLabel(bin) : "bun main.ts", env };
}

/** `tendril tree` (line counts) over the 20,000-file tree against `find | xargs wc -l` (and, unless
 *  `quick`, `tree` + the same), interleaved `runs` times. */
export function measureTree(runs = 7, quick = false, bin = BUILT): { findWc: Row; tendril: Row } {
  ensureTree();
  const t = tendrilCommand(bin);
  const findWc = "find . -type f -print0 | xargs -0 wc -l >/dev/null";
  const cases: CommandCase[] = [{ name: "find | xargs wc -l", cmd: "sh", args: ["-c", findWc], options: { cwd: ROOT } }];
  if (!quick && which("tree")) cases.push({ name: "tree + find | xargs wc -l", cmd: "sh", args: ["-c", `tree >/dev/null; ${findWc}`], options: { cwd: ROOT } });
  const at = cases.length;
  cases.push({ name: `tendril tree (${t.label})`, cmd: t.cmd, args: [...t.pre, "tree"], options: { cwd: ROOT, env: t.env } });
  if (BEFORE) cases.push({ name: "tendril tree (TENDRIL_BENCH_BEFORE)", cmd: BEFORE, args: ["tree"], options: { cwd: ROOT, env: t.env } });
  // What the worker threads add: the same counts on one thread.
  const oneThread = { ...t.env, TENDRIL_TREE_PARALLEL_MIN_FILES: String(10 * FILES) };
  if (!quick) cases.push({ name: "tendril tree, one thread", cmd: t.cmd, args: [...t.pre, "tree"], options: { cwd: ROOT, env: oneThread } });
  const rows = compareCommands(`tree shim over ${FILES} files (ratio against find | xargs wc -l)`, cases, runs);
  return { findWc: rows[0]!, tendril: rows[at]! };
}

/** The built-in `rg -n needle_value` over the 20,000-file tree against ripgrep, interleaved `runs`
 *  times (the guard's row; ripgrep must be on PATH). */
export function measureRgLiteral(runs = 7, bin = BUILT): { ripgrep: Row; tendril: Row } {
  ensureTree();
  const rg = which("rg");
  if (!rg) throw new Error("ripgrep (rg) is not on PATH: install it (apt-get install ripgrep) to compare the built-in rg");
  const t = tendrilCommand(bin);
  const args = ["-n", "needle_value"];
  const rows = compareCommands(`rg shim: literal \`needle_value\` over ${FILES} files (ratio against ripgrep)`, [
    { name: "ripgrep", cmd: rg, args, options: { cwd: ROOT } },
    { name: `built-in rg (${t.label})`, cmd: t.cmd, args: [...t.pre, "rg", ...args], options: { cwd: ROOT, env: t.env } },
  ], runs);
  return { ripgrep: rows[0]!, tendril: rows[1]! };
}

export async function run(): Promise<void> {
  ensureTree();
  ensureTree(SMALL_ROOT, SMALL_FILES);
  const tendril = tendrilCommand();
  const builtin = { cwd: ROOT, env: tendril.env };
  const rg = which("rg");
  const SINGLE_THREAD_ROW = "literal `needle_value`";
  for (const [label, args, ...rest] of [
    ["literal `needle_value`", ["-n", "needle_value"]],
    ["regex `fn \\w+_\\d+\\(` (required literal `fn ` skips files)", ["-n", "fn \\w+_\\d+\\("]],
    ["regex `\\w+_\\d+\\(` (no literal: every file decoded and scanned)", ["-n", "\\w+_\\d+\\("]],
    ["case-insensitive `-i NEEDLE_VALUE`", ["-n", "-i", "NEEDLE_VALUE"]],
    ["dense: `-c the` (most lines match)", ["-c", "the"]],
    ["context: `-C 2 needle_value`", ["-C", "2", "needle_value"]],
    ["words, any case: `-w -i needle_value`", ["-w", "-i", "needle_value"]],
    ["`--files` (the walk alone)", ["--files"]],
    ["small tree: `-n needle_value`", ["-n", "needle_value"], SMALL_ROOT],
  ] as const) {
    if (ONLY_RG !== undefined && !label.includes(ONLY_RG)) continue;
    const cwd = (rest[0] as string | undefined) ?? ROOT;
    const cases = [];
    if (rg) cases.push({ name: "ripgrep", cmd: rg, args: [...args], options: { cwd } });
    cases.push({ name: `built-in rg (${tendril.label})`, cmd: tendril.cmd, args: [...tendril.pre, "rg", ...args], options: { ...builtin, cwd } });
    if (BEFORE) cases.push({ name: "built-in rg (TENDRIL_BENCH_BEFORE)", cmd: BEFORE, args: ["rg", ...args], options: { ...builtin, cwd } });
    // The first search also runs on one thread, to show what the worker threads add.
    if (label === SINGLE_THREAD_ROW) cases.push({ name: "built-in rg -j1 (one thread)", cmd: tendril.cmd, args: [...tendril.pre, "rg", "-j1", ...args], options: { ...builtin, cwd } });
    // On the small tree the binary's start-up is most of the cost: the floor the built-in is measured against.
    if (cwd === SMALL_ROOT) cases.push({ name: "start-up alone (tendril --version)", cmd: tendril.cmd, args: [...tendril.pre, "--version"], options: { cwd } });
    const files = cwd === ROOT ? FILES : SMALL_FILES;
    compareCommands(`rg shim: ${label} over ${files} files (ratio against ripgrep)`, cases, 7);
  }
  measureTree(7);
  const smallTree = [];
  if (which("tree")) smallTree.push({ name: "tree", cmd: "tree", args: [], options: { cwd: SMALL_ROOT } });
  smallTree.push({ name: "tendril tree", cmd: tendril.cmd, args: [...tendril.pre, "tree"], options: { ...builtin, cwd: SMALL_ROOT } });
  if (BEFORE) smallTree.push({ name: "tendril tree (TENDRIL_BENCH_BEFORE)", cmd: BEFORE, args: ["tree"], options: { ...builtin, cwd: SMALL_ROOT } });
  smallTree.push({ name: "start-up alone (tendril --version)", cmd: tendril.cmd, args: [...tendril.pre, "--version"], options: { cwd: SMALL_ROOT } });
  compareCommands(`tree shim over ${SMALL_FILES} files (ratio against tree)`, smallTree, 7);
}
