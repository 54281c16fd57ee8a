// `npm run release [-- --base-url URL] [--allow-dirty] [--offline] [--cache-runtimes]`: builds Tendril
// for every platform in scripts/release/platforms.ts exactly as `npm run build` does, checks the version,
// re-signs a darwin binary the compiler left invalid and verifies both darwin signatures, smoke-tests
// what can run here (and runs the ACP Registry's agent check), then writes dist/release/: archives, npm
// packages, the ACP Registry entry, SHA256SUMS. dist/release is replaced whole, only after every check.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { sha256File } from "../core/ids.ts";
import { pidAlive } from "../core/process-group.ts";
import { compileArgs } from "./compile-args.ts";
import { type ArchiveEntry, writeArchive } from "./release/archive.ts";
import { checkMachoSignature } from "./release/macho-signature.ts";
import { signAdHoc } from "./release/macho-sign.ts";
import { packLauncher, packPlatform, type PackageMeta } from "./release/npm-packages.ts";
import { archiveName, hostPlatform, type Platform, PLATFORMS } from "./release/platforms.ts";
import { buildAgentEntry, parseBaseUrl } from "./release/registry-entry.ts";
import { iconProblems, registryAgentCheck } from "./release/registry-check.ts";
import { ReleaseError } from "./release/release-error.ts";
import { runCommand, tail } from "./release/run-command.ts";
import { cacheRuntimes, fetchRuntimes } from "./release/runtimes.ts";
import { runnerFor, smokeTest } from "./release/smoke.ts";
import { readSourceState, type SourceState } from "./release/source-state.ts";

const USAGE = `usage: npm run release [-- OPTIONS]
  --base-url URL   where the archives will be published (https://…; http:// or file:// for local tests);
                   the ACP Registry entry's archive URLs are URL/NAME (default: file:// URL of dist/release)
  --allow-dirty    release the work tree even with uncommitted changes
  --offline        take the cross-compile runtimes from npm's cache only
  --cache-runtimes only put the cross-compile runtimes in npm's cache (fetching them), then exit`;
const BUILD_TIMEOUT_MS = 300_000;
const ROOT = resolve(import.meta.dir, "..");
/** The reference pages README links to, shipped beside it in each archive. */
const DOC_PAGES = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).sort();
const OUT = join(ROOT, "dist", "release");
const WORK_PREFIX = ".release-work-";

interface Options {
  baseUrl: URL;
  allowDirty: boolean;
  offline: boolean;
}

function parseOptions(argv: string[]): Options | "help" | "cache-runtimes" {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { "base-url": { type: "string" }, "allow-dirty": { type: "boolean" }, offline: { type: "boolean" }, "cache-runtimes": { type: "boolean" }, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new ReleaseError(`${(err as Error).message}\n${USAGE}`);
  }
  if (values.help) return "help";
  if (values["cache-runtimes"]) return "cache-runtimes";
  const baseUrl = values["base-url"] === undefined ? pathToFileURL(`${OUT}/`) : parseBaseUrl(values["base-url"]);
  return { baseUrl, allowDirty: values["allow-dirty"] ?? false, offline: values.offline ?? false };
}

