// Owns how a zod validation failure reads to a user: one line naming where the first problem is
// (`config.toml: rules[2].when.arg: expected string`). Does not validate anything itself.
import type { z } from "zod";

export function describeIssue(error: z.ZodError, prefix: string): string {
  const issue = error.issues[0]!;
  const path = issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
  return `${prefix}${path}: ${issue.message}`;
}
