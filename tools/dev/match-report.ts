// Owns the diagnostics for an edit whose old_str does not match exactly once: where the several
// matches are, or which file line comes nearest to old_str (and where a near match diverges).
// Does not edit anything; every scan is linear in the file size.

const MAX_COMPARED_CHARS = 400;
const MAX_LISTED_MATCHES = 10;
const MAX_SHOWN_CHARS = 160;

/** Occurrences of `needle`, overlapping ones included (they make an edit just as ambiguous). */
export function findMatches(hay: string, needle: string, limit: number): number[] {
  const at: number[] = [];
  for (let i = hay.indexOf(needle); i !== -1 && at.length < limit; i = hay.indexOf(needle, i + 1)) at.push(i);
  return at;
}

export function lineNumberAt(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i + 1 < s.length; i++) {
    const g = s.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/** Dice coefficient over character bigrams: 1 for equal strings, 0 for nothing in common. */
export function similarity(a: string, b: string, aGrams: Map<string, number> = bigrams(a)): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  let common = 0;
  const seen = new Map<string, number>();
  for (let i = 0; i + 1 < b.length; i++) {
    const g = b.slice(i, i + 2);
    const used = seen.get(g) ?? 0;
    if (used < (aGrams.get(g) ?? 0)) common++;
    seen.set(g, used + 1);
  }
  return (2 * common) / (a.length - 1 + (b.length - 1));
}

function show(line: string): string {
  const cut = line.length > MAX_SHOWN_CHARS ? line.slice(0, MAX_SHOWN_CHARS) + "…" : line;
  return JSON.stringify(cut);
}

export function describeManyMatches(text: string, indexes: number[], total: number, path: string): string {
  const lines = indexes.slice(0, MAX_LISTED_MATCHES).map((i) => lineNumberAt(text, i));
  const more = total > lines.length ? ", …" : "";
  return (
    `old_str matches ${total}${total >= 1000 ? "+" : ""} times in ${path} (at lines ${lines.join(", ")}${more}); ` +
    "it must match exactly once: include more surrounding lines to make it unique"
  );
}

/** For zero matches: the file line most like old_str's first non-blank line, and where a near match stops. */
export function describeNoMatch(text: string, oldStr: string, path: string): string {
  const fileLines = text.split(/\r?\n/);
  const oldLines = oldStr.split(/\r?\n/);
  const k = oldLines.findIndex((l) => l.trim() !== "");
  const base = `old_str was not found in ${path}`;
  if (k === -1) return `${base} (old_str is only whitespace; include the text around the place to edit)`;
  const anchor = oldLines[k]!.trim().slice(0, MAX_COMPARED_CHARS);
  const grams = bigrams(anchor);
  let best = -1;
  let bestScore = 0;
  for (let i = 0; i < fileLines.length; i++) {
    const line = fileLines[i]!.trim();
    if (line === "") continue;
    const score = similarity(anchor, line.slice(0, MAX_COMPARED_CHARS), grams);
    if (score > bestScore) [best, bestScore] = [i, score];
    if (score === 1) break;
  }
  const advice = "Re-read that part of the file and copy old_str exactly (whitespace and indentation included).";
  if (best === -1 || bestScore < 0.3) return `${base}, and no line resembles old_str's first line ${show(anchor)}. ${advice}`;
  if (bestScore === 1) {
    const diverge = divergence(fileLines, best - k, oldLines);
    if (diverge) return `${base}. ${diverge} ${advice}`;
  }
  const pct = Math.round(bestScore * 100);
  return `${base}. Nearest line ${best + 1} (${pct}% similar to old_str's first line): ${show(fileLines[best]!)}. ${advice}`;
}

/** old_str's lines laid over the file from `start`: names the first line that differs. */
function divergence(fileLines: string[], start: number, oldLines: string[]): string | undefined {
  for (let j = 0; j < oldLines.length; j++) {
    if (start + j < 0) continue;
    const fileLine = fileLines[start + j];
    const oldLine = oldLines[j]!;
    if (fileLine === oldLine) continue;
    if (fileLine === undefined) return `old_str runs past the end of the file at its line ${j + 1}.`;
    const what = fileLine.trim() === oldLine.trim() ? " (they differ only in whitespace)" : "";
    const span = j === 1 ? `old_str line 1 matches file line ${start + 1}` : `old_str lines 1–${j} match the file from line ${start + 1}`;
    const lead = j > 0 ? `${span}, but ` : "";
    return (
      `${lead}old_str line ${j + 1} differs from file line ${start + j + 1}${what}: ` +
      `file has ${show(fileLine)}, old_str has ${show(oldLine)}.`
    );
  }
  return undefined;
}
