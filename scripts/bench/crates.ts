// Benchmark: `tendril crate-fetch` against `cargo fetch` on one loopback sparse registry (served by a
// child process running this file with --serve): a generated ~5 MB crate and 20 small crates, cold
// (caches emptied before every run, untimed; the small crates also from a registry that gzips its answers),
// then cache hits against start-up. Skips cargo when absent.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { crateTarball, FakeRegistry } from "../../tests/fake-crates-registry.ts";
import { type CommandCase, compareCommands, which } from "./harness.ts";

const BIN = resolve("dist/tendril");
const BIG = { name: "bigcrate", vers: "1.0.0" };
const SMALL = Array.from({ length: 20 }, (_, i) => ({ name: `small${String(i).padStart(2, "0")}`, vers: "0.1.0" }));

/** 5 MB of pseudo-random base64 text in 100 files (xorshift32): it barely compresses, so the .crate is ~5 MB. */
function bigFiles(): Record<string, string> {
  let x = 2463534242;
  const files: Record<string, string> = {};
  for (let f = 0; f < 100; f++) {
    const bytes = Buffer.alloc(37_500);
    for (let i = 0; i < bytes.length; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      bytes[i] = x & 255;
    }
    files[`src/gen/part${f}.rs`] = `// generated\n${bytes.toString("base64").replace(/(.{100})/g, "$1\n")}\n`;
  }
  return files;
}

async function serve(): Promise<void> {
  const reg = new FakeRegistry().add(BIG.name, { vers: BIG.vers, tarball: crateTarball(BIG.name, BIG.vers, bigFiles()) });
  const gzipped = new FakeRegistry();
  gzipped.gzip = true;
  for (const r of [reg, gzipped]) for (const c of SMALL) r.add(c.name, { vers: c.vers, files: { "src/lib.rs": `pub fn ${c.name}() {}\n`.repeat(50) } });
  await reg.start();
  await gzipped.start();
  const big = crateTarball(BIG.name, BIG.vers, bigFiles());
  process.stdout.write(`${reg.indexUrl} ${big.length} ${gzipped.indexUrl}\n`);
  process.stdin.on("end", () => process.exit(0)).resume();
}

function cargoBinary(): string | undefined {
  const viaRustup = spawnSync("rustup", ["which", "cargo"], { encoding: "utf8" });
  if (viaRustup.status === 0) return viaRustup.stdout.trim();
  return which("cargo") ?? (existsSync("/root/.cargo/bin/cargo") ? "/root/.cargo/bin/cargo" : undefined);
}

/** A cargo project depending on `deps`, with CARGO_HOME replacing crates.io by the loopback registry. */
function cargoProject(dir: string, indexUrl: string, deps: { name: string; vers: string }[]): { cwd: string; home: string } {
  const cwd = join(dir, "project");
  const home = join(dir, "cargo-home");
  mkdirSync(join(cwd, "src"), { recursive: true });
  mkdirSync(home, { recursive: true });
  const depLines = deps.map((d) => `${d.name} = "=${d.vers}"`).join("\n");
  writeFileSync(join(cwd, "Cargo.toml"), `[package]\nname = "bench"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n${depLines}\n`);
  writeFileSync(join(cwd, "src", "lib.rs"), "");
  writeFileSync(
    join(home, "config.toml"),
    `[source.crates-io]\nreplace-with = "loopback"\n\n[source.loopback]\nregistry = "sparse+${indexUrl}"\n`,
  );
  return { cwd, home };
}

