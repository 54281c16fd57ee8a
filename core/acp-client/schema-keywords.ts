// Owns what `--output-schema` accepts of each JSON Schema draft: the drafts by their `$schema`, every
// keyword each one knows and the kind of value its meta-schema asks for, and how a refusal words that
// kind. A table, read by output-schema.ts's check (why a table and not the meta-schema: see there).
import type { SchemaDraft } from "@cfworker/json-schema";

/** `$schema` → the draft it names; none means 2020-12, the current one. */
export const DRAFTS: Record<string, SchemaDraft> = {
  "https://json-schema.org/draft/2020-12/schema": "2020-12",
  "https://json-schema.org/draft/2019-09/schema": "2019-09",
  "https://json-schema.org/draft-07/schema": "7",
};

/** What a keyword's value must be: the rules of each draft's meta-schema, as a table. */
export type Kind = "schema" | "schemas" | "schemaMap" | "schemaOrSchemas" | "dependencies" | "stringsMap" | "nonNegInt" | "number" | "positive" | "string" | "strings" | "regex" | "boolean" | "array" | "values" | "object" | "any" | "type" | "format" | "recursiveRef";

const COMMON: Record<string, Kind> = {
  $schema: "string", $id: "string", $ref: "string", $comment: "string", $defs: "schemaMap", definitions: "schemaMap",
  title: "string", description: "string", default: "any", examples: "array", readOnly: "boolean", writeOnly: "boolean",
  type: "type", enum: "values", const: "any",
  multipleOf: "positive", maximum: "number", minimum: "number", exclusiveMaximum: "number", exclusiveMinimum: "number",
  maxLength: "nonNegInt", minLength: "nonNegInt", pattern: "regex", format: "format", contentMediaType: "string", contentEncoding: "string",
  maxItems: "nonNegInt", minItems: "nonNegInt", uniqueItems: "boolean", contains: "schema",
  maxProperties: "nonNegInt", minProperties: "nonNegInt", required: "strings", properties: "schemaMap", patternProperties: "schemaMap",
  additionalProperties: "schema", propertyNames: "schema", dependencies: "dependencies",
  allOf: "schemas", anyOf: "schemas", oneOf: "schemas", not: "schema", if: "schema", then: "schema", else: "schema",
};
const SINCE_2019: Record<string, Kind> = {
  $anchor: "string", $vocabulary: "object", deprecated: "boolean", dependentRequired: "stringsMap", dependentSchemas: "schemaMap",
  unevaluatedItems: "schema", unevaluatedProperties: "schema", minContains: "nonNegInt", maxContains: "nonNegInt", contentSchema: "schema",
};
export const KEYWORDS: Record<SchemaDraft, Record<string, Kind>> = {
  "2020-12": { ...COMMON, ...SINCE_2019, prefixItems: "schemas", items: "schema" },
  "2019-09": { ...COMMON, ...SINCE_2019, items: "schemaOrSchemas", additionalItems: "schema", $recursiveRef: "recursiveRef", $recursiveAnchor: "boolean" },
  "7": { ...COMMON, items: "schemaOrSchemas", additionalItems: "schema" },
  "4": {},
};
/** Kinds whose value is worded in a refusal ("minLength must be a non-negative integer: -1"). */
export const KIND_WORDS: Record<Kind, string> = {
  schema: "a schema (an object or true/false)", schemas: "a non-empty array of schemas", schemaMap: "an object whose values are schemas",
  schemaOrSchemas: "a schema or a non-empty array of schemas", dependencies: "an object whose values are schemas or arrays of unique strings",
  stringsMap: "an object whose values are arrays of unique strings", nonNegInt: "a non-negative integer", number: "a number",
  positive: "a number greater than 0", string: "a string", strings: "an array of unique strings", regex: "a regular expression",
  boolean: "true or false", array: "an array", values: "a non-empty array", object: "an object", any: "any value", type: "JSONType or JSONType[]", format: "a string", recursiveRef: '"#"',
};
export const TYPES = new Set(["array", "boolean", "integer", "null", "number", "object", "string"]);
