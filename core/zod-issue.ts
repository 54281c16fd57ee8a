// Owns zod's place in a run: it is imported only when something is validated (importing it costs
// ~5 ms and building a schema ~0.1 ms, which a run without a config file, a tool call or declared
// servers never needs), schemas are built on first use, and a validation failure reads as one line
// naming where the first problem is (`config.toml: rules[2].when.arg: expected string`).
// Does not validate anything itself.
import type { z } from "zod";

export type Zod = typeof z;

let loading: Promise<Zod> | undefined;

/** zod, imported the first time anything needs it. */
export function loadZod(): Promise<Zod> {
  return (loading ??= import("zod").then((m) => m.z));
}

/** A schema built (zod loaded) the first time it is asked for; later calls give the same one. */
export function lazySchema<T>(build: (z: Zod) => T): () => Promise<T> {
  let built: Promise<T> | undefined;
  return () => (built ??= loadZod().then(build));
}

/** The schema a lazySchema getter gives. */
export type SchemaOf<L extends () => Promise<unknown>> = Awaited<ReturnType<L>>;

/** Where the first problem is and what it is; an unknown key's place ends with the key, and it reads "unknown key". */
export function firstIssue(error: z.ZodError): { path: PropertyKey[]; what: string } {
  const issue = error.issues[0]!;
  if (issue.code === "unrecognized_keys") return { path: [...issue.path, issue.keys[0]!], what: "unknown key" };
  return { path: issue.path, what: issue.message };
}

/** A path as a user writes it in TOML or JSON: `rules[2].when.arg` (no leading dot). */
export function issuePath(path: readonly PropertyKey[], under = ""): string {
  return (under + path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("")).replace(/^\./, "");
}

/** One line for the first problem: `config.toml: rules[2].when.arg: expected string`; `under` is the
 *  path of the validated value inside `where` (e.g. "rules"). */
export function describeIssue(error: z.ZodError, where: string, under = ""): string {
  const { path, what } = firstIssue(error);
  const at = issuePath(path, under);
  return at ? `${where}: ${at}: ${what}` : `${where}: ${what}`;
}

/** Every problem with a tool's arguments, in the words an MCP server built on the SDK answers with
 *  (`message at a.b`, one per line), so both ways of serving a tool read alike. */
export function describeToolArgIssues(error: z.ZodError): string {
  return error.issues.map((i) => (i.path.length ? `${i.message} at ${i.path.map(String).join(".")}` : i.message)).join("\n");
}
