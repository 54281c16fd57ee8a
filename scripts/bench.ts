// Runs every benchmark side by side with its peer or physical floor and prints medians and ratios.
// `npm run bench [AREA...]` runs only the named areas (file names under scripts/bench/).
import { readdirSync } from "node:fs";

const only = process.argv.slice(2);
const areas = readdirSync(new URL("./bench/", import.meta.url))
  .filter((f) => f.endsWith(".ts") && f !== "harness.ts")
  .map((f) => f.slice(0, -3))
  .filter((a) => only.length === 0 || only.includes(a));
for (const area of areas) {
  const mod = (await import(`./bench/${area}.ts`)) as { run: () => Promise<void> };
  await mod.run();
}
