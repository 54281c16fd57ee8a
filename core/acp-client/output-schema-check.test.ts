// The schema check and the problem wording of --output-schema, against ajv's strict compile (the check
// this one replaced): the same schemas refused, the same documents accepted, the same words, except
// where listed and why.
import { describe, expect, test } from "bun:test";
import Ajv7 from "ajv";
import Ajv2019 from "ajv/dist/2019";
import Ajv2020 from "ajv/dist/2020";
import type { ErrorObject } from "ajv";
import addFormats from "ajv-formats";
import { loadOutputSchema } from "./output-schema.ts";

const D7 = "http://json-schema.org/draft-07/schema#";
const D2019 = "https://json-schema.org/draft/2019-09/schema";

/** ajv as the check before this one set it up, one instance per draft. */
const ajvs = new Map<string, InstanceType<typeof Ajv7>>();
function ajvFor(schema: unknown) {
  const declared = typeof schema === "object" && schema !== null ? (schema as { $schema?: string }).$schema : undefined;
  const key = declared === D7 ? D7 : declared === D2019 ? D2019 : "2020-12";
  if (!ajvs.has(key)) {
    const Ajv = key === D7 ? Ajv7 : key === D2019 ? Ajv2019 : Ajv2020;
    const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictTuples: false, logger: false });
    addFormats(ajv);
    ajvs.set(key, ajv);
  }
  return ajvs.get(key)!;
}

