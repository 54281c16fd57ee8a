// Owns `tendril prompt --output-schema`: the schema file checked (its draft, keywords, values, $refs and
// formats) and interpreted with @cfworker/json-schema (the one module that imports it), the text that
// asks an agent for one JSON document, the document taken from an answer (the whole answer, else its
// last fenced block) and checked, and the problems worded for the agent and the user.
// Does not talk to the agent: client-runner.ts asks and asks again; cli/ reads the file.
import { format as FORMATS, Validator, type OutputUnit, type Schema, type SchemaDraft } from "@cfworker/json-schema";
import instructionTemplate from "./output-schema.md" with { type: "text" };
import retryTemplate from "./output-schema-retry.md" with { type: "text" };

/** The schema file cannot be used: a usage error, reported before any agent starts. */
export class SchemaFileError extends Error {}

export type SchemaCheck = { ok: true; document: unknown } | { ok: false; problems: string[] };

export interface OutputSchema {
  /** Added to the prompt: asks for one document valid against the schema (the schema quoted). */
  readonly instruction: string;
  /** The answer's document, or what is wrong with it (one line each, at most MAX_PROBLEMS). */
  check(answer: string): SchemaCheck;
  /** The follow-up prompt that names the problems. */
  retryPrompt(problems: string[]): string;
}

/** Problems shown to the agent and on stderr; past this, one line says how many more there were. */
const MAX_PROBLEMS = 20;
const MAX_PROBLEM_CHARS = 300;

/** `$schema` → the draft it names; none means 2020-12, the current one. */
const DRAFTS: Record<string, SchemaDraft> = {
  "https://json-schema.org/draft/2020-12/schema": "2020-12",
  "https://json-schema.org/draft/2019-09/schema": "2019-09",
  "https://json-schema.org/draft-07/schema": "7",
};

/** What a keyword's value must be: the rules of each draft's meta-schema, as a table. */
type Kind = "schema" | "schemas" | "schemaMap" | "schemaOrSchemas" | "dependencies" | "stringsMap" | "nonNegInt" | "number" | "positive" | "string" | "strings" | "regex" | "boolean" | "array" | "object" | "any" | "type" | "format" | "recursiveRef";

const COMMON: Record<string, Kind> = {
  $schema: "string", $id: "string", $ref: "string", $comment: "string", $defs: "schemaMap", definitions: "schemaMap",
  title: "string", description: "string", default: "any", examples: "array", readOnly: "boolean", writeOnly: "boolean",
  type: "type", enum: "array", const: "any",
  multipleOf: "positive", maximum: "number", minimum: "number", exclusiveMaximum: "number", exclusiveMinimum: "number",
  maxLength: "nonNegInt", minLength: "nonNegInt", pattern: "regex", format: "format", contentMediaType: "string", contentEncoding: "string",
  maxItems: "nonNegInt", minItems: "nonNegInt", uniqueItems: "boolean", contains: "schema",
  maxProperties: "nonNegInt", minProperties: "nonNegInt", required: "strings", properties: "schemaMap", patternProperties: "schemaMap",
  additionalProperties: "schema", propertyNames: "schema",
  allOf: "schemas", anyOf: "schemas", oneOf: "schemas", not: "schema", if: "schema", then: "schema", else: "schema",
};
const SINCE_2019: Record<string, Kind> = {
  $anchor: "string", $vocabulary: "object", deprecated: "boolean", dependentRequired: "stringsMap", dependentSchemas: "schemaMap",
  unevaluatedItems: "schema", unevaluatedProperties: "schema", minContains: "nonNegInt", maxContains: "nonNegInt", contentSchema: "schema",
};
const KEYWORDS: Record<SchemaDraft, Record<string, Kind>> = {
  "2020-12": { ...COMMON, ...SINCE_2019, prefixItems: "schemas", items: "schema" },
  "2019-09": { ...COMMON, ...SINCE_2019, items: "schemaOrSchemas", additionalItems: "schema", $recursiveRef: "recursiveRef", $recursiveAnchor: "boolean" },
  "7": { ...COMMON, items: "schemaOrSchemas", additionalItems: "schema", dependencies: "dependencies" },
  "4": {},
};
/** Kinds whose value is worded in a refusal ("minLength must be a non-negative integer: -1"). */
const KIND_WORDS: Record<Kind, string> = {
  schema: "a schema (an object or true/false)", schemas: "a non-empty array of schemas", schemaMap: "an object whose values are schemas",
  schemaOrSchemas: "a schema or a non-empty array of schemas", dependencies: "an object whose values are schemas or arrays of unique strings",
  stringsMap: "an object whose values are arrays of unique strings", nonNegInt: "a non-negative integer", number: "a number",
  positive: "a number greater than 0", string: "a string", strings: "an array of unique strings", regex: "a regular expression",
  boolean: "true or false", array: "an array", object: "an object", any: "any value", type: "JSONType or JSONType[]", format: "a string", recursiveRef: '"#"',
};
const TYPES = new Set(["array", "boolean", "integer", "null", "number", "object", "string"]);

