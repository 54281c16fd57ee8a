// Benchmark: start-up of the compiled binary against `bun main.ts` and the floor (`node -e 0`).
import { existsSync } from "node:fs";
import { compareCommands } from "./harness.ts";

export async function run(): Promise<void> {
  if (!existsSync("dist/tendril")) {
    console.log("\n## start-up: skipped (run `npm run build` first)");
    return;
  }
  compareCommands(
    "start-up: `--version` (ratio against the compiled binary)",
    [
      { name: "dist/tendril --version", cmd: "dist/tendril", args: ["--version"] },
      { name: "bun main.ts --version", cmd: process.execPath, args: ["main.ts", "--version"] },
      { name: "node -e 0 (floor of a JS process)", cmd: "node", args: ["-e", "0"] },
      { name: "/bin/true (floor of any process)", cmd: "/bin/true" },
    ],
    30,
  );
}
