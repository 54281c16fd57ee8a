// Owns getting each target's Bun runtime, the program a cross-compiled binary is built on: the npm
// package `@oven/bun-OS-ARCH` at the compiler's own version, fetched with the npm client (so npm's
// cache, registry settings and integrity check apply, and `--offline` works once it is cached), and
// its `bin/bun` extracted. Does not compile anything.
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import * as tar from "tar";
import type { Platform } from "./platforms.ts";
import { ReleaseError } from "./release-error.ts";
import { runCommand, tail } from "./run-command.ts";

const NPM_TIMEOUT_MS = 180_000;

/** Fetches and unpacks every platform's runtime into `dir`; returns platform id → path of its `bun`. */
export async function fetchRuntimes(platforms: readonly Platform[], bunVersion: string, dir: string, offline: boolean): Promise<Map<string, string>> {
  mkdirSync(dir, { recursive: true });
  const got = await Promise.allSettled(platforms.map((p) => fetchRuntime(p, bunVersion, dir, offline)));
  const problems = got.flatMap((r) => (r.status === "rejected" ? [(r.reason as Error).message] : []));
  if (problems.length > 0) throw new ReleaseError(problems.join("\n"));
  return new Map(platforms.map((p, i) => [p.id, (got[i] as PromiseFulfilledResult<string>).value]));
}

async function fetchRuntime(p: Platform, bunVersion: string, dir: string, offline: boolean): Promise<string> {
  const spec = `${p.runtimePackage}@${bunVersion}`;
  const into = join(dir, p.id);
  mkdirSync(into, { recursive: true });
  const r = await runCommand("npm", ["pack", spec, "--json", "--ignore-scripts", offline ? "--offline" : "--prefer-offline", "--pack-destination", into], {
    cwd: into,
    timeoutMs: NPM_TIMEOUT_MS,
  });
  const file = r.code === 0 ? packedFile(r.stdout) : undefined;
  if (file === undefined) {
    throw new ReleaseError(
      `the ${p.bunTarget} runtime (npm package ${spec}) is not available: npm pack failed:\n${tail(r, 3)}\n` +
        `  The release builds the ${p.id} binary on it. Get it from the npm registry: run the release again while the registry ` +
        `is reachable (without --offline), or put it in npm's cache first with \`npm cache add ${spec}\`.`,
    );
  }
  await tar.x({ file: join(into, file), cwd: into, filter: (path) => path === "package/bin/bun" });
  const bun = join(into, "package", "bin", "bun");
  if (!existsSync(bun)) throw new ReleaseError(`the npm package ${spec} has no bin/bun: it is not a Bun runtime package`);
  chmodSync(bun, 0o755);
  return bun;
}

function packedFile(json: string): string | undefined {
  try {
    const out = JSON.parse(json) as { filename?: string }[];
    return out[0]?.filename;
  } catch {
    return undefined;
  }
}
