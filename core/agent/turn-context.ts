// Owns the per-turn facts the model is told (SPEC §3.9): the session's mode and today's date, as one
// note at the end of a prompt's user message, only when they differ from what the history last told
// it. The note is part of that message for good, so every request resends it byte-identical; the system
// prompt and earlier messages never change with the mode or the clock (the prompt cache's prefix holds).
// Does not choose the mode (policy) or build the system prompt (system-prompt.ts).
import type { Message, UserPart } from "../llm/types.ts";
import meanings from "./turn-context.md" with { type: "text" };
import { localOffsetMinutes } from "../local-offset.ts";

const MEANING: Record<string, string> = Object.fromEntries(
  meanings
    .trim()
    .split("\n")
    .map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim()]),
);

const NOTE = /^\[Session: (\S+) mode \(.*\); today is (\d{4}-\d{2}-\d{2}(?: \(UTC[+-]\d{2}:\d{2}\))?)\]$/;

/** The user's date where they are (the machine's time zone) and its offset: `2026-12-04 (UTC+01:00)`.
 *  A UTC date is a day off for half the world each evening or morning. */
export function localDate(now: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  // The offset read from the zone file (local-offset.ts), and the date in UTC terms shifted by it: the
  // runtime's own local time would start its time zone database (~10 ms of every prompt).
  const offset = localOffsetMinutes(now);
  const local = new Date(now.getTime() + offset * 60_000);
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(offset);
  return `${local.getUTCFullYear()}-${two(local.getUTCMonth() + 1)}-${two(local.getUTCDate())} (UTC${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)})`;
}

/** The note for a mode and a date (localDate's). */
export function contextNote(mode: string, date: string): string {
  return `[Session: ${mode} mode (${MEANING[mode] ?? "see the tool results"}); today is ${date}]`;
}

/** Whether a text part is such a note (a summary or a title leaves it out). */
export function isContextNote(text: string): boolean {
  return NOTE.test(text);
}

/** The mode and date the history last told the model, if it told any. */
function lastTold(history: readonly Message[]): { mode: string; date: string } | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    if (m.role !== "user") continue;
    for (let j = m.content.length - 1; j >= 0; j--) {
      const p = m.content[j]!;
      const hit = p.type === "text" ? NOTE.exec(p.text) : null;
      if (hit) return { mode: hit[1]!, date: hit[2]! };
    }
  }
  return undefined;
}

/** A prompt's parts, with the note at the end when the mode or the date changed since the model was last told. */
export function withTurnContext(parts: UserPart[], history: readonly Message[], mode: string, now: Date): UserPart[] {
  const date = localDate(now);
  const told = lastTold(history);
  if (told?.mode === mode && told.date === date) return parts;
  return [...parts, { type: "text", text: contextNote(mode, date) }];
}
