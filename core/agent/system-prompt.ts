// Owns the default system prompt: the text in system-prompt.md, the MCP servers' instructions, and the
// AGENTS.md files found from the workspace up to $HOME (outermost first, so nearer files read last).
// Does not decide when a custom prompt replaces it (the session does).
import { readFileSync, statSync } from "node:fs";
import { dirname, join, relative, isAbsolute } from "node:path";
import template from "./system-prompt.md" with { type: "text" };

/** AGENTS.md text included in total; a bound on what a workspace can push into every request. */
export const AGENTS_MD_MAX_BYTES = 64 * 1024;
/** Directories walked up from the workspace at most (a cwd outside $HOME stops at the root anyway). */
const MAX_DEPTH = 32;

export interface SystemPromptInput {
  cwd: string;
  /** $HOME; the walk stops there (inclusive). */
  home?: string;
  /** Server `instructions`, by server name. */
  instructions?: Record<string, string>;
}

function isInside(dir: string, root: string): boolean {
  const rel = relative(root, dir);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** AGENTS.md paths from `cwd` up to `home` (or the root when cwd is outside home), outermost first. */
export function findAgentsFiles(cwd: string, home?: string): string[] {
  const found: string[] = [];
  const stopAtHome = home !== undefined && home !== "" && isInside(cwd, home);
  let dir = cwd;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const file = join(dir, "AGENTS.md");
    try {
      if (statSync(file).isFile()) found.push(file);
    } catch {
      // absent or unreadable: nothing to include
    }
    if (stopAtHome && dir === home) break;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return found.reverse();
}

function readBounded(file: string, budget: number): string {
  try {
    const bytes = readFileSync(file);
    if (bytes.length <= budget) return bytes.toString("utf8");
    return bytes.subarray(0, budget).toString("utf8") + `\n[… AGENTS.md truncated at ${budget} bytes …]`;
  } catch {
    return "";
  }
}

export function buildSystemPrompt(input: SystemPromptInput): string {
  let out = template.replaceAll("{{cwd}}", input.cwd).trimEnd();
  for (const [server, text] of Object.entries(input.instructions ?? {})) {
    if (text.trim() !== "") out += `\n\n## Tool server \`${server}\`\n\n${text.trim()}`;
  }
  let budget = AGENTS_MD_MAX_BYTES;
  for (const file of findAgentsFiles(input.cwd, input.home)) {
    if (budget <= 0) break;
    const text = readBounded(file, budget);
    if (text.trim() === "") continue;
    budget -= Buffer.byteLength(text);
    out += `\n\n## Instructions from ${file}\n\n${text.trim()}`;
  }
  return out + "\n";
}
