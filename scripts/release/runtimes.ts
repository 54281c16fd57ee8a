// Owns getting each target's Bun runtime, the program a cross-compiled binary is built on: the npm
// package `@oven/bun-OS-ARCH` at the compiler's own version, fetched with the npm client (so npm's
// cache, registry settings and integrity check apply, and `--offline` works once it is cached), and
// its `bin/bun` extracted. Does not compile anything.
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import * as tar from "tar";
import type { Platform } from "./platforms.ts";
import { ReleaseError } from "./release-error.ts";
import { type CommandResult, runCommand } from "./run-command.ts";

const NPM_TIMEOUT_MS = 180_000;

/** The npm spec of a platform's runtime at the compiler's version: `@oven/bun-linux-x64@1.4.5`. */
export function runtimeSpec(p: Platform, bunVersion: string): string {
  return `${p.runtimePackage}@${bunVersion}`;
}

/** Puts every runtime in npm's cache (fetching what is missing), so later releases can run --offline. */
export async function cacheRuntimes(platforms: readonly Platform[], bunVersion: string): Promise<void> {
  const specs = platforms.map((p) => runtimeSpec(p, bunVersion));
  const r = await runCommand("npm", ["cache", "add", ...specs], { timeoutMs: NPM_TIMEOUT_MS });
  if (r.code !== 0) throw new ReleaseError(`npm cache add ${specs.join(" ")} failed:\n${npmTail(r)}`);
}

/** Fetches and unpacks every platform's runtime into `dir`; returns platform id → path of its `bun`. */
export async function fetchRuntimes(platforms: readonly Platform[], bunVersion: string, dir: string, offline: boolean): Promise<Map<string, string>> {
  mkdirSync(dir, { recursive: true });
  const got = await Promise.all(platforms.map((p) => fetchRuntime(p, bunVersion, dir, offline)));
  const missing = platforms.filter((_, i) => typeof got[i] !== "string");
  if (missing.length > 0) {
    const specs = missing.map((p) => runtimeSpec(p, bunVersion));
    const why = got.find((g): g is CommandResult => typeof g !== "string")!;
    throw new ReleaseError(
      `the Bun ${bunVersion} runtime for ${missing.map((p) => p.id).join(", ")} is not available (the release cross-compiles on it): ` +
        `npm could not fetch ${specs.join(", ")}:\n${npmTail(why)}\n` +
        `  Get ${missing.length > 1 ? "them" : "it"} from the npm registry: run the release again while the registry is reachable ` +
        `(without --offline), or put ${missing.length > 1 ? "them" : "it"} in npm's cache first: npm cache add ${specs.join(" ")} ` +
        "(npm run release -- --cache-runtimes adds all of them)",
    );
  }
  return new Map(platforms.map((p, i) => [p.id, got[i] as string]));
}

/** The path of the unpacked `bun`, or npm's failure. */
async function fetchRuntime(p: Platform, bunVersion: string, dir: string, offline: boolean): Promise<string | CommandResult> {
  const spec = runtimeSpec(p, bunVersion);
  const into = join(dir, p.id);
  mkdirSync(into, { recursive: true });
  const r = await runCommand("npm", ["pack", spec, "--json", "--ignore-scripts", offline ? "--offline" : "--prefer-offline", "--pack-destination", into], {
    cwd: into,
    timeoutMs: NPM_TIMEOUT_MS,
  });
  const file = r.code === 0 ? packedFile(r.stdout) : undefined;
  if (file === undefined) return r;
  await tar.x({ file: join(into, file), cwd: into, filter: (path) => path === "package/bin/bun" });
  const bun = join(into, "package", "bin", "bun");
  if (!existsSync(bun)) throw new ReleaseError(`the npm package ${spec} has no bin/bun: it is not a Bun runtime package`);
  chmodSync(bun, 0o755);
  return bun;
}

/** npm's error lines, without the pointer to its debug log. */
function npmTail(r: CommandResult): string {
  const lines = (r.stderr.trim() || r.stdout.trim()).split("\n").filter((l) => !l.includes("A complete log of this run"));
  return lines.slice(-4).map((l) => `  ${l}`).join("\n") || `  (npm exited ${r.code ?? r.signal} without a message)`;
}

function packedFile(json: string): string | undefined {
  try {
    const out = JSON.parse(json) as { filename?: string }[];
    return out[0]?.filename;
  } catch {
    return undefined;
  }
}
