// Owns `tendril prompt --output-schema`: the schema checked against its draft and run by @cfworker/json-schema
// (the one module that imports it), the text asking an agent for one JSON document, the document taken from
// an answer (whole, else its last fenced block; within output-document-bounds.ts's bounds) and checked, the
// problems worded for the agent and the user.
// Does not talk to the agent: client-session.ts asks and asks again; cli/ reads the file.
import { format as FORMATS, Validator, type OutputUnit, type Schema, type SchemaDraft } from "@cfworker/json-schema";
import { DEFAULT_LIMITS } from "../limits.ts";
import { isObject } from "../wire/jsonrpc.ts";
import { answerTooLarge, type DocumentBounds, documentOutOfBounds, usesUniqueItems } from "./output-document-bounds.ts";
import { DRAFTS, KEYWORDS, type Kind, KIND_WORDS, TYPES } from "./schema-keywords.ts";
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
/** How deep subschemas may nest: far past any real schema, and short of the validator's cost in
 *  resolving a path per level (quadratic: a 1 MiB file of nested `not`s would take seconds). */
const MAX_SCHEMA_DEPTH = 100;

function draftOf(schema: unknown, file: string): SchemaDraft {
  const declared = isObject(schema) ? schema.$schema : undefined;
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

const isSchema = (v: unknown): boolean => typeof v === "boolean" || isObject(v);
const uniqueStrings = (v: unknown): boolean => Array.isArray(v) && v.every((s) => typeof s === "string") && new Set(v).size === v.length;
const at = (path: string): string => (path === "#" ? "" : ` at path "${path}"`);
function shown(v: unknown): string {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}

/** A name as one JSON Pointer segment, and back from the validator's (URI-encoded) segments. */
const escapeSegment = (name: string): string => name.replace(/~/g, "~0").replace(/\//g, "~1");
const segmentOf = (encoded: string): string => decodeURIComponent(encoded).replace(/~1/g, "/").replace(/~0/g, "~");

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
function checkSchema(schema: unknown, draft: SchemaDraft, path: string, refs: [Record<string, unknown>, string][], depth = 0): void {
  if (typeof schema === "boolean") return;
  if (depth > MAX_SCHEMA_DEPTH) throw new Refusal(`subschemas nest more than ${MAX_SCHEMA_DEPTH} deep`);
  if (!isObject(schema)) throw new Refusal(`the schema${at(path)} must be an object or true/false: ${shown(schema)}`);
  const known = KEYWORDS[draft];
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$dynamicRef" || key === "$dynamicAnchor") throw new Refusal(`${key}${at(path)} is not supported by this validator; use $ref`);
    const kind = known[key];
    if (kind === undefined) throw new Refusal(`strict mode: unknown keyword: "${key}"${at(path)}`);
    checkKeyword({ schema, draft, path, refs, depth }, key, value, kind);
  }
  checkPartners(schema, path);
}

interface Place {
  /** The (sub)schema holding the keyword. */
  schema: Record<string, unknown>;
  draft: SchemaDraft;
  path: string;
  refs: [Record<string, unknown>, string][];
  depth: number;
}

/** One keyword's value against the kind the draft's meta-schema asks for; its subschemas checked in turn. */
function checkKeyword(place: Place, key: string, value: unknown, kind: Kind): void {
  const { schema, draft, path, refs, depth } = place;
  const here = `${path}/${key}`;
  const bad = (): never => {
    throw new Refusal(`${key} must be ${KIND_WORDS[kind]}: ${shown(value)}${at(path)}`);
  };
  switch (kind) {
    case "schema":
      if (!isSchema(value)) bad();
      checkSchema(value, draft, here, refs, depth + 1);
      break;
    case "schemas":
      if (!Array.isArray(value) || value.length === 0 || !value.every(isSchema)) bad();
      (value as unknown[]).forEach((s, i) => checkSchema(s, draft, `${here}/${i}`, refs, depth + 1));
      break;
    case "schemaOrSchemas":
      if (Array.isArray(value)) {
        if (value.length === 0 || !value.every(isSchema)) bad();
        value.forEach((s, i) => checkSchema(s, draft, `${here}/${i}`, refs, depth + 1));
      } else if (isSchema(value)) checkSchema(value, draft, here, refs, depth + 1);
      else bad();
      break;
    case "schemaMap":
      if (!isObject(value) || !Object.values(value).every(isSchema)) bad();
      for (const [name, s] of Object.entries(value as Record<string, unknown>)) {
        if (key === "patternProperties") {
          const why = compiles(name);
          if (why) throw new Refusal(`patternProperties ${JSON.stringify(name)} is not a regular expression (${why})${at(path)}`);
        }
        checkSchema(s, draft, `${here}/${escapeSegment(name)}`, refs, depth + 1);
      }
      break;
    case "dependencies":
      if (!isObject(value)) bad();
      for (const [name, d] of Object.entries(value as Record<string, unknown>)) {
        if (isSchema(d)) checkSchema(d, draft, `${here}/${escapeSegment(name)}`, refs, depth + 1);
        else if (!uniqueStrings(d)) bad();
      }
      break;
    default:
      checkValue(place, key, value, kind, bad);
  }
}

/** A keyword whose value holds no subschema: its kind, its regular expression, its format. */
function checkValue(place: Place, key: string, value: unknown, kind: Kind, bad: () => never): void {
  const { schema, path, refs } = place;
  switch (kind) {
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
      if ((key === "$ref" || key === "$id") && !URL.canParse(value as string, "https://base.invalid/")) {
        throw new Refusal(`${key} ${JSON.stringify(value)} is not a URI reference${at(path)}`);
      }
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
    case "values":
      if (!Array.isArray(value) || value.length === 0) bad();
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
      if (!Object.hasOwn(FORMATS, value as string)) {
        throw new Refusal(`unknown format "${value}" at path "${path}"; the formats checked are ${Object.keys(FORMATS).join(", ")}`);
      }
      break;
    case "recursiveRef":
      if (value !== "#") bad();
      break;
    case "any":
      break;
  }
}

/** A keyword that does nothing without its partner is a mistake, not a choice: refused like an unknown one. */
function checkPartners(schema: Record<string, unknown>, path: string): void {
  const ignored = (key: string, why: string) => {
    if (key in schema) throw new Refusal(`strict mode: "${key}" ${why} is ignored${at(path)}`);
  };
  if (!("if" in schema)) {
    ignored("then", 'without "if"');
    ignored("else", 'without "if"');
  } else if (!("then" in schema) && !("else" in schema)) ignored("if", 'without "then" and "else"');
  if (!("contains" in schema)) {
    ignored("minContains", 'without "contains"');
    ignored("maxContains", 'without "contains"');
  }
  if (!Array.isArray(schema.items)) ignored("additionalItems", 'when "items" is not an array of schemas');
}

/**
 * Reads and checks the schema (file = the name to show). A schema is refused, naming the first problem,
 * for an unknown draft, an unknown keyword, a keyword value of the wrong kind, an unknown format, a
 * pattern that is not a regular expression, a keyword that does nothing without its partner, or a
 * `$ref` that leads nowhere. The checks are a table of what each draft's meta-schema allows rather than
 * a validation against the meta-schema itself: this validator does not follow `$dynamicRef`, which the
 * 2020-12 meta-schema uses for every subschema, so a nested `{"properties": {"a": {"minLength": -1}}}`
 * passes it (tested in output-schema.test.ts); and a meta-schema allows unknown keywords and formats,
 * which a user's typo needs refused. ajv follows it, at ~10 ms a run.
 */
export async function loadOutputSchema(text: string, file: string, bounds: DocumentBounds = DEFAULT_LIMITS): Promise<OutputSchema> {
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
    // Draft-07 ignores the keywords beside a $ref; they are applied instead (as in 2019-09 on), as the
    // ajv-based check this replaced did: a keyword the user wrote is never silently dropped.
    validator = new Validator(schema as Schema, draft === "7" ? "2019-09" : draft, false);
    const { lookup } = internals(validator);
    for (const [holder, path] of refs) {
      const target = (holder as { __absolute_ref__?: string }).__absolute_ref__ ?? (holder.$ref as string);
      if (lookup[target] === undefined) throw new Refusal(`can't resolve reference ${holder.$ref as string}${at(path)}`);
    }
  } catch (err) {
    const message = (err as Error).message;
    const why = err instanceof RangeError ? "it is nested too deeply" : message.startsWith("Duplicate schema URI") ? "two subschemas have the same $id" : message;
    throw new SchemaFileError(`${file} is not a JSON Schema this validator accepts: ${why}`);
  }
  const instruction = instructionTemplate.replace("{{schema}}", () => JSON.stringify(schema, null, 2));
  const uniqueItems = usesUniqueItems(schema);
  return {
    instruction,
    check(answer) {
      const tooLarge = answerTooLarge(answer, bounds);
      if (tooLarge) return { ok: false, problems: [tooLarge] };
      const taken = takeJson(answer);
      if (!taken.ok) return { ok: false, problems: [taken.problem] };
      const outOfBounds = documentOutOfBounds(taken.value, uniqueItems, bounds);
      if (outOfBounds) return { ok: false, problems: [outOfBounds] };
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
const PASS_THROUGH = new Set(["$ref", "$recursiveRef", "properties", "patternProperties", "items", "prefixItems", "additionalItems", "unevaluatedItems", "allOf", "dependentSchemas", "propertyNames"]);

/**
 * What the validator keeps but does not declare: its dereferenced schemas by URI (`lookup`) and the
 * schema it was given. The one cast of the validator's internals: its typings hide fields its own code
 * reads, and a reference that did not resolve, or a failing keyword's value, can only be found there.
 */
function internals(validator: Validator): { lookup: Record<string, unknown>; schema: unknown } {
  return validator as unknown as { lookup: Record<string, unknown>; schema: unknown };
}

/** The value of the keyword at `location` (a `#/…` pointer that may pass through `$ref`s), if it can be found. */
function keywordValue(location: string, validator: Validator): unknown {
  const { lookup, schema } = internals(validator);
  let node: unknown = schema;
  for (const seg of location.split("/").slice(1)) {
    if (typeof node !== "object" || node === null) return undefined;
    // a $ref the validator followed (the schema holding it carries the resolved address; a property
    // named "$ref" does not), or "#" of a $recursiveRef: the root when it is a $recursiveAnchor
    if (seg === "$ref" && "__absolute_ref__" in node) node = lookup[(node as { __absolute_ref__: string }).__absolute_ref__];
    else if (seg === "$recursiveRef" && "__absolute_recursive_ref__" in node) node = isObject(schema) && schema.$recursiveAnchor === true ? schema : lookup[(node as { __absolute_recursive_ref__?: string }).__absolute_recursive_ref__ ?? ""];
    else {
      const key = segmentOf(seg);
      node = Object.hasOwn(node, key) ? (node as Record<string, unknown>)[key] : undefined;
    }
  }
  return node;
}

/** The validator's output, one line per problem: `where: what`, in the words (and order) ajv made familiar. */
function describeErrors(units: OutputUnit[], validator: Validator): string[] {
  const lines: string[] = [];
  // Where each object schema's property errors begin: a property too many is named before them, as
  // ajv did (it checks additionalProperties first; this validator checks it last).
  const propertiesFrom = new Map<string, number>();
  // A combinator's own line ("must match a schema in anyOf") waits until the errors of its branches
  // are out: the validator gives it first, ajv gave it last, and last reads better.
  const pending: { under: string; line: string }[] = [];
  const emit = (line: string, keyword: string, keywordLocation: string) => {
    const clipped = line.length > MAX_PROBLEM_CHARS ? `${line.slice(0, MAX_PROBLEM_CHARS - 1)}…` : line;
    const schemaAt = keywordLocation.slice(0, -keyword.length - 1);
    const before = keyword.endsWith("Properties") ? propertiesFrom.get(schemaAt) : undefined;
    if (before === undefined) return void lines.push(clipped);
    lines.splice(before, 0, clipped);
    // the marks after it move down, as do its own and those of the schemas inside it (not those around it)
    for (const [k, n] of propertiesFrom) if (n > before || (n === before && (k === schemaAt || k.startsWith(`${schemaAt}/`)))) propertiesFrom.set(k, n + 1);
  };
  const flush = (location: string) => {
    while (pending.length > 0 && !location.startsWith(pending.at(-1)!.under)) emit(pending.pop()!.line, "", "");
  };
  for (let i = 0; i < units.length; i++) {
    const u = units[i]!;
    flush(u.keywordLocation);
    if (u.keyword === "properties" || u.keyword === "patternProperties") {
      const schemaAt = u.keywordLocation.slice(0, -u.keyword.length - 1);
      if (!propertiesFrom.has(schemaAt)) propertiesFrom.set(schemaAt, lines.length);
    }
    if (PASS_THROUGH.has(u.keyword) || (u.keyword === "dependencies" && u.error.endsWith("dependant schema."))) continue;
    const where = whereOf(u);
    const what = wordsFor(u, units[i + 1], keywordValue(u.keywordLocation, validator));
    if (what === undefined) continue;
    if (what.skipNext) i++;
    const line = `${where}: ${what.text}`;
    if (u.keyword === "if") pending.push({ under: u.keywordLocation.replace(/if$/, `${what.text.includes('"then"') ? "then" : "else"}/`), line });
    else if (DEFERRED.has(u.keyword)) pending.push({ under: `${u.keywordLocation}/`, line });
    else emit(line, u.keyword, u.keywordLocation);
  }
  flush("");
  // nothing left after the pass-through units (never expected): their own words
  return lines.length > 0 ? lines : units.map((u) => `${u.instanceLocation}: ${u.error}`);
}

/** Keywords whose line follows the errors under them. */
const DEFERRED = new Set(["anyOf", "oneOf", "not", "contains"]);
/** Keywords worded without their value from the schema. */
const WORDED_WITHOUT_VALUE = new Set(["additionalProperties", "unevaluatedProperties", "required", "uniqueItems", "false", "anyOf", "oneOf", "not", "if", "contains", "dependentRequired", "dependencies"]);

/** Where a unit points: a JSON Pointer into the document, or the document; a property's name is named. */
function whereOf(u: OutputUnit): string {
  const pointer = u.instanceLocation.slice(1);
  if (!u.keywordLocation.includes("/propertyNames/")) return pointer === "" ? "the document" : decodeURIComponent(pointer);
  // under propertyNames the "instance" is the name itself, at the location of its value
  const cut = pointer.lastIndexOf("/");
  const name = segmentOf(pointer.slice(cut + 1));
  return `${cut <= 0 ? "the document" : decodeURIComponent(pointer.slice(0, cut))} (property name ${JSON.stringify(name)})`;
}

/** What one output unit says, worded; undefined when the units after it say it. */
function wordsFor(u: OutputUnit, next: OutputUnit | undefined, v: unknown): { text: string; skipNext?: boolean } | undefined {
  const own = u.error.replace(/\.$/, "");
  // the keyword's value is out of reach (never expected): the validator's own sentence
  if (v === undefined && !WORDED_WITHOUT_VALUE.has(u.keyword)) return { text: own };
  switch (u.keyword) {
    case "additionalProperties":
    case "unevaluatedProperties": {
      // `false` there: the property is one too many; a schema there: its own errors follow.
      if (next?.keyword !== "false") return undefined;
      const name = u.error.replace(/^Property "(.*)" does not match[^]*$/, "$1");
      return { text: `must NOT have ${u.keyword === "additionalProperties" ? "additional" : "unevaluated"} properties (${JSON.stringify(name)})`, skipNext: true };
    }
    case "type":
      return { text: `must be ${(Array.isArray(v) ? v : [v]).join(" or ")}` };
    case "const":
      return { text: `must be equal to constant: ${JSON.stringify(v)}` };
    case "enum":
      return { text: `must be equal to one of the allowed values: ${(v as unknown[]).map((x) => JSON.stringify(x)).join(", ")}` };
    case "required":
      return { text: u.error.replace(/^Instance does not have required property "(.*)"\.$/, "must have required property '$1'") };
    case "minLength":
    case "minItems":
    case "minProperties":
    case "maxLength":
    case "maxItems":
    case "maxProperties": {
      const unit = u.keyword.endsWith("Length") ? "characters" : u.keyword.endsWith("Items") ? "items" : "properties";
      return { text: `must NOT have ${u.keyword.startsWith("min") ? "fewer" : "more"} than ${v} ${unit}` };
    }
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return { text: `must be ${{ minimum: ">=", maximum: "<=", exclusiveMinimum: ">", exclusiveMaximum: "<" }[u.keyword]} ${v}` };
    case "multipleOf":
      return { text: `must be multiple of ${v}` };
    case "pattern":
      return { text: `must match pattern ${JSON.stringify(v)}` };
    case "format":
      return { text: `must match format ${JSON.stringify(v)}` };
    case "uniqueItems":
      return { text: `must NOT have duplicate items (${u.error.replace(/^Duplicate items at indexes (\d+) and (\d+)\.$/, "items $1 and $2 are identical")})` };
    case "false":
      return { text: "must not be here: the schema allows nothing (false)" };
    case "anyOf":
      return { text: "must match a schema in anyOf" };
    case "oneOf":
      return { text: `must match exactly one schema in oneOf${u.error.match(/ \(\d+ matches\)/)?.[0] ?? ""}` };
    case "not":
      return { text: 'must NOT be valid against the schema in "not"' };
    case "if":
      return { text: `must match "${u.error.includes('"then"') ? "then" : "else"}" schema` };
    case "contains":
      return { text: own.startsWith("Array is empty") || own.startsWith("Array does not contain") ? 'must contain an item that matches "contains"' : own };
    case "dependentRequired":
    case "dependencies":
      return { text: u.error.replace(/^Instance has "(.*)" but does not have "(.*)"\.$/, "must have property $2 when property $1 is present") };
    default:
      // the validator's own sentence (contains, dependentRequired, propertyNames …)
      return { text: own };
  }
}

function capProblems(problems: string[]): string[] {
  if (problems.length <= MAX_PROBLEMS) return problems;
  return [...problems.slice(0, MAX_PROBLEMS), `… and ${problems.length - MAX_PROBLEMS} more`];
}
