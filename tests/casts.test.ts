import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

/** Every `as unknown as` of the product (cli/, core/, tools/, main.ts; not tests), as `file:line`, and
 *  those with no comment on their line or the line above (a function's doc counts for its one line). */
function casts(): { all: string[]; unexplained: string[] } {
  const all: string[] = [];
  const unexplained: string[] = [];
  const files = ["main.ts", ...["cli", "core", "tools"].flatMap((d) => readdirSync(join(ROOT, d), { recursive: true }).map((f) => join(d, String(f))))];
  for (const rel of files.filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))) {
    const lines = readFileSync(join(ROOT, rel), "utf8").split("\n");
    lines.forEach((line, i) => {
      if (!line.includes("as unknown as")) return;
      all.push(`${rel}:${i + 1}`);
      const before = lines[i - 1]?.trim() ?? "";
      const doc = before.startsWith("function ") && /^\s*\*\//.test(lines[i - 2] ?? "");
      if (!line.includes("//") && !before.startsWith("//") && !doc) unexplained.push(`${rel}:${i + 1}`);
    });
  }
  return { all, unexplained };
}

test("as-unknown-as casts: at most 10 in the product, and each one says why beside it", () => {
  const { all, unexplained } = casts();
  expect(all.length).toBeLessThanOrEqual(10);
  expect(unexplained).toEqual([]);
});