async function refusal(schema: unknown): Promise<string | undefined> {
  try {
    await loadOutputSchema(JSON.stringify(schema), "s.json");
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

describe("which schemas are refused", () => {
  const same: unknown[] = [
    true, false, {}, { type: "string" }, { type: ["string", "null"] }, { type: [] }, { type: ["string", "string"] }, { type: "strin" }, { type: 3 },
    { minLength: -1 }, { minLength: 1.5 }, { minLength: "2" }, { multipleOf: 0 }, { multipleOf: 0.5 }, { minimum: "1" },
    { required: ["a", "a"] }, { required: "a" }, { required: [] }, { enum: [] }, { enum: [1, "a", null] }, { enum: 1 }, { const: null },
    { properties: { a: 1 } }, { properties: { a: { type: "x" } } }, { properties: [] }, { additionalProperties: { type: "integer" } }, { additionalProperties: 1 },
    { pattern: "[" }, { pattern: "^a+$" }, { patternProperties: { "[": {} } }, { patternProperties: { "^x": { type: "string" } } },
    { allOf: [] }, { anyOf: [{}, true] }, { oneOf: {} }, { not: [] }, { not: { nmae: 1 } }, { if: { type: "string" }, then: { minLength: 1 }, else: false },
    { then: {} }, { else: {} }, { if: {} }, { minContains: 1 }, { maxContains: 1 }, { minContains: 1, contains: { type: "string" } },
    { format: "date-time" }, { format: "email" }, { format: "colour" }, { format: 3 },
    { $defs: { a: { type: "string" } }, $ref: "#/$defs/a" }, { $ref: "#/$defs/none" }, { $ref: "#" }, { $ref: "https://example.com/x.json" },
    { definitions: { a: {} }, $ref: "#/definitions/a" }, { $id: "https://example.com/s.json", $defs: { a: {} }, properties: { x: { $ref: "#/$defs/a" } } },
    { $ref: "#/properties/a", properties: { a: {} } }, { $ref: "#/$defs/a%20b", $defs: { "a b": {} } }, { $ref: "#/$defs/a~1b", $defs: { "a/b": {} } },
    { prefixItems: [{ type: "string" }], items: { type: "integer" } }, { items: [{ type: "string" }] }, { items: {}, additionalItems: {} },
    { unevaluatedProperties: false, properties: { a: {} } }, { dependentRequired: { a: ["b"] } }, { dependentRequired: { a: "b" } }, { dependencies: { a: ["b"] } },
    { title: "t", description: "d", default: 1, examples: [1], deprecated: true, readOnly: false, $comment: "c" }, { examples: 1 },
    { contentMediaType: "application/json", contentEncoding: "base64" }, { name: "x" }, { properties: { a: { nmae: 1 } } }, { uniqueItems: "yes" },
    { propertyNames: { pattern: "^[a-z]+$" } }, { $vocabulary: {} },
    { $schema: D7, items: [{ type: "string" }], additionalItems: false }, { $schema: D7, additionalItems: false }, { $schema: D7, prefixItems: [] },
    { $schema: D7, $defs: { a: {} } }, { $schema: D7, unevaluatedProperties: false }, { $schema: D7, exclusiveMinimum: true },
    { $schema: D7, definitions: { a: { type: "string" } }, $ref: "#/definitions/a", minLength: 2 }, { $schema: D7, definitions: { a: { $id: "#foo" } }, $ref: "#foo" },
    { $schema: D2019, items: [{}], additionalItems: false, unevaluatedItems: false }, { $schema: D2019, $recursiveAnchor: true, $recursiveRef: "#" },
    { $schema: D2019, prefixItems: [{}] }, { $schema: D2019, items: {}, additionalItems: false },
  ];
  test("as ajv's strict compile refused them", async () => {
    const differ: string[] = [];
    for (const schema of same) {
      let ajvRefused = false;
      try {
        ajvFor(schema).compile(structuredClone(schema) as object);
      } catch {
        ajvRefused = true;
      }
      const why = await refusal(schema);
      if ((why !== undefined) !== ajvRefused) differ.push(`${JSON.stringify(schema)}: ajv ${ajvRefused ? "refused" : "accepted"}, now ${why ?? "accepted"}`);
    }
    expect(differ).toEqual([]);
  });

  test("where they differ: what the draft allows is accepted; $dynamicRef is refused, not half-done", async () => {
    // ajv's strict mode did not know $anchor and wanted `required` names declared in `properties`.
    expect(await refusal({ $defs: { a: { $anchor: "foo", type: "string" } }, $ref: "#foo" })).toBeUndefined();
    expect(await refusal({ dependentSchemas: { a: { required: ["b"] } } })).toBeUndefined();
    // The validator has no dynamic scope for $dynamicRef: refused with the way out.
    expect(await refusal({ $dynamicRef: "#meta" })).toBe("s.json is not a JSON Schema this validator accepts: $dynamicRef is not supported by this validator; use $ref");
  });

  test("each refusal names the problem and where it is", async () => {
    expect(await refusal({ properties: { a: { minLength: -1 } } })).toBe('s.json is not a JSON Schema this validator accepts: minLength must be a non-negative integer: -1 at path "#/properties/a"');
    expect(await refusal({ properties: { a: { nmae: 1 } } })).toBe('s.json is not a JSON Schema this validator accepts: strict mode: unknown keyword: "nmae" at path "#/properties/a"');
    expect(await refusal({ items: { $ref: "#/$defs/none" } })).toBe('s.json is not a JSON Schema this validator accepts: can\'t resolve reference #/$defs/none at path "#/items"');
    expect(await refusal({ pattern: "(" })).toStartWith('s.json is not a JSON Schema this validator accepts: pattern "(" is not a regular expression (');
    expect(await refusal({ then: { required: ["a"] } })).toBe('s.json is not a JSON Schema this validator accepts: strict mode: "then" without "if" is ignored');
    expect(await refusal({ $defs: { a: { $ref: "http://[x" } } })).toBe('s.json is not a JSON Schema this validator accepts: $ref "http://[x" is not a URI reference at path "#/$defs/a"');
    expect(await refusal({ $defs: { a: { $id: "x.json" }, b: { $id: "x.json" } } })).toBe("s.json is not a JSON Schema this validator accepts: two subschemas have the same $id");
    expect(await refusal({ format: "int32" })).toStartWith('s.json is not a JSON Schema this validator accepts: unknown format "int32" at path "#"; the formats checked are date, time, date-time,');
  });

  test("a schema nested 20,000 deep is refused at once, not a crash nor seconds of work", async () => {
    const nest = (n: number) => JSON.parse(`${'{"not": '.repeat(n)}{}${"}".repeat(n)}`);
    expect(await refusal(nest(100))).toBeUndefined();
    const t0 = performance.now();
    expect(await refusal(nest(20_000))).toBe("s.json is not a JSON Schema this validator accepts: subschemas nest more than 100 deep");
    expect(performance.now() - t0).toBeLessThan(1000); // ~10 ms; without the bound, seconds
  });
});

describe("which documents pass, and the words for those that do not", () => {
  /** ajv's words, as the check that this one replaced put them. */
  function ajvWords(e: ErrorObject): string {
    const where = e.instancePath === "" ? "the document" : e.instancePath;
    const p = e.params as Record<string, unknown>;
    let detail = "";
    if (e.keyword === "additionalProperties") detail = ` (${JSON.stringify(p.additionalProperty)})`;
    else if (e.keyword === "enum") detail = `: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    else if (e.keyword === "const") detail = `: ${JSON.stringify(p.allowedValue)}`;
    return `${where}: ${e.message}${detail}`;
  }
  const cases: [unknown, unknown[]][] = [
    [
      { type: "object", properties: { n: { type: "integer", minimum: 1, maximum: 9, multipleOf: 2 }, s: { type: "string", minLength: 2, maxLength: 3, pattern: "^a" } }, required: ["n", "s"], additionalProperties: false },
      [{}, { n: 0.5, s: "b" }, { n: 10, s: "abcd", x: 1 }, { n: 4, s: "ab" }, { n: 3, s: "ab" }, []],
    ],
    [{ type: "array", items: { type: "string" }, minItems: 2, maxItems: 3 }, [[], ["a", "a"], ["a", "b", "c", "d"], [1, "b"]]],
    [{ anyOf: [{ type: "string" }, { type: "integer" }] }, [1, "a", 1.5]],
    [{ oneOf: [{ minimum: 0 }, { maximum: 10 }] }, [-1, 11]],
    [{ not: { type: "string" } }, [1]],
    [{ if: { properties: { a: { const: 1 } } }, then: { required: ["b"], properties: { b: {} } }, else: { required: ["c"], properties: { c: {} } } }, [{ a: 1 }, { a: 2 }, { a: 1, b: 1 }]],
    [{ enum: [1, "x", null] }, [2, "x"]],
    [{ $defs: { p: { type: "object", properties: { x: { type: "number" } }, required: ["x"] } }, type: "array", items: { $ref: "#/$defs/p" } }, [[{ x: 1 }, { x: "1" }, {}]]],
    [{ properties: { when: { format: "date-time" }, mail: { format: "email" } } }, [{ when: "2026-01-01T00:00:00Z", mail: "a@b.co" }, { when: "yesterday", mail: "nope" }]],
    [{ minProperties: 1, maxProperties: 1 }, [{}, { a: 1, b: 2 }]],
    [{ additionalProperties: { type: "string" } }, [{ a: "x" }, { a: 1 }]],
    [{ type: "object", properties: { "a/b": { type: "string" }, "c d": { type: "string" } } }, [{ "a/b": 1, "c d": 2 }]],
    [{ type: "object", properties: { inner: { type: "object", properties: { v: { const: true } }, additionalProperties: false } }, additionalProperties: false }, [{ inner: { v: false, w: 1 }, z: 2 }]],
    // draft-07: tuple items; the keywords beside $ref apply, as they did with ajv
    [{ $schema: D7, items: [{ type: "string" }, { type: "integer" }] }, [["a", 1], ["a", "b"]]],
    [{ $schema: D7, definitions: { s: { type: "string" } }, $ref: "#/definitions/s", minLength: 2 }, ["ab", "a", 1]],
    // 2019-09: $recursiveRef
    [{ $schema: D2019, $recursiveAnchor: true, type: "object", properties: { kids: { type: "array", items: { $recursiveRef: "#" } }, n: { type: "integer" } } }, [{ kids: [{ n: 1 }, { kids: [{ n: "x" }] }] }]],
  ];
  test("the same verdicts and the same words as ajv", async () => {
    const differ: string[] = [];
    for (const [schema, documents] of cases) {
      const before = ajvFor(schema).compile(structuredClone(schema) as object);
      const now = await loadOutputSchema(JSON.stringify(schema), "s.json");
      for (const doc of documents) {
        const expected = before(structuredClone(doc)) ? [] : before.errors!.map(ajvWords);
        const r = now.check(JSON.stringify(doc));
        const got = r.ok ? [] : r.problems;
        if (JSON.stringify(got) !== JSON.stringify(expected)) differ.push(`${JSON.stringify(schema)} ← ${JSON.stringify(doc)}:\n  ajv ${JSON.stringify(expected)}\n  now ${JSON.stringify(got)}`);
      }
    }
    expect(differ).toEqual([]);
  });

  test("where the words differ, they say more", async () => {
    const problems = async (schema: unknown, doc: unknown) => {
      const r = (await loadOutputSchema(JSON.stringify(schema), "s.json")).check(JSON.stringify(doc));
      return r.ok ? [] : r.problems;
    };
    expect(await problems({ type: ["string", "null"] }, 1)).toEqual(["the document: must be string or null"]);
    expect(await problems({ oneOf: [{ minimum: 0 }, { maximum: 10 }] }, 5)).toEqual(["the document: must match exactly one schema in oneOf (2 matches)"]);
    expect(await problems({ not: { type: "string" } }, "a")).toEqual(['the document: must NOT be valid against the schema in "not"']);
    expect(await problems({ uniqueItems: true }, ["a", "a"])).toEqual(["the document: must NOT have duplicate items (items 0 and 1 are identical)"]);
    expect(await problems({ prefixItems: [{ type: "string" }], items: false }, ["a", 1])).toEqual(["/1: must not be here: the schema allows nothing (false)"]);
    expect(await problems({ contains: { type: "string" } }, [1])).toEqual(['the document: must contain an item that matches "contains"']);
    expect(await problems({ dependentRequired: { a: ["b"] } }, { a: 1 })).toEqual(["the document: must have property b when property a is present"]);
    expect(await problems({ propertyNames: { pattern: "^[a-z]+$" } }, { A: 1 })).toEqual(['the document (property name "A"): must match pattern "^[a-z]+$"']);
  });

  test("a document nested past the stack is a problem, not a crash", async () => {
    const s = await loadOutputSchema('{"type": "array", "items": {"$ref": "#"}}', "s.json");
    expect(s.check("[".repeat(20_000) + "]".repeat(20_000))).toEqual({ ok: false, problems: ["the document nests deeper than 128 levels (MAX_OUTPUT_DOCUMENT_DEPTH)"] });
  });
});
