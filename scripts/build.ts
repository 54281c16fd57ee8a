// Builds dist/tendril: one self-contained executable for this machine (LLM-facing .md texts embedded as
// text imports; the built-in rg's worker thread is a second entry point, embedded beside main). The
// argument list is scripts/compile-args.ts's, shared with `npm run release`.
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { compileArgs } from "./compile-args.ts";

mkdirSync("dist", { recursive: true });
const args = compileArgs({ outfile: "dist/tendril", bytecode: !process.argv.includes("--no-bytecode") });
const r = spawnSync(process.execPath, args, { stdio: "inherit" });
process.exit(r.status ?? 1);
