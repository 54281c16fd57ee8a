// Owns cutting UTF-8 text at byte bounds — keeping the head, the tail, or both ends around a marker —
// and short text at a count of characters, without ever splitting a character; well-formed text (a
// lone surrogate made U+FFFD, SPEC §3.10); and the human form of a byte count (`50 KiB`). A leaf
// module: imports nothing, so every layer may use it. Callers choose the marker's wording.

const KiB = 1024;
const MiB = 1024 * KiB;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

type Text = string | Uint8Array;

const bytesOf = (text: Text): Uint8Array => (typeof text === "string" ? encoder.encode(text) : text);

/** True when byte `i` continues a character that starts before it. */
const continues = (bytes: Uint8Array, i: number): boolean => i < bytes.length && (bytes[i]! & 0xc0) === 0x80;

/** The nearest character start at or before `at` (0 ≤ at ≤ length). */
function startAtOrBefore(bytes: Uint8Array, at: number): number {
  while (at > 0 && continues(bytes, at)) at--;
  return at;
}

/** The nearest character start at or after `at`. */
function startAtOrAfter(bytes: Uint8Array, at: number): number {
  while (continues(bytes, at)) at++;
  return at;
}

/** Length of `text` in UTF-8 bytes. */
export function utf8Length(text: Text): number {
  return typeof text === "string" ? encoder.encode(text).length : text.length;
}

/** The longest start of `text` that fits in `maxBytes`, cut before a whole character. */
export function headBytes(text: Text, maxBytes: number): string {
  const bytes = bytesOf(text);
  if (bytes.length <= maxBytes) return typeof text === "string" ? text : decoder.decode(bytes);
  return decoder.decode(bytes.subarray(0, startAtOrBefore(bytes, Math.max(0, maxBytes))));
}

/** The longest end of `text` that fits in `maxBytes`, cut before a whole character. */
export function tailBytes(text: Text, maxBytes: number): string {
  const bytes = bytesOf(text);
  if (bytes.length <= maxBytes) return typeof text === "string" ? text : decoder.decode(bytes);
  return decoder.decode(bytes.subarray(startAtOrAfter(bytes, bytes.length - Math.max(0, maxBytes))));
}

/**
 * `text` within `maxBytes`: unchanged when it fits, else its head and its tail (about half each) with
 * `marker` between them, the marker included in the bound (as far as the bound allows).
 */
export function middleBytes(text: string, maxBytes: number, marker: string): string {
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return text;
  const keep = Math.max(0, maxBytes - utf8Length(marker));
  const head = startAtOrBefore(bytes, Math.ceil(keep / 2));
  const tail = startAtOrAfter(bytes, bytes.length - (keep - Math.ceil(keep / 2)));
  return decoder.decode(bytes.subarray(0, head)) + marker + decoder.decode(bytes.subarray(tail));
}

/** `text` within `maxBytes`: unchanged when it fits, else its head and `marker`, the marker included in the bound. */
export function clampBytes(text: string, maxBytes: number, marker: string): string {
  if (utf8Length(text) <= maxBytes) return text;
  return headBytes(text, maxBytes - utf8Length(marker)) + marker;
}

/** `1 MiB`, `50 KiB` for whole multiples; `12.50 MiB` from 1 MiB up; else `300 bytes`. */
export function formatBytes(n: number): string {
  if (n >= MiB) return n % MiB === 0 ? `${n / MiB} MiB` : `${(n / MiB).toFixed(2)} MiB`;
  if (n >= KiB && n % KiB === 0) return `${n / KiB} KiB`;
  return `${n} bytes`;
}

/** A lone surrogate: half of a character, which a provider's JSON parser refuses. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const HAS_SURROGATE = /[\uD800-\uDFFF]/;

/** `text` with each lone surrogate made U+FFFD; the same string when it has none. */
export function wellFormed(text: string): string {
  return HAS_SURROGATE.test(text) ? text.replace(LONE_SURROGATE, "\uFFFD") : text;
}

/** A JSON value (strings, arrays, plain objects) with every string, keys too, well-formed; the same
 *  value, untouched, when nothing in it needed a change. */
export function wellFormedDeep<T>(value: T): T {
  if (typeof value === "string") return wellFormed(value) as T;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((v, i) => {
      const w = wellFormedDeep(v);
      if (w !== v) (out ??= [...value])[i] = w;
    });
    return (out ?? value) as T;
  }
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    let out: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(value)) {
      const w = wellFormedDeep(v);
      const key = wellFormed(k);
      if (w !== v || key !== k) {
        out ??= { ...(value as Record<string, unknown>) };
        if (key !== k) delete out[k];
        out[key] = w;
      }
    }
    return (out ?? value) as T;
  }
  return value;
}

/** At most `max` characters (code points) of `text`, well-formed, the last one `…` when it was cut. */
export function cutChars(text: string, max: number): string {
  const chars = Array.from(wellFormed(text));
  return chars.length > max ? `${chars.slice(0, Math.max(0, max - 1)).join("")}…` : chars.join("");
}
