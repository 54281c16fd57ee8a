// Owns how the binary is compiled: the one `bun build --compile` argument list that `npm run build`
// (dist/tendril for this machine) and `npm run release` (one binary per platform) both use, so a
// released binary is built exactly as the tested one is. Does not run Bun nor choose where output goes.

/** The entry points: main, and the built-in rg's worker thread (embedded beside main). */
export const ENTRY_POINTS = ["main.ts", "tools/search/rg-worker.ts"] as const;

export interface CompileOptions {
  outfile: string;
  /** Bun's `--target` (`bun-darwin-arm64`, …); undefined builds for this machine. */
  target?: string;
  /** The target's Bun runtime on disk (`--compile-executable-path`), so Bun downloads nothing itself. */
  runtime?: string;
  /** Precompiled bytecode: faster start-up; off only to debug the bundle. */
  bytecode: boolean;
}

export function compileArgs(o: CompileOptions): string[] {
  // ESM with code splitting: the entry chunk holds only what --version and the shims need, and each
  // mode's code loads (from bytecode) when its dynamic import runs, so start-up does not grow with the
  // product. A compiled Bun binary would read `.env` and `bunfig.toml` from whatever directory it runs
  // in: a repository could then set Tendril's variables or preload code into every `rg` an agent runs.
  const noAutoload = ["--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig"];
  return [
    "build",
    "--compile",
    ...(o.bytecode ? ["--bytecode"] : []),
    ...noAutoload,
    "--format=esm",
    "--splitting",
    "--minify",
    "--sourcemap=none",
    ...(o.target ? [`--target=${o.target}`] : []),
    ...(o.runtime ? ["--compile-executable-path", o.runtime] : []),
    ...ENTRY_POINTS,
    "--outfile",
    o.outfile,
  ];
}
