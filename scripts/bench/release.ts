// Benchmark: `npm run release` (four platforms, smoke tests, packing) against `npm run build` (one
// binary, the floor), the linux-x64 archive's size against the binary in it, and the released binary's
// start-up against dist/tendril's. Needs the target runtimes in npm's cache (`npm run release -- --cache-runtimes`).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compareCommands, report } from "./harness.ts";

function timed(cmd: string, args: string[]): number | undefined {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
  if (r.status !== 0) {
    console.log(`  ${cmd} ${args.join(" ")} failed: ${String(r.stderr).trim().split("\n").at(-1)}`);
    return undefined;
  }
  return performance.now() - t0;
}

export async function run(): Promise<void> {
  const bun = process.execPath;
  const build = timed(bun, ["scripts/build.ts"]);
  const release = timed(bun, ["scripts/release.ts", "--allow-dirty", "--offline"]);
  if (build === undefined || release === undefined) {
    console.log("\n## release: skipped (see above; `npm run release -- --cache-runtimes` fills npm's cache)");
    return;
  }
  report("release: wall time (goal ≤ 60 s for the full release)", [
    { name: "npm run build (one binary)", medianMs: build, minMs: build },
    { name: "npm run release (4 platforms, checks, packs)", medianMs: release, minMs: release },
  ]);
  const version = JSON.parse(String(spawnSync("node", ["-p", "JSON.stringify(require('./package.json').version)"]).stdout));
  const archive = join("dist", "release", `tendril-${version}-linux-x64.tar.gz`);
  const binary = statSync("dist/tendril").size;
  const packed = statSync(archive).size;
  console.log(`  linux-x64 archive ${(packed / 2 ** 20).toFixed(1)} MiB for a ${(binary / 2 ** 20).toFixed(1)} MiB binary: ${((100 * packed) / binary).toFixed(1)}%`);
  const dir = mkdtempSync(join(tmpdir(), "tendril-bench-release-"));
  try {
    spawnSync("tar", ["-xzf", archive, "-C", dir]);
    compareCommands("release: start-up of the released binary (`--version`, ratio against dist/tendril)", [
      { name: "dist/tendril --version", cmd: "dist/tendril", args: ["--version"] },
      { name: "released tendril --version", cmd: join(dir, "tendril"), args: ["--version"] },
    ], 30);
    // Measured: after `sync; echo 3 > /proc/sys/vm/drop_caches` the two are equal; a file whose pages
    // were just written by tar starts ~2 ms slower while those pages stay cached as written.
    console.log("  (the released binary was just extracted: its written pages are still cached, ~2 ms; equal once read from disk)");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
