// README and its docs are a contract too: the limits table (docs/configuration.md) must match core/limits.ts,
// README's two set-up commands must exist, and README stays a front door.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { formatLimit, LIMIT_SPECS, type LimitName } from "../core/limits.ts";

const ROOT = join(import.meta.dir, "..");
const readme = readFileSync(join(ROOT, "README.md"), "utf8");

test("every limit is in the limits table of docs/configuration.md with its default", () => {
  const page = readFileSync(join(ROOT, "docs", "configuration.md"), "utf8");
  const at = page.indexOf("\n## Limits\n");
  expect(at).toBeGreaterThan(0); // the page has its Limits section, and the rows are looked for there
  const table = page.slice(at);
  const names = Object.keys(LIMIT_SPECS) as LimitName[];
  expect(names.length).toBeGreaterThan(0);
  for (const name of names) expect(table).toContain(`| \`${name}\` | ${formatLimit(name)} |`);
});

test("README is a front door: at most 400 lines, linking the limits table", () => {
  expect(readme.split("\n").length).toBeLessThanOrEqual(400);
  expect(readme).toContain("](docs/configuration.md#limits)");
});

test("README names the build-and-run command and the test command that CI runs", () => {
  expect(readme).toContain("npm ci && npm run build && npm run demo");
  expect(readme).toContain("npm ci && npm run check && npm run check:release");
  const ci = readFileSync(join(ROOT, ".ci", "run"), "utf8");
  expect(ci).toContain("\nnpm run check && npm run check:release\n");
  // both are package scripts, and the release build's test is in the second only
  const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  expect(scripts.check).toContain("bun scripts/test.ts");
  expect(scripts["check:release"]).toBe("bun scripts/test.ts --release");
});
