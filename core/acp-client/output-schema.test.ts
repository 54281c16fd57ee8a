import { describe, expect, test } from "bun:test";
import { DEFAULT_LIMITS } from "../limits.ts";
import { loadOutputSchema, SchemaFileError, takeJson } from "./output-schema.ts";

describe("takeJson", () => {
  test("the whole answer, trimmed", () => {
    expect(takeJson('  {"a": 1}\n')).toEqual({ ok: true, value: { a: 1 } });
    expect(takeJson("42")).toEqual({ ok: true, value: 42 });
  });

  test("else the last closed fenced block, whatever its language tag or fence", () => {
    expect(takeJson('first\n```json\n{"a": 1}\n```\nthen\n~~~\n{"a": 2}\n~~~\n')).toEqual({ ok: true, value: { a: 2 } });
    expect(takeJson('````\n```\n{"a": 3}\n````')).toEqual({ ok: false, problem: expect.stringContaining("last fenced block is not JSON") });
    expect(takeJson('```json\n{"a": 1}\n```\n```\nunclosed')).toEqual({ ok: true, value: { a: 1 } });
  });

  test("no JSON anywhere", () => {
    expect(takeJson("")).toEqual({ ok: false, problem: "the answer is empty: no JSON document" });
    expect(takeJson("looks good to me")).toEqual({ ok: false, problem: "the answer is not JSON, and it has no fenced block holding JSON" });
  });
});

describe("loadOutputSchema", () => {
  test("checks an answer and words every problem for the agent", async () => {
    const s = await loadOutputSchema(JSON.stringify({ type: "object", properties: { n: { type: "integer" }, k: { const: "x" } }, required: ["n"] }), "s.json");
    expect(s.check('{"n": 3}')).toEqual({ ok: true, document: { n: 3 } });
    expect(s.check('{"n": "3", "k": "y"}')).toEqual({ ok: false, problems: ["/n: must be integer", '/k: must be equal to constant: "x"'] });
    expect(s.check("{}")).toEqual({ ok: false, problems: ["the document: must have required property 'n'"] });
    expect(s.retryPrompt(["/n: must be integer"])).toContain("- /n: must be integer");
    expect(s.instruction).toContain('"required": [\n    "n"\n  ]');
  });

  test("at most 20 problems, then how many more", async () => {
    const s = await loadOutputSchema(JSON.stringify({ type: "array", items: { type: "string" } }), "s.json");
    const r = s.check(JSON.stringify(Array.from({ length: 25 }, (_, i) => i)));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems.slice(-2)).toEqual(["/19: must be string", "… and 5 more"]);
  });

  test("true accepts any document; a schema's draft comes from $schema", async () => {
    expect((await loadOutputSchema("true", "s.json")).check("[1]")).toEqual({ ok: true, document: [1] });
    const d2019 = await loadOutputSchema(JSON.stringify({ $schema: "https://json-schema.org/draft/2019-09/schema", type: "string" }), "s.json");
    expect(d2019.check('"x"').ok).toBe(true);
  });

  test("refusals name the file", async () => {
    await expect(loadOutputSchema("null", "s.json")).rejects.toThrow(new SchemaFileError("s.json is not a JSON Schema: a schema is an object (or true/false)"));
    await expect(loadOutputSchema('{"type": "string", "format": "colour"}', "s.json")).rejects.toThrow('s.json is not a JSON Schema this validator accepts: unknown format "colour" at path "#"');
    await expect(loadOutputSchema('{"$ref": "#/$defs/none"}', "s.json")).rejects.toThrow("can't resolve reference #/$defs/none");
  });
});

describe("A13: the document is bounded before it is validated, so --timeout always fires", () => {
  test("A13: an answer over MAX_OUTPUT_DOCUMENT_BYTES is refused unparsed", async () => {
    const s = await loadOutputSchema('{"type": "array"}', "s.json", { ...DEFAULT_LIMITS, MAX_OUTPUT_DOCUMENT_BYTES: 100 });
    expect(s.check(JSON.stringify(Array(40).fill(1)))).toMatchObject({ ok: true });
    expect(s.check(JSON.stringify(Array(60).fill(1)))).toEqual({ ok: false, problems: ["the answer is 121 bytes, over the 100 bytes a document may have (MAX_OUTPUT_DOCUMENT_BYTES)"] });
  });

  test("A13: a document nested past MAX_OUTPUT_DOCUMENT_DEPTH is refused", async () => {
    const s = await loadOutputSchema('{"items": {"$ref": "#"}}', "s.json");
    const nest = (n: number) => "[".repeat(n) + "]".repeat(n);
    expect(s.check(nest(DEFAULT_LIMITS.MAX_OUTPUT_DOCUMENT_DEPTH))).toMatchObject({ ok: true });
    expect(s.check(nest(DEFAULT_LIMITS.MAX_OUTPUT_DOCUMENT_DEPTH + 1))).toEqual({ ok: false, problems: [`the document nests deeper than ${DEFAULT_LIMITS.MAX_OUTPUT_DOCUMENT_DEPTH} levels (MAX_OUTPUT_DOCUMENT_DEPTH)`] });
  });

  test("A13: under uniqueItems, a document with more array items than MAX_OUTPUT_UNIQUE_ITEMS is refused without the pairwise check", async () => {
    const max = DEFAULT_LIMITS.MAX_OUTPUT_UNIQUE_ITEMS;
    const unique = await loadOutputSchema('{"type": "object", "properties": {"ids": {"type": "array", "uniqueItems": true}}}', "s.json");
    const ids = (n: number) => JSON.stringify({ ids: Array.from({ length: n }, (_, i) => i) });
    expect(unique.check(ids(max))).toMatchObject({ ok: true });
    // Unbounded, this check of 8000 items takes seconds on the event loop (quadratic), holding off every timer.
    const t0 = performance.now();
    expect(unique.check(ids(8000))).toEqual({ ok: false, problems: [`the document's arrays hold more than ${max} items, more than uniqueItems is checked for (MAX_OUTPUT_UNIQUE_ITEMS)`] });
    expect(performance.now() - t0).toBeLessThan(1000);
    // Without uniqueItems in the schema, long arrays are fine.
    expect((await loadOutputSchema('{"type": "array"}', "s.json")).check(JSON.stringify(Array.from({ length: 8000 }, (_, i) => i)))).toMatchObject({ ok: true });
  });
});

describe("why the schema is checked by the draft's table, not against the meta-schema", () => {
  test("the validator, given the 2020-12 meta-schema, checks the top level only (it does not follow $dynamicRef); the table refuses the nested mistake", async () => {
    const { Validator } = await import("@cfworker/json-schema");
    const { readFileSync } = await import("node:fs");
    const dir = new URL("../../node_modules/ajv/dist/refs/json-schema-2020-12/", import.meta.url);
    const meta = new Validator(JSON.parse(readFileSync(new URL("schema.json", dir), "utf8")), "2020-12", false);
    for (const part of ["core", "applicator", "unevaluated", "validation", "meta-data", "format-annotation", "content"]) {
      meta.addSchema(JSON.parse(readFileSync(new URL(`meta/${part}.json`, dir), "utf8")));
    }
    expect(meta.validate({ minLength: -1 }).valid).toBe(false);
    const nested = { properties: { a: { minLength: -1 } } };
    expect(meta.validate(nested).valid).toBe(true); // the library's blind spot
    expect(await loadOutputSchema(JSON.stringify(nested), "n.json").catch((e) => e.message)).toBe('n.json is not a JSON Schema this validator accepts: minLength must be a non-negative integer: -1 at path "#/properties/a"');
  });
});
