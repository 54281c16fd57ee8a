// README is a contract too: its limits table must match core/limits.ts, and its two set-up commands must exist.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { formatLimit, LIMIT_SPECS, type LimitName } from "../core/limits.ts";

const readme = readFileSync(join(import.meta.dir, "..", "README.md"), "utf8");

test("every limit is in README's table with its default", () => {
  for (const name of Object.keys(LIMIT_SPECS) as LimitName[]) {
    expect(readme).toContain(`| \`${name}\` | ${formatLimit(name)} |`);
  }
});

test("README names the build-and-run command and the test command that CI runs", () => {
  expect(readme).toContain("npm ci && npm run build && npm run demo");
  expect(readme).toContain("npm ci && npm run check && npm run check:release");
  const ci = readFileSync(join(import.meta.dir, "..", ".ci", "run"), "utf8");
  expect(ci).toContain("\nnpm run check && npm run check:release\n");
  // both are package scripts, and the release build's test is in the second only
  const scripts = (JSON.parse(readFileSync(join(import.meta.dir, "..", "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  expect(scripts.check).toContain("bun scripts/test.ts");
  expect(scripts["check:release"]).toBe("bun scripts/test.ts --release");
});
