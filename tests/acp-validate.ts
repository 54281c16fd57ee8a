// Owns checking what an in-memory agent wrote against the SDK's ACP schemas (v1 stable or unstable, v2
// stable and unstable): each session/update, permission request and answer to a schema method, by its
// definition. Answers to extension methods (`_…`) have no definition and are checked by the tests
// themselves. Test-only.
import v1 from "@agentclientprotocol/sdk/schema/v1/schema.json" with { type: "json" };
import v1u from "@agentclientprotocol/sdk/schema/v1/schema.unstable.json" with { type: "json" };
import v2 from "@agentclientprotocol/sdk/schema/v2/schema.json" with { type: "json" };
import v2u from "@agentclientprotocol/sdk/schema/v2/schema.unstable.json" with { type: "json" };
import { schemaAjv } from "./acp-schema-ajv.ts";
import type { MemoryAgent } from "./memory-agent.ts";

type Defs = Record<string, Record<string, unknown>>;
const SCHEMAS = { v1, v1u, v2, v2u } as const;
export type SchemaName = keyof typeof SCHEMAS;

const ajv = schemaAjv();
const responses = new Map<SchemaName, Map<string, string>>();
for (const [name, schema] of Object.entries(SCHEMAS) as [SchemaName, object][]) {
  ajv.addSchema(schema, name);
  const of = new Map<string, string>();
  for (const [def, d] of Object.entries((schema as { $defs: Defs }).$defs)) {
    if (d["x-side"] === "agent" && def.endsWith("Response")) of.set(d["x-method"] as string, def);
  }
  responses.set(name, of);
}

/**
 * The failures of every message in `out` against each schema of `schemas` (empty: all valid).
 * `asked` maps request ids to their methods, so an answer is checked as that method's response.
 */
export function schemaFailures(out: Record<string, any>[], asked: Map<unknown, string>, schemas: SchemaName[]): string[] {
  const failures: string[] = [];
  for (const m of out) {
    for (const schema of schemas) {
      const v2ish = schema.startsWith("v2");
      let def: string | undefined;
      let value: unknown;
      if (m.method === "session/update") [def, value] = [v2ish ? "UpdateSessionNotification" : "SessionNotification", m.params];
      else if (m.method === "session/request_permission") [def, value] = ["RequestPermissionRequest", m.params];
      else if (m.method !== undefined) failures.push(`${schema}: the agent sent ${m.method}, which this check does not know`);
      else if (m.error !== undefined) [def, value] = ["Error", m.error];
      else [def, value] = [responses.get(schema)!.get(asked.get(m.id) ?? ""), m.result];
      if (!def) continue;
      const validate = ajv.getSchema(`${schema}#/$defs/${def}`)!;
      if (!validate(value)) failures.push(`${schema} ${def}: ${JSON.stringify(value).slice(0, 300)}\n  ${ajv.errorsText(validate.errors)}`);
    }
  }
  return failures;
}

let nextAskedId = 1;

/** Sends a request to an in-memory agent, noting its method in `asked` (so schemaFailures checks the
 *  answer as that method's response); its id. */
export function sendAsked(a: MemoryAgent, asked: Map<unknown, string>, method: string, params: Record<string, unknown>): number {
  const id = nextAskedId++;
  asked.set(id, method);
  a.send({ jsonrpc: "2.0", id, method, params });
  return id;
}

/** sendAsked, then the answer. */
export function requestAsked(a: MemoryAgent, asked: Map<unknown, string>, method: string, params: Record<string, unknown>) {
  return a.response(sendAsked(a, asked, method, params));
}
