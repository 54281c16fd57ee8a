// Writes tools/dev/input-schemas.json: the JSON Schema of each dev tool's input, as an MCP server lists it
// (draft-7, input side). The agent lists its in-process tools from this file instead of converting the zod
// schemas at every start; tests/dev-tools-schemas.test.ts fails when it no longer matches them.
// `bun scripts/gen-input-schemas.ts` after changing a schema in tools/dev/.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { inputJsonSchema } from "../core/mcp/tool-definition.ts";
import { shellInput } from "../tools/dev/shell.ts";
import { strReplaceInput } from "../tools/dev/str-replace.ts";
import { hookInput, todoInput } from "../tools/dev/todo.ts";

export const INPUT_SCHEMAS = { shell: shellInput, str_replace: strReplaceInput, todo: todoInput, hook: hookInput };

export function inputSchemasJson(): Record<string, unknown> {
  return Object.fromEntries(Object.entries(INPUT_SCHEMAS).map(([name, schema]) => [name, inputJsonSchema(schema)]));
}

if (import.meta.main) {
  const file = join(import.meta.dir, "..", "tools", "dev", "input-schemas.json");
  writeFileSync(file, JSON.stringify(inputSchemasJson(), null, 2) + "\n");
  console.log(`wrote ${file}`);
}
