// Benchmark: start-up of the compiled binary against `bun main.ts` and the floor (`node -e 0`).
import { existsSync } from "node:fs";
import { BUILT, buildLabel, compareCommands, type Row } from "./harness.ts";

/** `--version` of the binary, `bun main.ts`, `node -e 0` and `/bin/true`, interleaved `runs` times. */
export function measureStartup(runs = 30, bin = BUILT): { tendril: Row; node: Row } {
  const [tendril, , node] = compareCommands(
    "start-up: `--version` (ratio against the compiled binary)",
    [
      { name: `${buildLabel(bin)} --version`, cmd: bin, args: ["--version"] },
      { name: "bun main.ts --version", cmd: process.execPath, args: ["main.ts", "--version"] },
      { name: "node -e 0 (floor of a JS process)", cmd: "node", args: ["-e", "0"] },
      { name: "/bin/true (floor of any process)", cmd: "/bin/true" },
    ],
    runs,
  );
  return { tendril: tendril!, node: node! };
}

export async function run(): Promise<void> {
  if (!existsSync(BUILT)) {
    console.log("\n## start-up: skipped (run `npm run build` first)");
    return;
  }
  measureStartup();
}
