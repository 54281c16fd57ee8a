// Owns the bounds on a `--output-schema` answer before it is validated (MAX_OUTPUT_DOCUMENT_BYTES,
// MAX_OUTPUT_DOCUMENT_DEPTH, MAX_OUTPUT_UNIQUE_ITEMS): validation runs on the event loop, so a document
// whose check would take seconds (uniqueItems compares items pairwise) would hold off `--timeout`.
// Does not validate (output-schema.ts does).
import type { Limits } from "../limits.ts";
import { formatBytes, utf8Length } from "../text-bounds.ts";

export type DocumentBounds = Pick<Limits, "MAX_OUTPUT_DOCUMENT_BYTES" | "MAX_OUTPUT_DOCUMENT_DEPTH" | "MAX_OUTPUT_UNIQUE_ITEMS">;

/** Whether a schema (any of its subschemas) asks for unique items. */
export function usesUniqueItems(schema: unknown): boolean {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    if (!Array.isArray(node) && (node as { uniqueItems?: unknown }).uniqueItems === true) return true;
    stack.push(...Object.values(node));
  }
  return false;
}

/** The answer text is too large to take a document from: the problem, else undefined. */
export function answerTooLarge(answer: string, bounds: DocumentBounds): string | undefined {
  const bytes = utf8Length(answer);
  if (bytes <= bounds.MAX_OUTPUT_DOCUMENT_BYTES) return undefined;
  return `the answer is ${formatBytes(bytes)}, over the ${formatBytes(bounds.MAX_OUTPUT_DOCUMENT_BYTES)} a document may have (MAX_OUTPUT_DOCUMENT_BYTES)`;
}

/**
 * The first bound a parsed document breaks: nesting deeper than MAX_OUTPUT_DOCUMENT_DEPTH, or, when
 * the schema asks for unique items, more than MAX_OUTPUT_UNIQUE_ITEMS array items in all (the pairwise
 * check is quadratic in them). Undefined when it keeps them all. Iterative: no depth overflows it.
 */
export function documentOutOfBounds(doc: unknown, uniqueItems: boolean, bounds: DocumentBounds): string | undefined {
  const stack: [unknown, number][] = [[doc, 0]];
  let items = 0;
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (depth >= bounds.MAX_OUTPUT_DOCUMENT_DEPTH) return `the document nests deeper than ${bounds.MAX_OUTPUT_DOCUMENT_DEPTH} levels (MAX_OUTPUT_DOCUMENT_DEPTH)`;
    const children = Array.isArray(node) ? node : Object.values(node);
    if (Array.isArray(node) && uniqueItems) {
      items += node.length;
      if (items > bounds.MAX_OUTPUT_UNIQUE_ITEMS) {
        return `the document's arrays hold more than ${bounds.MAX_OUTPUT_UNIQUE_ITEMS} items, more than uniqueItems is checked for (MAX_OUTPUT_UNIQUE_ITEMS)`;
      }
    }
    for (const child of children) stack.push([child, depth + 1]);
  }
  return undefined;
}
