// `npm run release` end to end, on a fresh clone of this repository's HEAD (so it tests what is
// committed, and a clean tree): the refusals come first, each before dist/release exists, then one full
// release whose artifacts every later test reads. The cross-compile runtimes come from npm's cache
// (`--offline`: tests never reach the network; .ci/run puts them there, as `npm run release` would).
// Not in `npm run check` (its own `npm run check:release`); the entry's rules are registry-entry.test.ts's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tar from "tar";
import { archiveName, hostPlatform, PLATFORMS, platformPackage } from "../scripts/release/platforms.ts";
import { checkMachoSignature } from "../scripts/release/macho-signature.ts";
import { signAdHoc } from "../scripts/release/macho-sign.ts";
import { checkAgentEntry } from "../scripts/release/registry-entry.ts";
import { runnerFor } from "../scripts/release/smoke.ts";

const ROOT = join(import.meta.dir, "..");
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const BASE_URL = `https://downloads.example.com/tendril/v${VERSION}/`;
/** A release takes ~35 s alone; the suite runs four files at once on two cores. */
const RELEASE_TIMEOUT_MS = 400_000;
const FAIL_TIMEOUT_MS = 200_000;

const tmp = mkdtempSync(join(tmpdir(), "tendril-release-test-"));
const clone = join(tmp, "clone");
const out = join(clone, "dist", "release");
let release: { code: number | null; stdout: string; stderr: string };

