// Owns the `get_rust_crate_source` tool: its input schema, description, server instructions (both .md
// beside this file), the reply text (the checkout path and its top-level entries, bounded), and the
// definition both `--mcp` and the research proxy serve. The MCP wiring is in cli/.
import { readdir } from "node:fs/promises";
import type { z } from "zod";
import { defineTool, type ToolDefinition } from "../../core/mcp/tool-definition.ts";
import instructions from "./crate-sources-instructions.md" with { type: "text" };
import description from "./get-rust-crate-source.md" with { type: "text" };
import { parseRange } from "./crate-spec.ts";
import type { CrateFetcher, CrateResult } from "./fetch-crate.ts";
import { lazySchema, type SchemaOf } from "../../core/zod-issue.ts";

export const crateSourceDescription = description.trim();
export const crateSourceInstructions = instructions.trim();

export const crateSourceInput = lazySchema((z) =>
  z.object({
    crate_name: z.string().describe("the crate's name, e.g. serde"),
    version: z.string().optional().describe("a semver range or exact version; default: Cargo.lock's pin, else the newest stable"),
  }),
);

/** The `NAME[@RANGE]` a call means; throws a usage CrateError for a bad range. */
export function crateSourceSpec(args: z.infer<SchemaOf<typeof crateSourceInput>>): string {
  if (args.version === undefined || args.version.trim() === "") return args.crate_name;
  parseRange(args.version);
  return `${args.crate_name}@${args.version}`;
}

/** `PATH` and the top-level entries (folders end in `/`), cut at `maxBytes` with a marker. */
export async function describeCheckout(found: CrateResult, maxBytes: number): Promise<{ text: string; files: string[] }> {
  const entries = await readdir(found.checkout_path, { withFileTypes: true });
  const files = entries
    .filter((e) => e.name !== ".cargo-ok")
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort();
  let text = `${found.crate_name} ${found.version} is at ${found.checkout_path}\n(${found.message})\n\nTop-level entries:\n`;
  for (const [i, f] of files.entries()) {
    if (text.length + f.length + 1 > maxBytes) {
      text += `… ${files.length - i} more entries not shown\n`;
      break;
    }
    text += `${f}\n`;
  }
  return { text, files };
}

/** The tool; `newFetcher` is called per call (a fetcher remembers index answers, and failures, for its lifetime). */
export function crateSourceTool(newFetcher: () => CrateFetcher, maxResultBytes: number): ToolDefinition {
  return defineTool({
    name: "get_rust_crate_source",
    title: "Rust crate source",
    description: crateSourceDescription,
    inputSchema: crateSourceInput,
    // It only fills a cache outside the workspace, so agents need not ask before using it.
    annotations: { readOnlyHint: true, openWorldHint: true },
    run: async (args, signal) => {
      const found = await newFetcher().fetch(crateSourceSpec(args), signal);
      const { text, files } = await describeCheckout(found, maxResultBytes);
      return { text, structured: { ...found, files } };
    },
  });
}
