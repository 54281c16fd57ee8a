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

export function describeIssue(error: z.ZodError, prefix: string): string {
  const issue = error.issues[0]!;
  const path = issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
  return `${prefix}${path}: ${issue.message}`;
}
