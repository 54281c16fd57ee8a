// Owns how a zod validation failure reads to a user: one line naming where the first problem is
// (`config.toml: rules[2].when.arg: expected string`), and when schemas are built: on first use, since
// building them costs start-up time (~60 µs each) that a run without the file they check never needs.
// Does not validate anything itself.
import type { z } from "zod";

/** Builds a schema the first time it is asked for, then returns the same one. */
export function lazySchema<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

export function describeIssue(error: z.ZodError, prefix: string): string {
  const issue = error.issues[0]!;
  const path = issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
  return `${prefix}${path}: ${issue.message}`;
}