function draftOf(schema: unknown, file: string): SchemaDraft {
  const declared = typeof schema === "object" && schema !== null ? (schema as { $schema?: unknown }).$schema : undefined;
  if (declared === undefined) return "2020-12";
  // The drafts name themselves `http://…#`; either scheme, with or without the empty fragment.
  const key = typeof declared === "string" ? declared.replace(/#$/, "").replace(/^http:/, "https:") : "";
  const draft = DRAFTS[key];
  if (!draft) {
    throw new SchemaFileError(`${file}: $schema ${JSON.stringify(declared)} is not a draft this validator knows; use draft 2020-12 (the default), 2019-09 or draft-07`);
  }
  return draft;
}

/** Why a schema is refused (the first problem found); the file name is added by the caller. */
class Refusal extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isSchema = (v: unknown): boolean => typeof v === "boolean" || isObject(v);
const uniqueStrings = (v: unknown): boolean => Array.isArray(v) && v.every((s) => typeof s === "string") && new Set(v).size === v.length;
const at = (path: string): string => (path === "#" ? "" : ` at path "${path}"`);
function shown(v: unknown): string {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}

function compiles(pattern: string): string | undefined {
  try {
    new RegExp(pattern, "u"); // the flag the validator uses
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * Checks one (sub)schema against its draft, as strictly as a user needs: every keyword known to the
 * draft, every value of the kind the meta-schema asks for, every format one the validator checks,
 * every pattern a valid regular expression. `refs` collects the objects that hold a $ref.
 */
function checkSchema(schema: unknown, draft: SchemaDraft, path: string, refs: [Record<string, unknown>, string][]): void {
  if (typeof schema === "boolean") return;
  if (!isObject(schema)) throw new Refusal(`the schema${at(path)} must be an object or true/false: ${shown(schema)}`);
  const known = KEYWORDS[draft];
  for (const [key, value] of Object.entries(schema)) {
    const here = `${path}/${key}`;
    if (key === "$dynamicRef" || key === "$dynamicAnchor") throw new Refusal(`${key}${at(path)} is not supported by this validator; use $ref`);
    const kind = known[key];
    if (kind === undefined) throw new Refusal(`strict mode: unknown keyword: "${key}"${at(path)}`);
    const bad = (): never => {
      throw new Refusal(`${key} must be ${KIND_WORDS[kind]}: ${shown(value)}${at(path)}`);
    };
    switch (kind) {
      case "schema":
        if (!isSchema(value)) bad();
        checkSchema(value, draft, here, refs);
        break;
      case "schemas":
        if (!Array.isArray(value) || value.length === 0 || !value.every(isSchema)) bad();
        (value as unknown[]).forEach((s, i) => checkSchema(s, draft, `${here}/${i}`, refs));
        break;
      case "schemaOrSchemas":
        if (Array.isArray(value)) {
          if (value.length === 0 || !value.every(isSchema)) bad();
          value.forEach((s, i) => checkSchema(s, draft, `${here}/${i}`, refs));
        } else if (isSchema(value)) checkSchema(value, draft, here, refs);
        else bad();
        break;
      case "schemaMap":
        if (!isObject(value) || !Object.values(value).every(isSchema)) bad();
        for (const [name, s] of Object.entries(value as Record<string, unknown>)) {
          if (key === "patternProperties") {
            const why = compiles(name);
            if (why) throw new Refusal(`patternProperties ${JSON.stringify(name)} is not a regular expression (${why})${at(path)}`);
          }
          checkSchema(s, draft, `${here}/${name.replace(/~/g, "~0").replace(/\//g, "~1")}`, refs);
        }
        break;
      case "dependencies":
        if (!isObject(value)) bad();
        for (const [name, d] of Object.entries(value as Record<string, unknown>)) {
          if (isSchema(d)) checkSchema(d, draft, `${here}/${name}`, refs);
          else if (!uniqueStrings(d)) bad();
        }
        break;
      case "stringsMap":
        if (!isObject(value) || !Object.values(value).every(uniqueStrings)) bad();
        break;
      case "nonNegInt":
        if (!Number.isInteger(value) || (value as number) < 0) bad();
        break;
      case "number":
        if (typeof value !== "number") bad();
        break;
      case "positive":
        if (typeof value !== "number" || value <= 0) bad();
        break;
      case "string":
        if (typeof value !== "string") bad();
        if (key === "$ref") refs.push([schema, path]);
        break;
      case "strings":
        if (!uniqueStrings(value)) bad();
        break;
      case "regex": {
        if (typeof value !== "string") bad();
        const why = compiles(value as string);
        if (why) throw new Refusal(`pattern ${JSON.stringify(value)} is not a regular expression (${why})${at(path)}`);
        break;
      }
      case "boolean":
        if (typeof value !== "boolean") bad();
        break;
      case "array":
        if (!Array.isArray(value)) bad();
        break;
      case "object":
        if (!isObject(value)) bad();
        break;
      case "type": {
        const names = Array.isArray(value) ? value : [value];
        if (names.length === 0 || !names.every((t) => typeof t === "string" && TYPES.has(t)) || new Set(names).size !== names.length) bad();
        break;
      }
      case "format":
        if (typeof value !== "string") bad();
        if (!Object.hasOwn(FORMATS, value as string)) throw new Refusal(`unknown format "${value}" at path "${path}"`);
        break;
      case "recursiveRef":
        if (value !== "#") bad();
        break;
      case "any":
        break;
    }
  }
}

/**
 * Reads and checks the schema (file = the name to show). A schema is refused, naming the first problem,
 * for an unknown draft, an unknown keyword, a keyword value of the wrong kind, an unknown format, a
 * pattern that is not a regular expression, or a `$ref` that leads nowhere. The checks are a table of
 * what each draft's meta-schema allows rather than a validation against the meta-schema itself: that
 * costs 7-9 ms in a fresh process, four times what the whole check may add to a run.
 */
export async function loadOutputSchema(text: string, file: string): Promise<OutputSchema> {
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (err) {
    throw new SchemaFileError(`${file} is not JSON: ${(err as Error).message}`);
  }
  if (typeof schema !== "boolean" && (typeof schema !== "object" || schema === null || Array.isArray(schema))) {
    throw new SchemaFileError(`${file} is not a JSON Schema: a schema is an object (or true/false)`);
  }
  const draft = draftOf(schema, file);
  let validator: Validator;
  try {
    const refs: [Record<string, unknown>, string][] = [];
    checkSchema(schema, draft, "#", refs);
    validator = new Validator(schema as Schema, draft, false);
    const lookup = (validator as unknown as { lookup: Record<string, unknown> }).lookup;
    for (const [holder, path] of refs) {
      const target = (holder as { __absolute_ref__?: string }).__absolute_ref__ ?? (holder.$ref as string);
      if (lookup[target] === undefined) throw new Refusal(`can't resolve reference ${holder.$ref as string}${at(path)}`);
    }
  } catch (err) {
    const why = err instanceof RangeError ? "it is nested too deeply" : (err as Error).message;
    throw new SchemaFileError(`${file} is not a JSON Schema this validator accepts: ${why}`);
  }
  const instruction = instructionTemplate.replace("{{schema}}", () => JSON.stringify(schema, null, 2));
  return {
    instruction,
    check(answer) {
      const taken = takeJson(answer);
      if (!taken.ok) return { ok: false, problems: [taken.problem] };
      let result: ReturnType<Validator["validate"]>;
      try {
        result = validator.validate(taken.value);
      } catch (err) {
        return { ok: false, problems: [`the document cannot be checked: ${err instanceof RangeError ? "it is nested too deeply" : (err as Error).message}`] };
      }
      if (result.valid) return { ok: true, document: taken.value };
      return { ok: false, problems: capProblems(describeErrors(result.errors, validator)) };
    },
    retryPrompt(problems) {
      return retryTemplate.replace("{{problems}}", () => problems.map((p) => `- ${p}`).join("\n"));
    },
  };
}

/** The JSON document in an answer: the whole answer, else its last fenced block. */
export function takeJson(answer: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  const whole = answer.trim();
  if (whole === "") return { ok: false, problem: "the answer is empty: no JSON document" };
  try {
    return { ok: true, value: JSON.parse(whole) };
  } catch {
    // not the whole answer: its last fenced block
  }
  const block = lastFencedBlock(answer);
  if (block === undefined) return { ok: false, problem: "the answer is not JSON, and it has no fenced block holding JSON" };
  try {
    return { ok: true, value: JSON.parse(block) };
  } catch (err) {
    return { ok: false, problem: `the answer's last fenced block is not JSON: ${(err as Error).message}` };
  }
}

/** The text of the last closed ``` or ~~~ block (CommonMark fences: the closing run at least as long). */
function lastFencedBlock(text: string): string | undefined {
  let last: string | undefined;
  let open: { fence: string; lines: string[] } | undefined;
  for (const line of text.split(/\r?\n/)) {
    if (open) {
      const close = line.match(/^ {0,3}(`{3,}|~{3,})\s*$/);
      if (close && close[1]![0] === open.fence[0] && close[1]!.length >= open.fence.length) {
        last = open.lines.join("\n");
        open = undefined;
      } else open.lines.push(line);
      continue;
    }
    const start = line.match(/^ {0,3}(`{3,}|~{3,})[^`]*$/);
    if (start) open = { fence: start[1]!, lines: [] };
  }
  return last;
}

/** Units that only say "a subschema had errors": the errors under them say what. */
const PASS_THROUGH = new Set(["$ref", "$recursiveRef", "properties", "patternProperties", "items", "prefixItems", "additionalItems", "unevaluatedItems", "allOf", "dependentSchemas"]);

/** The value of the keyword at `location` (a `#/…` pointer that may pass through `$ref`s), if it can be found. */
function keywordValue(location: string, validator: Validator): unknown {
  const { lookup, schema } = validator as unknown as { lookup: Record<string, unknown>; schema: unknown };
  let node: unknown = schema;
  for (const seg of location.split("/").slice(1)) {
    if (!isObject(node)) return undefined;
    if (seg === "$ref") node = lookup[(node as { __absolute_ref__?: string }).__absolute_ref__ ?? ""];
    else if (seg === "$recursiveRef") return undefined;
    else node = node[decodeURIComponent(seg).replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return node;
}

/** The validator's output, one line per problem: `where: what`, in the words ajv made familiar. */
function describeErrors(units: OutputUnit[], validator: Validator): string[] {
  const lines: string[] = [];
  // Where each object schema's property errors begin: a property too many is named before them, as
  // ajv did (it checks additionalProperties first; this validator checks it last).
  const propertiesFrom = new Map<string, number>();
  for (let i = 0; i < units.length; i++) {
    const u = units[i]!;
    if (u.keyword === "properties" || u.keyword === "patternProperties") {
      const schemaAt = u.keywordLocation.slice(0, -u.keyword.length - 1);
      if (!propertiesFrom.has(schemaAt)) propertiesFrom.set(schemaAt, lines.length);
    }
    if (PASS_THROUGH.has(u.keyword) || (u.keyword === "dependencies" && u.error.endsWith("dependant schema."))) continue;
    const where = u.instanceLocation === "#" ? "the document" : decodeURIComponent(u.instanceLocation.slice(1));
    const v = keywordValue(u.keywordLocation, validator);
    let what: string;
    const own = u.error.replace(/\.$/, "");
    if (v === undefined && !["additionalProperties", "unevaluatedProperties", "required", "uniqueItems", "false", "anyOf", "oneOf", "not", "then", "else"].includes(u.keyword)) {
      what = own; // the keyword's value is out of reach (behind $recursiveRef): the validator's own sentence
    } else switch (u.keyword) {
      case "additionalProperties":
      case "unevaluatedProperties": {
        // `false` there: the property is one too many; a schema there: its own errors follow.
        if (units[i + 1]?.keyword !== "false") continue;
        i++;
        const name = u.error.replace(/^Property "(.*)" does not match[^]*$/, "$1");
        what = `must NOT have ${u.keyword === "additionalProperties" ? "additional" : "unevaluated"} properties (${JSON.stringify(name)})`;
        break;
      }
      case "type":
        what = `must be ${(Array.isArray(v) ? v : [v]).join(" or ")}`;
        break;
      case "const":
        what = `must be equal to constant: ${JSON.stringify(v)}`;
        break;
      case "enum":
        what = `must be equal to one of the allowed values: ${(v as unknown[]).map((x) => JSON.stringify(x)).join(", ")}`;
        break;
      case "required":
        what = u.error.replace(/^Instance does not have required property "(.*)"\.$/, "must have required property '$1'");
        break;
      case "minLength":
      case "minItems":
      case "minProperties":
      case "maxLength":
      case "maxItems":
      case "maxProperties": {
        const unit = u.keyword.endsWith("Length") ? "characters" : u.keyword.endsWith("Items") ? "items" : "properties";
        what = `must NOT have ${u.keyword.startsWith("min") ? "fewer" : "more"} than ${v} ${unit}`;
        break;
      }
      case "minimum":
      case "maximum":
      case "exclusiveMinimum":
      case "exclusiveMaximum":
        what = `must be ${{ minimum: ">=", maximum: "<=", exclusiveMinimum: ">", exclusiveMaximum: "<" }[u.keyword]} ${v}`;
        break;
      case "multipleOf":
        what = `must be multiple of ${v}`;
        break;
      case "pattern":
        what = `must match pattern ${JSON.stringify(v)}`;
        break;
      case "format":
        what = `must match format ${JSON.stringify(v)}`;
        break;
      case "uniqueItems":
        what = `must NOT have duplicate items (${u.error.replace(/^Duplicate items at indexes (\d+) and (\d+)\.$/, "items $1 and $2 are identical")})`;
        break;
      case "false":
        what = "must not be here: the schema allows nothing (false)";
        break;
      case "anyOf":
        what = "must match a schema in anyOf";
        break;
      case "oneOf":
        what = `must match exactly one schema in oneOf${u.error.match(/ \(\d+ matches\)/)?.[0] ?? ""}`;
        break;
      case "not":
        what = 'must NOT be valid against the schema in "not"';
        break;
      case "then":
      case "else":
        what = `must match "${u.keyword}" schema`;
        break;
      default:
        // the validator's own sentence (contains, dependentRequired, propertyNames …)
        what = own;
    }
    let line = `${where}: ${what}`;
    if (line.length > MAX_PROBLEM_CHARS) line = `${line.slice(0, MAX_PROBLEM_CHARS - 1)}…`;
    const before = u.keyword.endsWith("Properties") ? propertiesFrom.get(u.keywordLocation.slice(0, -u.keyword.length - 1)) : undefined;
    if (before === undefined) lines.push(line);
    else {
      lines.splice(before, 0, line);
      for (const [k, n] of propertiesFrom) if (n >= before) propertiesFrom.set(k, n + 1);
    }
  }
  // nothing left after the pass-through units (never expected): their own words
  return lines.length > 0 ? lines : units.map((u) => `${u.instanceLocation}: ${u.error}`);
}

function capProblems(problems: string[]): string[] {
  if (problems.length <= MAX_PROBLEMS) return problems;
  return [...problems.slice(0, MAX_PROBLEMS), `… and ${problems.length - MAX_PROBLEMS} more`];
}
