// Owns the JSON Schema validator the ACP schema tests (v1 and v2) share: ajv for draft 2020-12 with the
// schemas' number formats checked, not ignored (an id or a count must be an integer in range).
import Ajv2020 from "ajv/dist/2020";

const INTEGERS: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint16: [0, 65535],
  uint32: [0, 2 ** 32 - 1],
  uint64: [0, Number.MAX_SAFE_INTEGER],
};

/** A fresh validator with the formats the ACP schemas use. */
export function schemaAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const [name, [lo, hi]] of Object.entries(INTEGERS)) ajv.addFormat(name, { type: "number", validate: (n: number) => Number.isInteger(n) && n >= lo && n <= hi });
  ajv.addFormat("double", { type: "number", validate: (n: number) => Number.isFinite(n) });
  ajv.addFormat("uri", (text: string) => URL.canParse(text));
  ajv.addFormat("date-time", (text: string) => !Number.isNaN(Date.parse(text)));
  return ajv;
}
