// Owns the list of released platforms and every name each one goes by: ours (archive and npm package
// suffix), Bun's compile target and its runtime's npm package, npm's os/cpu, and the ACP Registry's id.
// Windows is deliberately absent: Tendril's process model is POSIX (process groups, signals).

export interface Platform {
  /** `linux-x64`: archive `tendril-VERSION-linux-x64.tar.gz`, npm package `tendril-acp-linux-x64`. */
  id: string;
  /** npm's `os` and `cpu` (Node's process.platform and process.arch). */
  os: "linux" | "darwin";
  cpu: "x64" | "arm64";
  /** `bun build --target`. */
  bunTarget: string;
  /** The npm package holding that target's Bun runtime (`bin/bun`), at the compiler's version. */
  runtimePackage: string;
  /** The ACP Registry's platform key (its FORMAT.md). */
  registryId: string;
}

export const PLATFORMS: readonly Platform[] = [
  { id: "linux-x64", os: "linux", cpu: "x64", bunTarget: "bun-linux-x64", runtimePackage: "@oven/bun-linux-x64", registryId: "linux-x86_64" },
  { id: "linux-arm64", os: "linux", cpu: "arm64", bunTarget: "bun-linux-arm64", runtimePackage: "@oven/bun-linux-aarch64", registryId: "linux-aarch64" },
  { id: "darwin-x64", os: "darwin", cpu: "x64", bunTarget: "bun-darwin-x64", runtimePackage: "@oven/bun-darwin-x64", registryId: "darwin-x86_64" },
  { id: "darwin-arm64", os: "darwin", cpu: "arm64", bunTarget: "bun-darwin-arm64", runtimePackage: "@oven/bun-darwin-aarch64", registryId: "darwin-aarch64" },
];

/** The released platform this process runs on, if any (its binary is the one the release can run). */
export function hostPlatform(): Platform | undefined {
  return PLATFORMS.find((p) => p.os === process.platform && p.cpu === process.arch);
}

export function archiveName(version: string, p: Platform): string {
  return `tendril-${version}-${p.id}.tar.gz`;
}

export const LAUNCHER_PACKAGE = "tendril-acp";

export function platformPackage(p: Platform): string {
  return `${LAUNCHER_PACKAGE}-${p.id}`;
}
