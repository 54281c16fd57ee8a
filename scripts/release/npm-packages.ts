// Owns the npm packages of a release, each made by `npm pack` from a folder staged here: the launcher
// `tendril-acp` (npm/tendril-acp: the `tendril` command that runs the platform's binary) and one
// `tendril-acp-PLATFORM` per platform (the binary, with `os`/`cpu` so npm installs only the one that fits).
// Does not build the binaries.
import { chmodSync, copyFileSync, cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LAUNCHER_PACKAGE, type Platform, platformPackage } from "./platforms.ts";
import { ReleaseError } from "./release-error.ts";
import { runCommand, tail } from "./run-command.ts";

export interface PackageMeta {
  version: string;
  description: string;
  license: string;
}

const NPM_PACK_TIMEOUT_MS = 180_000;

/** Stages and packs the launcher; returns the tarball's file name in `out`. */
export async function packLauncher(root: string, stage: string, out: string, meta: PackageMeta, platforms: readonly Platform[]): Promise<string> {
  const dir = join(stage, LAUNCHER_PACKAGE);
  cpSync(join(root, "npm", LAUNCHER_PACKAGE), dir, { recursive: true });
  copyFileSync(join(root, "LICENSE"), join(dir, "LICENSE"));
  chmodSync(join(dir, "bin", "tendril.js"), 0o755);
  writeManifest(dir, {
    name: LAUNCHER_PACKAGE,
    version: meta.version,
    description: meta.description,
    license: meta.license,
    bin: { tendril: "bin/tendril.js" },
    files: ["bin/tendril.js"],
    engines: { node: ">=18" },
    os: ["linux", "darwin"],
    optionalDependencies: Object.fromEntries(platforms.map((p) => [platformPackage(p), meta.version])),
  });
  return pack(dir, out);
}

/** Stages and packs one platform's package around its built binary; returns the tarball's file name. */
export async function packPlatform(binary: string, root: string, stage: string, out: string, meta: PackageMeta, p: Platform): Promise<string> {
  const name = platformPackage(p);
  const dir = join(stage, name);
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(binary, join(dir, "bin", "tendril"));
  chmodSync(join(dir, "bin", "tendril"), 0o755);
  copyFileSync(join(root, "LICENSE"), join(dir, "LICENSE"));
  writeFileSync(
    join(dir, "README.md"),
    `# ${name}\n\nThe Tendril binary for ${p.id} (\`bin/tendril\`). Install \`${LAUNCHER_PACKAGE}\`, which picks this package on ${p.id} and puts \`tendril\` on PATH.\n`,
  );
  // No `bin` here: the launcher owns the `tendril` command, and two packages may not both claim it.
  writeManifest(dir, { name, version: meta.version, description: `${meta.description} (${p.id} binary)`, license: meta.license, os: [p.os], cpu: [p.cpu], files: ["bin/tendril"] });
  return pack(dir, out);
}

function writeManifest(dir: string, manifest: Record<string, unknown>): void {
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
}

async function pack(dir: string, out: string): Promise<string> {
  // The folder is named, not implied by the working directory: under `npm run`, npm_config_local_prefix points at the repository.
  const r = await runCommand("npm", ["pack", dir, "--json", "--ignore-scripts", "--pack-destination", out], { cwd: dir, timeoutMs: NPM_PACK_TIMEOUT_MS });
  let file: string | undefined;
  try {
    file = (JSON.parse(r.stdout) as { filename?: string }[])[0]?.filename;
  } catch {
    file = undefined;
  }
  if (r.code !== 0 || file === undefined) throw new ReleaseError(`npm pack of ${dir} failed:\n${tail(r)}`);
  return file;
}
