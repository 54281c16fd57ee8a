// Builds dist/tendril: one self-contained executable (LLM-facing .md texts embedded as text imports; the
// built-in rg's worker thread is a second entry point, embedded beside main).
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";

mkdirSync("dist", { recursive: true });
// ESM with code splitting: the entry chunk holds only what --version and the shims need, and each mode's
// code loads (from bytecode) when its dynamic import runs, so start-up does not grow with the product.
// A compiled Bun binary would read `.env` and `bunfig.toml` from whatever directory it runs in: a
// repository could then set Tendril's variables or preload code into every `rg` an agent runs there.
const noAutoload = ["--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig"];
const args = ["build", "--compile", ...noAutoload, "--format=esm", "--splitting", "--minify", "--sourcemap=none", "main.ts", "tools/search/rg-worker.ts", "--outfile", "dist/tendril"];
if (!process.argv.includes("--no-bytecode")) args.splice(2, 0, "--bytecode");
const r = spawnSync(process.execPath, args, { stdio: "inherit" });
process.exit(r.status ?? 1);
