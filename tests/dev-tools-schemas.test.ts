// The dev tools list precomputed JSON Schemas (tools/dev/input-schemas.json) instead of converting their
// zod schemas at every start: this holds the file equal to the conversion, for every tool.
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildDevTools } from "../tools/dev/tool-list.ts";
import { DEFAULT_LIMITS } from "../core/limits.ts";
import { inputJsonSchema } from "../core/mcp/tool-serving.ts";
import { inputSchemasJson } from "../scripts/gen-input-schemas.ts";
const ROOT = join(import.meta.dir, "..");

const REGENERATE = "tools/dev/input-schemas.json is stale: run `bun scripts/gen-input-schemas.ts`";

test("input-schemas.json is what the dev tools' zod schemas convert to", async () => {
  const file = JSON.parse(readFileSync(join(ROOT, "tools", "dev", "input-schemas.json"), "utf8"));
  expect(file, REGENERATE).toEqual(await inputSchemasJson());
});

test("every dev tool lists a precomputed schema equal to its zod schema's conversion", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tendril-schemas-"));
  const dev = await buildDevTools({ root: dir, limits: DEFAULT_LIMITS, cacheDir: dir, env: {} });
  expect(dev.tools.length).toBeGreaterThan(0);
  for (const def of dev.tools) {
    expect(def.listedSchema, `${def.name}: no precomputed schema`).toBeDefined();
    expect(def.listedSchema, `${def.name}: ${REGENERATE}`).toEqual(await inputJsonSchema(await def.inputSchema()));
  }
});