/** At low priority: a release keeps both cores busy for half a minute, and the other test files' time bounds must still hold. */
function runRelease(args: string[], env: Record<string, string> = {}, timeout = FAIL_TIMEOUT_MS) {
  const r = spawnSync("nice", ["-n", "15", process.execPath, "scripts/release.ts", "--offline", ...args], { cwd: clone, env: { ...process.env, ...env }, encoding: "utf8", timeout });
  return { code: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
}

/** A refused release wrote nothing: no dist/release and no work folder left behind. */
function expectNothingWritten(): void {
  expect(existsSync(out)).toBe(false);
  const dist = join(clone, "dist");
  expect(existsSync(dist) ? readdirSync(dist).filter((n) => n.startsWith(".release-work")) : []).toEqual([]);
}

/** An editor stops an agent with SIGTERM to the process it started: the launcher must pass it on and die of it too. */
async function expectSigtermPassesThrough(launcher: string): Promise<void> {
  // The built-in rg reads its piped stdin until EOF: a binary that runs until told otherwise.
  const child = spawn(launcher, ["rg", "needle"], { stdio: ["pipe", "ignore", "ignore"], env: { ...process.env, TENDRIL_RG_BUILTIN: "1" } });
  const exited = once(child, "exit");
  let binary: number | undefined;
  for (let i = 0; i < 500 && binary === undefined; i++) {
    binary = childrenOf(child.pid!)[0];
    if (binary === undefined) await new Promise((r) => setTimeout(r, 20));
  }
  expect(binary).toBeDefined();
  child.kill("SIGTERM");
  const [code, signal] = await exited;
  expect({ code, signal }).toEqual({ code: null, signal: "SIGTERM" });
  expect(childrenOf(child.pid!)).toEqual([]);
  // dead within a moment of the launcher (it forwards the signal, then dies of it itself)
  const gone = () => { try { process.kill(binary!, 0); return false; } catch { return true; } };
  for (let i = 0; i < 100 && !gone(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(gone()).toBe(true);
}

/** Child pids, from /proc where there is one (no procps needed), else from pgrep. */
function childrenOf(pid: number): number[] {
  if (!existsSync("/proc/self/stat")) {
    return spawnSync("pgrep", ["-P", String(pid)], { encoding: "utf8" }).stdout.split("\n").filter((l) => l.trim() !== "").map(Number);
  }
  return readdirSync("/proc").filter((n) => /^\d+$/.test(n)).map(Number).filter((child) => {
    try {
      const stat = readFileSync(`/proc/${child}/stat`, "utf8");
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
    } catch {
      return false; // gone meanwhile
    }
  });
}

function sha256(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

beforeAll(() => {
  const cloned = spawnSync("git", ["clone", "-q", ROOT, clone], { encoding: "utf8", timeout: 60_000 });
  if (cloned.status !== 0) throw new Error(`git clone of ${ROOT} failed: ${cloned.stderr}`);
  // Packages resolve from the folder above the clone, so the clone's own tree stays exactly the commit.
  symlinkSync(join(ROOT, "node_modules"), join(tmp, "node_modules"));
});

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("refusals, each before anything is written", () => {
  test("an unknown --base-url scheme", () => {
    const r = runRelease(["--base-url", "ftp://example.com/tendril/"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("unknown scheme ftp:");
    expectNothingWritten();
  });

  test("an unknown option prints the usage", () => {
    const r = runRelease(["--base-urll", BASE_URL]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("--base-urll");
    expect(r.stderr).toContain("usage: npm run release");
  });

  test("a dirty work tree, unless --allow-dirty", () => {
    writeFileSync(join(clone, "stray.txt"), "not committed\n");
    try {
      const r = runRelease(["--base-url", BASE_URL]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("uncommitted changes");
      expect(r.stderr).toContain("stray.txt");
      expect(r.stderr).toContain("--allow-dirty");
      expectNothingWritten();
    } finally {
      rmSync(join(clone, "stray.txt"));
    }
  });

  test("a missing target runtime is named, with how to get it", () => {
    const emptyCache = join(tmp, "empty-npm-cache");
    mkdirSync(emptyCache);
    const r = runRelease(["--base-url", BASE_URL], { npm_config_cache: emptyCache });
    expect(r.code).toBe(1);
    for (const p of PLATFORMS) expect(r.stderr).toContain(`${p.runtimePackage}@${process.versions.bun}`);
    expect(r.stderr).toContain(`npm cache add ${PLATFORMS.map((p) => `${p.runtimePackage}@${process.versions.bun}`).join(" ")}`);
    expectNothingWritten();
  }, FAIL_TIMEOUT_MS);

  test("a binary whose version disagrees with package.json", () => {
    const versionFile = join(clone, "core", "version.ts");
    const original = readFileSync(versionFile, "utf8");
    const shadowed = original.replace("pkg.version;", '"9.9.9";');
    expect(shadowed).not.toBe(original);
    writeFileSync(versionFile, shadowed);
    try {
      const r = runRelease(["--base-url", BASE_URL, "--allow-dirty"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`reports version "9.9.9"`);
      expect(r.stderr).toContain(`package.json says ${VERSION}`);
      expectNothingWritten();
    } finally {
      writeFileSync(versionFile, original);
    }
  }, FAIL_TIMEOUT_MS);
});

describe("a release", () => {
  beforeAll(() => {
    release = runRelease(["--base-url", BASE_URL], {}, RELEASE_TIMEOUT_MS);
    if (release.code !== 0) throw new Error(`the release failed (exit ${release.code}):\n${release.stderr}\n${release.stdout}`);
  }, RELEASE_TIMEOUT_MS);

  const npmFiles = [`tendril-acp-${VERSION}.tgz`, ...PLATFORMS.map((p) => `${platformPackage(p)}-${VERSION}.tgz`)];
  const archives = PLATFORMS.map((p) => archiveName(VERSION, p));

  test("from a fresh clone writes every artifact", () => {
    expect(readdirSync(out).sort()).toEqual([...archives, ...npmFiles, "SHA256SUMS", "acp-registry"].sort());
    expect(readdirSync(join(out, "acp-registry", "tendril")).sort()).toEqual(["agent.json", "icon.svg"]);
  });

  test("every checksum in SHA256SUMS verifies, and it covers every archive and package", () => {
    const lines = readFileSync(join(out, "SHA256SUMS"), "utf8").trimEnd().split("\n");
    const listed = lines.map((l) => {
      const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(l);
      expect(m).not.toBeNull();
      expect(sha256(join(out, m![2]!))).toBe(m![1]!);
      return m![2]!;
    });
    expect(listed.sort()).toEqual([...archives, ...npmFiles].sort());
  });

  test("the registry entry parses against the registry's schema and names the four platforms", () => {
    const entry = checkAgentEntry(JSON.parse(readFileSync(join(out, "acp-registry", "tendril", "agent.json"), "utf8")));
    expect(entry.id).toBe("tendril");
    expect(entry.version).toBe(VERSION);
    expect(entry.license).toBe("Apache-2.0");
    const binary = entry.distribution.binary!;
    expect(Object.keys(binary).sort()).toEqual(["darwin-aarch64", "darwin-x86_64", "linux-aarch64", "linux-x86_64"]);
    for (const p of PLATFORMS) {
      const t = binary[p.registryId as keyof typeof binary]!;
      expect(t).toEqual({ archive: `${BASE_URL}${archiveName(VERSION, p)}`, sha256: sha256(join(out, archiveName(VERSION, p))), cmd: "./tendril", args: ["agent"] });
    }
  });

  test("each archive holds tendril, LICENSE and README.md at its top and the docs pages README links to, stamped with the commit's time", async () => {
    const commitTime = Number(spawnSync("git", ["log", "-1", "--format=%ct"], { cwd: clone, encoding: "utf8" }).stdout.trim());
    for (const name of archives) {
      const entries: { path: string; mode: number; mtime: number }[] = [];
      await tar.t({ file: join(out, name), onReadEntry: (e) => entries.push({ path: e.path, mode: e.mode ?? 0, mtime: (e.mtime?.getTime() ?? 0) / 1000 }) });
      const docs = readdirSync(join(clone, "docs")).filter((f) => f.endsWith(".md")).sort();
      expect(docs.length).toBeGreaterThan(0);
      expect(entries.map((e) => [e.path, e.mode & 0o777])).toEqual([["tendril", 0o755], ["LICENSE", 0o644], ["README.md", 0o644], ...docs.map((f) => [`docs/${f}`, 0o644])]);
      for (const e of entries) expect(e.mtime).toBe(commitTime);
    }
  });

  test("the darwin-arm64 binary's code signature verifies (Apple Silicon runs nothing else), and a changed byte breaks it", () => {
    const dir = join(tmp, "darwin-arm64");
    mkdirSync(dir);
    tar.x({ file: join(out, archiveName(VERSION, PLATFORMS.find((p) => p.id === "darwin-arm64")!)), cwd: dir, sync: true });
    expect(release.stdout).toContain("darwin-arm64: its ad-hoc code signature verifies");
    expect(checkMachoSignature(join(dir, "tendril"))).toBeUndefined();
    const bytes = readFileSync(join(dir, "tendril"));
    bytes[5000] = bytes[5000]! ^ 0xff;
    writeFileSync(join(dir, "tampered"), bytes);
    expect(checkMachoSignature(join(dir, "tampered"))).toContain("page hashes do not match");
  });

  test("the darwin-x64 binary, whose compiler left it an invalid signature, is re-signed ad hoc and every page hash verifies", () => {
    const dir = join(tmp, "darwin-x64");
    mkdirSync(dir);
    tar.x({ file: join(out, archiveName(VERSION, PLATFORMS.find((p) => p.id === "darwin-x64")!)), cwd: dir, sync: true });
    expect(release.stdout).toContain("darwin-x64: re-signed ad hoc");
    expect(checkMachoSignature(join(dir, "tendril"))).toBeUndefined();
    const bytes = readFileSync(join(dir, "tendril"));
    bytes[5000] = bytes[5000]! ^ 0xff;
    writeFileSync(join(dir, "tampered"), bytes);
    expect(checkMachoSignature(join(dir, "tampered"))).toContain("page hashes do not match");
  });

  test("re-signing the darwin-arm64 binary under the compiler's identifier gives back the compiler's own valid signature, byte for byte", () => {
    const dir = join(tmp, "darwin-arm64-resign");
    mkdirSync(dir);
    tar.x({ file: join(out, archiveName(VERSION, PLATFORMS.find((p) => p.id === "darwin-arm64")!)), cwd: dir, sync: true });
    const original = readFileSync(join(dir, "tendril"));
    signAdHoc(join(dir, "tendril"), "a.out");
    expect(readFileSync(join(dir, "tendril")).equals(original)).toBe(true);
  });

  const host = hostPlatform();
  test.skipIf(host === undefined)("npm install -g --offline of the launcher and this platform's package gives a working tendril", async () => {
    const prefix = join(tmp, "global");
    const files = [`tendril-acp-${VERSION}.tgz`, `${platformPackage(host!)}-${VERSION}.tgz`].map((f) => join(out, f));
    const env = { ...process.env, npm_config_cache: join(tmp, "npm-cache-install") };
    const inst = spawnSync("npm", ["install", "-g", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", ...files], { cwd: tmp, env, encoding: "utf8", timeout: 120_000 });
    expect(inst.stderr).not.toContain("ERR!");
    expect(inst.status).toBe(0);
    const tendril = join(prefix, "bin", "tendril");
    const v = spawnSync(tendril, ["--version"], { encoding: "utf8", timeout: 30_000 });
    expect(v.stdout.trim()).toBe(VERSION);
    expect(v.status).toBe(0);
    // Arguments and the exit status pass through the launcher: a usage error is exit 2.
    const bad = spawnSync(tendril, ["no-such-mode"], { encoding: "utf8", timeout: 30_000 });
    expect(bad.status).toBe(2);
    await expectSigtermPassesThrough(tendril);
  }, FAIL_TIMEOUT_MS);

  test.skipIf(host === undefined)("the launcher alone names the platform package it lacks", () => {
    const prefix = join(tmp, "launcher-only");
    const env = { ...process.env, npm_config_cache: join(tmp, "npm-cache-launcher") };
    const inst = spawnSync("npm", ["install", "-g", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", join(out, `tendril-acp-${VERSION}.tgz`)], { cwd: tmp, env, encoding: "utf8", timeout: 120_000 });
    expect(inst.status).toBe(0);
    const r = spawnSync(join(prefix, "bin", "tendril"), ["--version"], { encoding: "utf8", timeout: 30_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`the package ${platformPackage(host!)}`);
    expect(r.stderr).toContain(`npm install -g ${platformPackage(host!)}@${VERSION}`);
  }, FAIL_TIMEOUT_MS);

  test("the launcher says plainly that Windows is not supported, and which platforms are", () => {
    const launcher = join(tmp, "launcher-src");
    mkdirSync(launcher);
    tar.x({ file: join(out, `tendril-acp-${VERSION}.tgz`), cwd: launcher, sync: true });
    const as = (platform: string, arch: string) =>
      spawnSync("node", ["-e", `Object.defineProperty(process, "platform", { value: "${platform}" }); Object.defineProperty(process, "arch", { value: "${arch}" }); require(process.argv[1]);`, join(launcher, "package", "bin", "tendril.js")], { encoding: "utf8", timeout: 30_000 });
    const win = as("win32", "x64");
    expect(win.status).toBe(1);
    expect(win.stderr).toContain("Windows is not supported");
    const other = as("linux", "ia32");
    expect(other.status).toBe(1);
    expect(other.stderr).toContain("no Tendril binary for linux-ia32");
  });

  const arm = PLATFORMS.find((p) => p.id === "linux-arm64")!;
  const armRunner = runnerFor(arm);
  test.skipIf("skip" in armRunner)("the linux-arm64 binary passes its smoke test under qemu-user-static", () => {
    expect(release.stdout).toContain("smoke linux-arm64: --version, rg, prompt (demo cassette), registry agent check ok under qemu-aarch64-static");
    // And the archive's own binary, as a user gets it, starts under qemu.
    const dir = join(tmp, "arm64");
    mkdirSync(dir);
    tar.x({ file: join(out, archiveName(VERSION, arm)), cwd: dir, sync: true });
    const prefix = (armRunner as { prefix: string[] }).prefix;
    const r = spawnSync(prefix[0]!, [...prefix.slice(1), join(dir, "tendril"), "--version"], { encoding: "utf8", timeout: 60_000 });
    expect(r.stdout.trim()).toBe(VERSION);
  }, FAIL_TIMEOUT_MS);
});
