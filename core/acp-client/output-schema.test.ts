import { describe, expect, test } from "bun:test";
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
