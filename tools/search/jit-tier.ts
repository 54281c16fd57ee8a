// Owns which of the shims' functions JavaScriptCore never compiles with its top tier (FTL): those run once
// per walked entry, read file or printed line. A shim's run is short, and on a machine with few cores the
// top tier's compiles (tens of milliseconds each for the walk's) compete with the search for the same
// cores and cost more than the faster code saves; the tier below still optimises them.
// Under another runtime (`deno run main.ts`) there is no such control and this does nothing.
// Does not decide what is hot: each module names its own per-entry functions. Never pins a shared builtin
// (node:fs's readdirSync/openSync/readSync/closeSync were pinned once): a pin is process-wide, and side by
// side (builds with and without, the rg benchmark's rows, 15 runs each) those four showed no gain beyond
// noise, while the module pins together are worth 8–28% on the large-tree rows.

type NoFtl = (f: (...args: unknown[]) => unknown) => unknown;

const noFTL: NoFtl | undefined = (globalThis as { Bun?: unknown }).Bun
  ? (process.getBuiltinModule("bun:jsc") as { noFTL?: NoFtl } | undefined)?.noFTL
  : undefined;

/** Keeps each function below the top tier in this thread (each worker thread marks its own copies). */
export function belowTopTier(...fns: readonly ((...args: never[]) => unknown)[]): void {
  if (!noFTL) return;
  for (const f of fns) noFTL(f as (...args: unknown[]) => unknown);
}
