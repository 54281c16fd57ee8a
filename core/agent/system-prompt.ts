// Owns the default system prompt: the text in system-prompt.md, the MCP servers' instructions, and the
// AGENTS.md files found from the workspace up to the repository root or $HOME (outermost first, so
// nearer files read last), skipping any anyone else could have written.
// Does not decide when a custom prompt replaces it (the session does).
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { isInside } from "../path-inside.ts";
import { headBytes, utf8Length } from "../text-bounds.ts";
import template from "./system-prompt.md" with { type: "text" };

/** AGENTS.md text included in total; a bound on what a workspace can push into every request. */
/** Directories walked up from the workspace at most (a cwd outside $HOME stops at the root anyway). */
const MAX_DEPTH = 32;

export interface SystemPromptInput {
  cwd: string;
  /** More workspace roots the session may work in (ACP `additionalDirectories`). */
  additionalDirectories?: readonly string[];
  /** $HOME; the walk stops there (inclusive). */
  home?: string;
  /** Server `instructions`, by server name. */
  instructions?: Record<string, string>;
  /** MAX_AGENTS_MD_BYTES: AGENTS.md text, all files together. */
  maxAgentsBytes: number;
  /** MAX_SERVER_INSTRUCTIONS_BYTES: one server's instructions. */
  maxInstructionsBytes: number;
}

/**
 * AGENTS.md paths from `cwd` up to the repository root (the nearest folder holding `.git`), else up to
 * `home` when cwd is inside it, else cwd's own; outermost first. A file is skipped when its folder or
 * itself is writable by everyone or owned by another user than this one (root aside): anyone could
 * have put it there, and it would steer the agent.
 */
export function findAgentsFiles(cwd: string, home?: string): string[] {
  const found: string[] = [];
  const stopAtHome = home !== undefined && home !== "" && isInside(home, cwd);
  let dir = cwd;
  let bounded = false;
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const file = join(dir, "AGENTS.md");
    if (trustedAgentsFile(dir, file)) found.push(file);
    if (existsSync(join(dir, ".git")) || (stopAtHome && dir === home)) {
      bounded = true;
      break;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  // Neither a repository nor $HOME above: only the workspace's own file.
  if (!bounded) return found.filter((f) => dirname(f) === cwd);
  return found.reverse();
}

/** Whether `file` exists and it and its folder `dir` are this user's (or root's) and not writable by everyone. */
function trustedAgentsFile(dir: string, file: string): boolean {
  const me = process.getuid?.();
  const ok = (path: string, isFile: boolean): boolean => {
    try {
      const st = statSync(path);
      if (isFile ? !st.isFile() : !st.isDirectory()) return false;
      if ((st.mode & 0o002) !== 0) return false;
      return me === undefined || st.uid === me || st.uid === 0;
    } catch {
      return false; // absent or unreadable: nothing to include
    }
  };
  return ok(file, true) && ok(dir, false);
}

/** Cuts text to `max` bytes with a visible marker naming what was cut. */
function clampText(text: string, max: number, what: string): string {
  if (utf8Length(text) <= max) return text;
  return headBytes(text, max) + `\n[… ${what} truncated at ${max} bytes …]`;
}

/** Reads at most `budget` bytes (plus one, to know whether there was more): a huge file costs nothing. */
function readBounded(file: string, budget: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const buf = Buffer.alloc(budget + 1);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return clampText(buf.subarray(0, n).toString("utf8"), budget, "AGENTS.md");
  } catch {
    return "";
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function buildSystemPrompt(input: SystemPromptInput): string {
  // A function replacement: a folder may be named `$&` or `$$`, which a replacement string would expand.
  let out = template.replaceAll("{{cwd}}", () => input.cwd).trimEnd();
  const extra = input.additionalDirectories ?? [];
  if (extra.length > 0) out += `\n\nAdditional workspace roots (absolute paths; edits may go there too):\n${extra.map((d) => `- ${d}`).join("\n")}`;
  for (const [server, text] of Object.entries(input.instructions ?? {})) {
    const clamped = clampText(text.trim(), input.maxInstructionsBytes, `${server} instructions`);
    if (clamped !== "") out += `\n\n## Tool server \`${server}\`\n\n${clamped}`;
  }
  let budget = input.maxAgentsBytes;
  for (const file of findAgentsFiles(input.cwd, input.home)) {
    if (budget <= 0) break;
    const text = readBounded(file, budget);
    if (text.trim() === "") continue;
    budget -= Buffer.byteLength(text);
    out += `\n\n## Instructions from ${file}\n\n${text.trim()}`;
  }
  return out + "\n";
}
