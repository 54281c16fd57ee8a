// Writes tools/dev/input-schemas.json: the JSON Schema of each dev tool's input, as an MCP server lists it
// (draft-7, input side). The agent lists its in-process tools from this file instead of converting the zod
// schemas at every start; tests/dev-tools-schemas.test.ts fails when it no longer matches them.
// `bun scripts/gen-input-schemas.ts` after changing a schema in tools/dev/.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { noInput } from "../core/mcp/tool-definition.ts";
import { inputJsonSchema } from "../core/mcp/tool-serving.ts";
import { shellInput, shellKillInput, shellReadInput, shellWriteInput } from "../tools/dev/shell.ts";
import { strReplaceInput } from "../tools/dev/str-replace.ts";
import { todoInput } from "../tools/dev/todo.ts";

export const INPUT_SCHEMAS = { shell: shellInput, shell_read: shellReadInput, shell_write: shellWriteInput, shell_kill: shellKillInput, str_replace: strReplaceInput, todo: todoInput, hook: noInput };

export async function inputSchemasJson(): Promise<Record<string, unknown>> {
  const entries = Object.entries(INPUT_SCHEMAS).map(async ([name, schema]) => [name, await inputJsonSchema(await schema())] as const);
  return Object.fromEntries(await Promise.all(entries));
}

if (import.meta.main) {
  const file = join(import.meta.dir, "..", "tools", "dev", "input-schemas.json");
  writeFileSync(file, JSON.stringify(await inputSchemasJson(), null, 2) + "\n");
  console.log(`wrote ${file}`);
}
