// Owns `read_crate_file`, the research session's only way to look at source: a file's numbered lines,
// or a folder's entries, inside a folder `get_rust_crate_source` returned in this research (real paths,
// so no symlink or `..` leads out). Read-only by construction, so a research session needs neither the
// shell nor the edit tool. Does not fetch crates (the source tool does) or search (the model reads).
import { open, readdir, realpath, stat } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { defineTool, type ToolDefinition } from "../mcp/tool-definition.ts";
import { isInside } from "../path-inside.ts";
import { headBytes, utf8Length } from "../text-bounds.ts";
import { lazySchema } from "../zod-issue.ts";
import description from "./read-crate-file.md" with { type: "text" };

export const READ_CRATE_FILE = "read_crate_file";

/** Lines one call shows when it asks for no `limit`. */
const DEFAULT_LINES = 2000;

const readInput = lazySchema((z) =>
  z.object({
    path: z.string().min(1).describe("a file or folder: absolute, or relative to the crate's folder"),
    offset: z.number().int().min(1).optional().describe("the first line to show (1-based); default 1"),
    limit: z.number().int().min(1).optional().describe(`how many lines to show; default ${DEFAULT_LINES}`),
  }),
);

/** The folders a research may read: the checkouts its source tool returned, as real paths. */
export class CrateRoots {
  readonly #roots: string[] = [];

  async add(path: string): Promise<void> {
    const real = await realpath(path);
    if (!this.#roots.includes(real)) this.#roots.push(real);
  }

  get list(): readonly string[] {
    return this.#roots;
  }
}

async function resolveInside(roots: readonly string[], input: string): Promise<string> {
  if (roots.length === 0) throw new Error(`no crate source yet: call get_rust_crate_source first, then read the folder it returns`);
  const asked = isAbsolute(input) ? resolve(input) : resolve(roots.at(-1)!, input);
  const outside = () => new Error(`${input} is outside the crate sources of this research (${roots.join(", ")}); read only inside them`);
  if (!roots.some((r) => isInside(r, asked))) throw outside();
  let real: string;
  try {
    real = await realpath(asked);
  } catch {
    throw new Error(`${input}: no such file or folder`);
  }
  if (!roots.some((r) => isInside(r, real))) throw outside();
  return real;
}

async function listFolder(path: string, maxBytes: number): Promise<string> {
  const entries = (await readdir(path, { withFileTypes: true })).map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
  const text = `${path}:\n${entries.join("\n")}\n`;
  return utf8Length(text) <= maxBytes ? text : `${headBytes(text, maxBytes)}\n[… listing cut at ${maxBytes} bytes …]\n`;
}

async function readLines(path: string, offset: number, limit: number, maxBytes: number, fileMaxBytes: number): Promise<string> {
  const size = (await stat(path)).size;
  if (size > fileMaxBytes) throw new Error(`${path} is ${size} bytes, more than this tool reads (${fileMaxBytes})`);
  const handle = await open(path, "r");
  let text: string;
  try {
    text = (await handle.readFile()).toString("utf8");
  } finally {
    await handle.close();
  }
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const shown = lines.slice(offset - 1, offset - 1 + limit);
  let out = "";
  for (const [i, line] of shown.entries()) {
    const next = `${offset + i}\t${line}\n`;
    if (utf8Length(out) + utf8Length(next) > maxBytes) {
      return `${out}[… cut at ${maxBytes} bytes: read on from line ${offset + i} with offset …]\n`;
    }
    out += next;
  }
  const last = offset - 1 + shown.length;
  return last < lines.length ? `${out}[… ${lines.length - last} more lines: read on with offset ${last + 1} …]\n` : out;
}

/** The tool over `roots`; `maxBytes` bounds one answer (MAX_TOOL_RESULT_BYTES), `fileMaxBytes` one file read. */
export function readCrateFileTool(roots: CrateRoots, maxBytes: number, fileMaxBytes: number): ToolDefinition {
  return defineTool({
    name: READ_CRATE_FILE,
    title: "Read crate source",
    description: description.trim(),
    inputSchema: readInput,
    annotations: { readOnlyHint: true },
    run: async ({ path, offset, limit }) => {
      const real = await resolveInside(roots.list, path);
      const text = (await stat(real)).isDirectory()
        ? await listFolder(real, maxBytes)
        : await readLines(real, offset ?? 1, limit ?? DEFAULT_LINES, maxBytes, fileMaxBytes);
      return { text };
    },
  });
}
