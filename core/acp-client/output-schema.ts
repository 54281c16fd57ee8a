// Owns `tendril prompt --output-schema`: the schema file compiled (ajv, the one module that imports it),
// the text that asks an agent for one JSON document, the document taken from an answer (the whole
// answer, else its last fenced block) and checked, and the problems worded for the agent and the user.
// Does not talk to the agent: client-runner.ts asks and asks again; cli/ reads the file.
import type { ErrorObject, ValidateFunction } from "ajv";
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

/** `$schema` → the ajv class that implements that draft; none means 2020-12, the current one. */
const DRAFTS: Record<string, () => Promise<AjvClass>> = {
  "https://json-schema.org/draft/2020-12/schema": async () => (await import("ajv/dist/2020")).default,
  "https://json-schema.org/draft/2019-09/schema": async () => (await import("ajv/dist/2019")).default,
  "https://json-schema.org/draft-07/schema": async () => (await import("ajv")).default,
};

type AjvClass = typeof import("ajv").default;

function draftOf(schema: unknown, file: string): () => Promise<AjvClass> {
  const declared = typeof schema === "object" && schema !== null ? (schema as { $schema?: unknown }).$schema : undefined;
  if (declared === undefined) return DRAFTS["https://json-schema.org/draft/2020-12/schema"]!;
  // The drafts name themselves `http://…#`; either scheme, with or without the empty fragment.
  const key = typeof declared === "string" ? declared.replace(/#$/, "").replace(/^http:/, "https:") : "";
  const load = DRAFTS[key];
  if (!load) {
    throw new SchemaFileError(`${file}: $schema ${JSON.stringify(declared)} is not a draft this validator knows; use draft 2020-12 (the default), 2019-09 or draft-07`);
  }
  return load;
}

/**
 * Compiles the schema (file = the name to show). The schema is checked as ajv compiles it in strict
 * mode: a keyword with a value of the wrong kind, an unknown keyword or format, or a `$ref` that leads
 * nowhere is refused. It is not first validated against the draft's meta-schema: compiling that costs
 * 20-40 ms, ten times what the whole check may add to a run.
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
  const Ajv = await draftOf(schema, file)();
  // No meta-schemas (they are for checking schemas against their draft, skipped above) and no second
  // optimising pass over the generated code: both cost start-up time a one-shot check never earns back.
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictTuples: false, validateSchema: false, meta: false, code: { optimize: false }, logger: false });
  // ajv-formats only for a schema that names a format (it costs a few ms to load).
  if (/"format"\s*:/.test(text)) (await import("ajv-formats")).default(ajv);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema as object | boolean);
  } catch (err) {
    // ajv words strict-mode refusals as warnings ("… ignored in schema"); here they refuse the schema.
    const why = (err as Error).message.replace(" ignored in schema at path", " at path");
    throw new SchemaFileError(`${file} is not a JSON Schema this validator accepts: ${why}`);
  }
  const instruction = instructionTemplate.replace("{{schema}}", () => JSON.stringify(schema, null, 2));
  return {
    instruction,
    check(answer) {
      const taken = takeJson(answer);
      if (!taken.ok) return { ok: false, problems: [taken.problem] };
      if (validate(taken.value)) return { ok: true, document: taken.value };
      return { ok: false, problems: capProblems((validate.errors ?? []).map(describeError)) };
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

function describeError(e: ErrorObject): string {
  const where = e.instancePath === "" ? "the document" : e.instancePath;
  const p = e.params as Record<string, unknown>;
  let detail = "";
  if (e.keyword === "additionalProperties") detail = ` (${JSON.stringify(p.additionalProperty)})`;
  else if (e.keyword === "enum") detail = `: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
  else if (e.keyword === "const") detail = `: ${JSON.stringify(p.allowedValue)}`;
  const line = `${where}: ${e.message ?? e.keyword}${detail}`;
  return line.length > MAX_PROBLEM_CHARS ? `${line.slice(0, MAX_PROBLEM_CHARS - 1)}…` : line;
}

function capProblems(problems: string[]): string[] {
  if (problems.length <= MAX_PROBLEMS) return problems;
  return [...problems.slice(0, MAX_PROBLEMS), `… and ${problems.length - MAX_PROBLEMS} more`];
}
