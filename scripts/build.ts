// Builds dist/tendril: one self-contained executable (LLM-facing .md texts embedded as text imports; the
// built-in rg's worker thread is a second entry point, embedded beside main).
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";

mkdirSync("dist", { recursive: true });
// ESM with code splitting: the entry chunk holds only what --version and the shims need, and each mode's
// code loads (from bytecode) when its dynamic import runs, so start-up does not grow with the product.
const args = ["build", "--compile", "--format=esm", "--splitting", "--minify", "--sourcemap=none", "main.ts", "tools/search/rg-worker.ts", "--outfile", "dist/tendril"];
if (!process.argv.includes("--no-bytecode")) args.splice(2, 0, "--bytecode");
const r = spawnSync(process.execPath, args, { stdio: "inherit" });
process.exit(r.status ?? 1);
