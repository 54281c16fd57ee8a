// Owns the unified diff an edit answers with, computed over the lines around the change only: a
// one-line edit of a 9 MiB file diffs a few lines, not the file, so the agent's event loop (and a
// session/cancel waiting on it) is never held up by the size of the file.
import { formatPatch, structuredPatch } from "diff";

const CONTEXT = 3;

/** Where the window starts: the line `CONTEXT` lines above the one holding `at`; and its line number. */
function windowStart(text: string, at: number): { index: number; line: number } {
  let index = at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
  for (let n = 0; n < CONTEXT && index > 0; n++) index = index < 2 ? 0 : text.lastIndexOf("\n", index - 2) + 1;
  let line = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return { index, line };
}

/** Where the window ends: just past the line `CONTEXT` lines below the one holding `end` (the first kept character). */
function windowEnd(text: string, end: number): number {
  let nl = text.indexOf("\n", end);
  for (let n = 0; n < CONTEXT && nl !== -1; n++) nl = text.indexOf("\n", nl + 1);
  return nl === -1 ? text.length : nl + 1;
}

/**
 * The patch of replacing `oldLen` characters at `at` in `before` with `newStr`: headers and hunk
 * line numbers as a diff of the whole file would give them.
 */
export function editPatch(name: string, before: string, at: number, oldLen: number, newStr: string): string {
  const start = windowStart(before, at);
  const end = windowEnd(before, at + oldLen);
  const oldWindow = before.slice(start.index, end);
  const newWindow = before.slice(start.index, at) + newStr + before.slice(at + oldLen, end);
  const patch = structuredPatch(name, name, oldWindow, newWindow, "", "", { context: CONTEXT });
  for (const h of patch.hunks) {
    h.oldStart += start.line;
    h.newStart += start.line;
  }
  return formatPatch(patch);
}
