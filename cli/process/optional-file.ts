// Owns the file reader every mode hands to core/config.ts: the text, or undefined when the file
// cannot be read (config decides whether a missing file is an error).
import { readFileSync } from "node:fs";

export function readFileOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