async function main(argv: string[]): Promise<void> {
  const started = performance.now();
  const opts = parseOptions(argv);
  if (opts === "help") return void console.log(USAGE);
  if (opts === "cache-runtimes") {
    await cacheRuntimes(PLATFORMS, process.versions.bun);
    return log(`npm's cache holds the Bun ${process.versions.bun} runtimes for ${PLATFORMS.map((p) => p.id).join(", ")} (${elapsed(started)})`);
  }
  const host = hostPlatform();
  if (host === undefined) throw new ReleaseError(`releases are made on ${PLATFORMS.map((p) => p.id).join(", ")}; this machine is ${process.platform}-${process.arch}`);
  const src = await readSourceState(ROOT, opts.allowDirty);
  log(`tendril ${src.version}, commit ${src.commit.slice(0, 12)}${opts.allowDirty ? " (work tree as it is)" : ""}`);
  const work = join(ROOT, "dist", `${WORK_PREFIX}${process.pid}`);
  sweepStaleWork();
  // Ctrl-C (which the builds and npm get too) must not leave a gigabyte of work behind.
  const stop = () => {
    rmSync(work, { recursive: true, force: true });
    process.exit(130);
  };
  process.once("SIGINT", stop).once("SIGTERM", stop);
  try {
    const runtimes = await fetchRuntimes(PLATFORMS, process.versions.bun, join(work, "runtimes"), opts.offline);
    log(`runtimes: Bun ${process.versions.bun} for ${PLATFORMS.map((p) => p.id).join(", ")} (${elapsed(started)})`);
    const bins = await buildAll(host, runtimes, join(work, "bin"), src.version);
    log(`built ${PLATFORMS.length} binaries; ${host.id} reports version ${src.version} (${elapsed(started)})`);
    checkSignatures(bins);
    // The smoke tests and the packing run side by side; dist/release is replaced only when both succeeded.
    const staged = join(work, "out");
    const [smoked, written] = await Promise.allSettled([smokeAll(bins, src.version), writeArtifacts(bins, staged, join(work, "npm"), src, opts.baseUrl)]);
    if (smoked.status === "rejected") throw smoked.reason;
    if (written.status === "rejected") throw written.reason;
    const sizes = written.value;
    rmSync(OUT, { recursive: true, force: true });
    renameSync(staged, OUT);
    report(sizes, bins, src, opts.baseUrl, started);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Removes work folders of releases that were killed (their pid is gone). */
function sweepStaleWork(): void {
  const dist = join(ROOT, "dist");
  if (!existsSync(dist)) return;
  for (const name of readdirSync(dist)) {
    const pid = name.startsWith(WORK_PREFIX) ? Number(name.slice(WORK_PREFIX.length)) : Number.NaN;
    if (!Number.isInteger(pid) || pid === process.pid || pidAlive(pid)) continue;
    rmSync(join(dist, name), { recursive: true, force: true });
  }
}


/** Builds every platform, two at a time (a 2-core machine's worth); the host's binary must report `version`. */
async function buildAll(host: Platform, runtimes: Map<string, string>, dir: string, version: string): Promise<Map<string, string>> {
  const order = [host, ...PLATFORMS.filter((p) => p !== host)];
  const bins = new Map<string, string>();
  let failure: Error | undefined;
  // After a failure the builds already running finish: a bun build killed mid-way leaves its
  // `.HASH.bun-build` temp file in the work tree.
  const next = async (): Promise<void> => {
    for (let p = order.shift(); p !== undefined && failure === undefined; p = order.shift()) {
      try {
        bins.set(p.id, await build(p, runtimes.get(p.id)!, dir));
        if (p === host) await checkVersion(bins.get(p.id)!, version);
      } catch (err) {
        failure ??= err as Error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(2, availableParallelism()) }, next));
  if (failure) throw failure;
  return new Map(PLATFORMS.map((p) => [p.id, bins.get(p.id)!]));
}

async function build(p: Platform, runtime: string, dir: string): Promise<string> {
  // Every binary is named `tendril`: Bun embeds the output's name, so the name is part of the bytes.
  const outfile = join(dir, p.id, "tendril");
  mkdirSync(join(dir, p.id), { recursive: true });
  const args = compileArgs({ outfile, target: p.bunTarget, runtime, bytecode: true });
  const r = await runCommand(process.execPath, args, { cwd: ROOT, timeoutMs: BUILD_TIMEOUT_MS });
  if (r.code !== 0) throw new ReleaseError(`building the ${p.id} binary failed:\n${tail(r, 10)}`);
  return outfile;
}

async function checkVersion(bin: string, version: string): Promise<void> {
  const r = await runCommand(bin, ["--version"], { timeoutMs: 30_000 });
  const got = r.stdout.trim();
  if (r.code !== 0 || got !== version) {
    throw new ReleaseError(`the built binary reports version ${JSON.stringify(got)} (exit ${r.code}) but package.json says ${version}; the version must come from package.json (core/version.ts)`);
  }
}

/**
 * macOS kills a binary whose signature does not verify: a darwin binary the compiler left with an
 * invalid one (Bun's darwin-x64 output keeps the runtime's signature, which no longer covers it) is
 * re-signed ad hoc, and every darwin binary's page hashes must then verify.
 */
function checkSignatures(bins: Map<string, string>): void {
  for (const p of PLATFORMS.filter((q) => q.os === "darwin")) {
    const bin = bins.get(p.id)!;
    const left = checkMachoSignature(bin);
    if (left !== undefined) {
      try {
        signAdHoc(bin, "tendril");
      } catch (err) {
        throw new ReleaseError(`the ${p.id} binary's code signature does not verify (${left}) and it cannot be re-signed: ${(err as Error).message}`);
      }
    }
    const problem = checkMachoSignature(bin);
    if (problem !== undefined) throw new ReleaseError(`the ${p.id} binary's code signature does not verify (${problem}): macOS would kill it at launch`);
    log(left === undefined ? `${p.id}: its ad-hoc code signature verifies` : `${p.id}: re-signed ad hoc (the compiler's signature did not verify: ${left}); every page hash verifies`);
  }
}

async function smokeAll(bins: Map<string, string>, version: string): Promise<void> {
  const runs = PLATFORMS.map(async (p) => {
    const runner = runnerFor(p);
    if ("skip" in runner) return log(`smoke ${p.id}: not run (${runner.skip})`);
    const failed = await smokeTest(bins.get(p.id)!, runner.prefix, version, ROOT);
    if (failed !== undefined) throw new ReleaseError(`the ${p.id} binary failed its smoke test (${runner.how}): ${failed}`);
    // As the registry's CI runs the entry's command (`./tendril agent`).
    const refused = await registryAgentCheck([...runner.prefix, bins.get(p.id)!, "agent"]);
    if (refused !== undefined) throw new ReleaseError(`the ${p.id} binary fails the ACP Registry's agent check (${runner.how}): ${refused}`);
    log(`smoke ${p.id}: --version, rg, prompt (demo cassette), registry agent check ok ${runner.how}`);
  });
  const results = await Promise.allSettled(runs);
  const failures = results.flatMap((r) => (r.status === "rejected" ? [(r.reason as Error).message] : []));
  if (failures.length > 0) throw new ReleaseError(failures.join("\n"));
}

/** Writes every artifact into `out` (not yet dist/release); returns file name → bytes. */
async function writeArtifacts(bins: Map<string, string>, out: string, stage: string, src: SourceState, baseUrl: URL): Promise<Map<string, number>> {
  mkdirSync(out, { recursive: true });
  mkdirSync(stage, { recursive: true });
  const meta: PackageMeta = { version: src.version, description: src.description, license: src.license };
  const archives = PLATFORMS.map(async (p) => {
    const dir = resolve(bins.get(p.id)!, "..");
    for (const f of ["LICENSE", "README.md"]) copyFileSync(join(ROOT, f), join(dir, f));
    // README's reference links lead into docs/: the pages travel with it, so no link in an archive is dead.
    mkdirSync(join(dir, "docs"), { recursive: true });
    for (const f of DOC_PAGES) copyFileSync(join(ROOT, "docs", f), join(dir, "docs", f));
    const entries: ArchiveEntry[] = [
      { name: "tendril", mode: 0o755 },
      { name: "LICENSE", mode: 0o644 },
      { name: "README.md", mode: 0o644 },
      ...DOC_PAGES.map((f): ArchiveEntry => ({ name: `docs/${f}`, mode: 0o644 })),
    ];
    await writeArchive(join(out, archiveName(src.version, p)), dir, entries, src.time);
  });
  const packs = [packLauncher(ROOT, stage, out, meta, PLATFORMS), ...PLATFORMS.map((p) => packPlatform(bins.get(p.id)!, ROOT, stage, out, meta, p))];
  await Promise.all([...archives, ...packs]);

  const files = readdirSync(out).sort();
  const sums = new Map<string, string>();
  for (const f of files) sums.set(f, await sha256File(join(out, f)));
  writeFileSync(join(out, "SHA256SUMS"), files.map((f) => `${sums.get(f)}  ${f}\n`).join(""));
  const registry = join(out, "acp-registry", "tendril");
  mkdirSync(registry, { recursive: true });
  const byPlatform = new Map(PLATFORMS.map((p) => [p.id, sums.get(archiveName(src.version, p))!]));
  const entry = buildAgentEntry({ version: src.version, description: src.description, license: src.license, baseUrl, sha256: byPlatform });
  writeFileSync(join(registry, "agent.json"), `${JSON.stringify(entry, null, 2)}\n`);
  const icon = join(ROOT, "scripts", "release", "icon.svg");
  const problems = iconProblems(readFileSync(icon, "utf8"));
  if (problems.length > 0) throw new ReleaseError(`scripts/release/icon.svg would be refused by the ACP Registry: ${problems.join("; ")}`);
  copyFileSync(icon, join(registry, "icon.svg"));
  return new Map(files.map((f) => [f, statSync(join(out, f)).size]));
}

function report(sizes: Map<string, number>, bins: Map<string, string>, src: SourceState, baseUrl: URL, started: number): void {
  for (const [name, bytes] of sizes) log(`  ${name.padEnd(40)} ${mb(bytes)}`);
  log("  SHA256SUMS, acp-registry/tendril/agent.json (+ icon.svg)");
  for (const p of PLATFORMS.filter((q) => q.id === "linux-x64")) {
    const archive = sizes.get(archiveName(src.version, p))!;
    const binary = statSync(bins.get(p.id)!).size;
    log(`${p.id}: archive ${mb(archive)} for a ${mb(binary)} binary (${((100 * archive) / binary).toFixed(1)}%)`);
  }
  if (baseUrl.protocol === "file:") log(`the registry entry's archive URLs are file:// URLs; pass --base-url https://… for the published entry`);
  log(`dist/release written in ${elapsed(started)}`);
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

function elapsed(started: number): string {
  return `${((performance.now() - started) / 1000).toFixed(1)} s`;
}

function log(line: string): void {
  process.stdout.write(`release: ${line}\n`);
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err: unknown) => {
    if (err instanceof ReleaseError) process.stderr.write(`release: error: ${err.message}\n`);
    else process.stderr.write(`release: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
