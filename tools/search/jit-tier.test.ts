// Unit: the one list of JavaScriptCore tier pins names exactly the functions meant, only the shims' entries and
// the rg worker pin (each at start), and a pinned thread never compiles those functions with the top tier.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { HOT_PATHS } from "./jit-tier.ts";

const REPO = join(import.meta.dir, "..", "..");

test("the pin list names each pinned function once, grouped by how often it runs", () => {
  const names = Object.fromEntries(Object.entries(HOT_PATHS).map(([group, fns]) => [group, fns.map((f) => f.name)]));
  expect(names).toEqual({
    ignoreRules: ["verdict", "own", "dirIgnored", "ruleVerdict"],
    walk: ["readDir", "kindOf", "keep", "next", "next"],
    file: ["read", "countLines", "file", "bytes", "cannotMatch", "decode", "matchedLines", "countMatchedLines", "plainLines"],
    tree: ["next", "stop", "settle"],
    batch: ["packFiles", "unpackFiles", "run"],
    line: ["path", "shown", "line", "line"],
  });
  const all = Object.values(HOT_PATHS).flat();
  for (const f of all) expect(typeof f).toBe("function");
  expect(new Set(all).size).toBe(all.length);
});

test("this Bun still offers the pin (else every pin would silently do nothing)", async () => {
  const jsc = (await import("bun:jsc")) as { noFTL?: unknown };
  expect(typeof jsc.noFTL).toBe("function");
});

function productFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...productFiles(p));
    else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")) out.push(p);
  }
  return out;
}