function checked(c: CommandCase): CommandCase {
  c.before?.();
  const r = spawnSync(c.cmd, c.args ?? [], { ...c.options, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${c.name} failed (${r.status}): ${String(r.stderr).slice(0, 400)}`);
  return c;
}

function cases(dir: string, indexUrl: string, cargo: string | undefined, deps: { name: string; vers: string }[], cold: boolean, gzipIndexUrl?: string): CommandCase[] {
  const cache = join(dir, "xdg-cache");
  const env = { ...process.env, XDG_CACHE_HOME: cache, CARGO_HOME: join(dir, "no-cargo"), TENDRIL_CRATES_INDEX: indexUrl };
  const out: CommandCase[] = [
    {
      name: `tendril crate-fetch (${deps.length === 1 ? "latest: index asked" : `${deps.length} crates`})`,
      cmd: BIN,
      args: ["crate-fetch", ...deps.map((d) => d.name)],
      options: { env, stdio: "ignore" },
      ...(cold ? { before: () => rmSync(cache, { recursive: true, force: true }) } : {}),
    },
  ];
  if (gzipIndexUrl) {
    out.push({
      name: "tendril crate-fetch (gzip-encoding registry)",
      cmd: BIN,
      args: ["crate-fetch", ...deps.map((d) => d.name)],
      options: { env: { ...env, TENDRIL_CRATES_INDEX: gzipIndexUrl }, stdio: "ignore" },
      before: () => rmSync(cache, { recursive: true, force: true }),
    });
  }
  if (!cold) {
    // cargo's warm `cargo fetch` works from its Cargo.lock without the network; so does this one.
    const ws = join(dir, "locked-workspace");
    mkdirSync(ws, { recursive: true });
    const pkgs = deps.map((d) => `[[package]]\nname = "${d.name}"\nversion = "${d.vers}"\nsource = "sparse+${indexUrl}"\n`);
    writeFileSync(join(ws, "Cargo.lock"), `version = 4\n\n${pkgs.join("\n")}`);
    out.push({ name: "tendril crate-fetch (Cargo.lock pin, no index)", cmd: BIN, args: ["crate-fetch", ...deps.map((d) => d.name)], options: { env, cwd: ws } });
  }
  if (cargo) {
    const p = cargoProject(join(dir, "cargo"), indexUrl, deps);
    const cargoEnv = { ...process.env, CARGO_HOME: p.home, CARGO_TERM_PROGRESS_WHEN: "never" };
    const registry = join(p.home, "registry");
    out.push({
      name: "cargo fetch",
      cmd: cargo,
      args: ["fetch", "--quiet"],
      options: { cwd: p.cwd, env: cargoEnv },
      ...(cold ? { before: () => rmSync(registry, { recursive: true, force: true }) } : {}),
    });
  }
  if (!cold) out.push({ name: "dist/tendril --version (start-up)", cmd: BIN, args: ["--version"] });
  return out.map(checked);
}

export async function run(): Promise<void> {
  if (!existsSync("dist/tendril")) return void console.log("\n## crates: skipped (run `npm run build` first)");
  const cargo = cargoBinary();
  if (!cargo) console.log("\n(cargo not found: crate-fetch figures only, no cargo side)");
  const child = spawn(process.execPath, [new URL(import.meta.url).pathname, "--serve"], { stdio: ["pipe", "pipe", "inherit"] });
  const [indexUrl, bigBytes, gzipIndexUrl] = (await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once("line", resolve))).split(" ");
  const dir = mkdtempSync(join(tmpdir(), "tendril-bench-crates-"));
  try {
    const mb = (Number(bigBytes) / 1e6).toFixed(1);
    compareCommands(`crates: one ${mb} MB crate, cold (fetch + verify + extract)`, cases(join(dir, "big"), indexUrl!, cargo, [BIG], true), 10);
    compareCommands("crates: 20 small crates in one call, cold", cases(join(dir, "small"), indexUrl!, cargo, SMALL, true, gzipIndexUrl), 10);
    compareCommands(`crates: cache hit of the ${mb} MB crate, against start-up`, cases(join(dir, "big"), indexUrl!, cargo, [BIG], false), 20);
  } finally {
    child.stdin!.end();
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main && process.argv.includes("--serve")) await serve();