test("only the rg and tree shims' entries and the rg worker pin, each by calling pinHotPaths() at start", () => {
  const files = [join(REPO, "main.ts"), ...["cli", "core", "tools"].flatMap((d) => productFiles(join(REPO, d)))];
  const importers = files.filter((f) => /from "[./]*(tools\/search\/|\.\/)jit-tier\.ts"/.test(readFileSync(f, "utf8")));
  expect(importers.map((f) => relative(REPO, f)).sort()).toEqual(["cli/modes/rg-builtin.ts", "cli/modes/tree.ts", "tools/search/rg-worker.ts"]);
  // The worker pins at load; each shim first thing in the function its process runs.
  expect(readFileSync(join(REPO, "tools/search/rg-worker.ts"), "utf8")).toMatch(/\npinHotPaths\(\);/);
  expect(readFileSync(join(REPO, "cli/modes/rg-builtin.ts"), "utf8")).toMatch(/export async function runBuiltinRg\([^\n]*\{\n  pinHotPaths\(\);\n/);
  expect(readFileSync(join(REPO, "cli/modes/tree.ts"), "utf8")).toMatch(/export async function run\([^\n]*\{\n  pinHotPaths\(\);\n/);
  // Nothing else marks a tier.
  const marking = files.filter((f) => readFileSync(f, "utf8").includes("noFTL"));
  expect(marking.map((f) => relative(REPO, f))).toEqual(["tools/search/jit-tier.ts"]);
});

// End to end: JavaScriptCore reports each top-tier (FTL) compile as `Optimized NAME#HASH:[…] using FTL`, the
// hash from the function's source, so the same function has the same name#hash in every process and thread.
// Compiling on the running thread with low thresholds makes which functions tier up depend on counts only.
describe("a pinned thread never compiles a pinned function with the top tier", () => {
  const JIT = {
    BUN_JSC_useConcurrentJIT: "0",
    BUN_JSC_thresholdForJITAfterWarmUp: "10",
    BUN_JSC_thresholdForOptimizeAfterWarmUp: "20",
    BUN_JSC_thresholdForFTLOptimizeAfterWarmUp: "50",
    BUN_JSC_reportFTLCompileTimes: "1",
  };
  const pinnedNames = new Set(Object.values(HOT_PATHS).flat().map((f) => f.name));
  let base: string;
  let tree: string;
  let child: string;

  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), "tendril-jit-"));
    tree = join(base, "tree");
    for (let i = 0; i < 240; i++) {
      const dir = join(tree, `d${i % 6}`, `s${i % 4}`);
      mkdirSync(dir, { recursive: true });
      const lines = Array.from({ length: 40 }, (_, k) => (k === i % 40 ? `let needle_value = ${i};` : `line ${k} of file ${i}`));
      writeFileSync(join(dir, `f${i}.txt`), lines.join("\n") + "\n");
    }
    writeFileSync(join(tree, ".gitignore"), "*.log\n");
    // Runs the search or tree code in this process's main thread (`search`, `tree`; pinned first with `pin`),
    // or hands all the files to one rg worker, which pins itself (`worker`).
    child = join(base, "child.ts");
    writeFileSync(child, `
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { parseRgArgs } from ${JSON.stringify(join(REPO, "tools/search/rg-args.ts"))};
import { BatchSearcher, packFiles, type FileRef } from ${JSON.stringify(join(REPO, "tools/search/rg-parallel.ts"))};
import { compilePatterns } from ${JSON.stringify(join(REPO, "tools/search/rg-regex.ts"))};
import { ShimOutput } from ${JSON.stringify(join(REPO, "tools/search/shim-output.ts"))};
import { buildTree, renderTree } from ${JSON.stringify(join(REPO, "tools/tree/tree.ts"))};
import { pinHotPaths } from ${JSON.stringify(join(REPO, "tools/search/jit-tier.ts"))};
const [mode, dir, pin] = process.argv.slice(2) as [string, string, string | undefined];
if (pin === "pin") pinHotPaths();
if (mode === "tree") {
  const out = new ShimOutput(() => {}, { maxBytes: Infinity, maxLines: Infinity }, "tree", "");
  renderTree(buildTree(dir, ".", dir, { all: false, noIgnore: false, maxEntries: 1e9, budgetMs: 1e9, maxShown: 1e9, maxShownBytes: 1e9 }), out);
  out.finish();
} else {
  const parsed = parseRgArgs(["-n", "needle_value"]);
  if (!parsed.ok) throw new Error(parsed.message);
  const o = parsed.options;
  const files: FileRef[] = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith(".txt")).sort().map((f) => [join(dir, f), f, false]);
  if (mode === "search") {
    const pat = compilePatterns({ ...o, multilineDotall: false });
    if (typeof pat === "string") throw new Error(pat);
    console.log(new BatchSearcher(o, pat, true, 1 << 30).run(0, files).text.split("\\n").length - 1);
  } else {
    const w = new Worker(${JSON.stringify(join(REPO, "tools/search/rg-worker.ts"))});
    w.postMessage({ type: "init", options: o, patterns: o.patterns, withFilename: true, maxFileBytes: 1 << 30 });
    w.postMessage({ type: "batch", id: 0, files: packFiles(files) });
    const r = await new Promise<{ text: string }>((resolve) => (w.onmessage = (e) => resolve(e.data)));
    console.log(r.text.split("\\n").length - 1);
    w.terminate();
  }
}
`);
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  /** The pinned-named functions the process compiled with the top tier, as name#hash. */
  function topTier(args: string[], cwd = REPO): { hits: Set<string>; stdout: string } {
    const r = spawnSync(process.execPath, args, { cwd, encoding: "utf8", timeout: 30_000, env: { ...process.env, ...JIT, TENDRIL_RG_BUILTIN: "1" } });
    expect(r.status).toBe(0);
    const hits = new Set<string>();
    for (const m of r.stderr.matchAll(/^Optimized (\w+)#(\w+):.* using FTL/gm)) if (pinnedNames.has(m[1]!)) hits.add(`${m[1]}#${m[2]}`);
    return { hits, stdout: r.stdout };
  }

  /** The pinned functions a run of `mode` takes to the top tier unless pinned (other code shares their names). */
  function pinnedTopTier(mode: string, out: string): Set<string> {
    const unpinned = topTier([child, mode, tree]);
    const pinned = topTier([child, mode, tree, "pin"]);
    expect(unpinned.stdout.trim()).toBe(out);
    expect(pinned.stdout.trim()).toBe(out);
    return new Set([...unpinned.hits].filter((h) => !pinned.hits.has(h)));
  }

  test("the rg worker thread and the rg shim's main thread", () => {
    // Without pins these files are enough to take the per-file search to the top tier…
    const hot = pinnedTopTier("search", "240");
    expect([...hot].map((h) => h.split("#")[0])).toContain("file");
    // …which a worker (it pins at start) and the shim's entry never do.
    const worker = topTier([child, "worker", tree]);
    expect(worker.stdout.trim()).toBe("240");
    expect([...worker.hits].filter((h) => hot.has(h))).toEqual([]);
    const shim = topTier([join(REPO, "main.ts"), "rg", "-j1", "-n", "needle_value", tree]);
    expect(shim.stdout.split("\n").filter(Boolean)).toHaveLength(240);
    expect([...shim.hits].filter((h) => hot.has(h))).toEqual([]);
  });

  test("the tree shim's main thread", () => {
    const hot = pinnedTopTier("tree", "");
    expect(hot.size).toBeGreaterThan(0);
    const shim = topTier([join(REPO, "main.ts"), "tree", tree]);
    expect(shim.stdout).toContain("f239.txt");
    expect([...shim.hits].filter((h) => hot.has(h))).toEqual([]);
  });
});
