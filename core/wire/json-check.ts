// Owns checking that text is JSON without building it: the end of the one JSON value starting at an
// offset, or -1. A relay uses it to pass on a line it need not read (jsonrpc.ts classifyRelayedNotification).
// It never accepts what JSON.parse refuses; it may refuse what JSON.parse takes (nesting deeper than
// MAX_CHECKED_DEPTH), and then the caller parses. Does no I/O.

/** Deeper nesting is left to JSON.parse (the caller's fallback), which has its own limit. */
const MAX_CHECKED_DEPTH = 64;

const SPACE = 32, TAB = 9, LF = 10, CR = 13, QUOTE = 34, BACKSLASH = 92, COMMA = 44, COLON = 58;
const OPEN_OBJECT = 123, CLOSE_OBJECT = 125, OPEN_ARRAY = 91, CLOSE_ARRAY = 93;

function isSpace(c: number): boolean {
  return c === SPACE || c === TAB || c === LF || c === CR;
}

/**
 * The offset just past the JSON value that starts at `start` (after optional whitespace) in `text`, or
 * -1 when there is none there (or it nests deeper than MAX_CHECKED_DEPTH). What follows it is not looked at.
 */
export function jsonValueEnd(text: string, start: number): number {
  // the closers of the open containers, innermost last
  const open: number[] = [];
  let i = start;
  for (;;) {
    // a value
    let c = text.charCodeAt(i);
    while (isSpace(c)) c = text.charCodeAt(++i);
    if (c === QUOTE) i = stringEnd(text, i);
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (open.length >= MAX_CHECKED_DEPTH) return -1;
      let d = text.charCodeAt(++i);
      while (isSpace(d)) d = text.charCodeAt(++i);
      if (d === (c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) i++;
      else {
        open.push(c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY);
        if (c === OPEN_OBJECT && (i = keyEnd(text, i)) < 0) return -1;
        continue;
      }
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) i = numberEnd(text, i);
    else if (c === 116 /* t */) i = text.startsWith("true", i) ? i + 4 : -1;
    else if (c === 102 /* f */) i = text.startsWith("false", i) ? i + 5 : -1;
    else if (c === 110 /* n */) i = text.startsWith("null", i) ? i + 4 : -1;
    else return -1;
    if (i < 0) return -1;
    // after a value: close what it ends, or go on to the next entry
    for (;;) {
      if (open.length === 0) return i;
      let d = text.charCodeAt(i);
      while (isSpace(d)) d = text.charCodeAt(++i);
      const closer = open[open.length - 1]!;
      if (d === closer) {
        open.pop();
        i++;
        continue;
      }
      if (d !== COMMA) return -1;
      i++;
      if (closer === CLOSE_OBJECT && (i = keyEnd(text, i)) < 0) return -1;
      break;
    }
  }
}

/** Past `"key":` (whitespace allowed around both) starting at `i`, or -1. */
function keyEnd(text: string, i: number): number {
  let c = text.charCodeAt(i);
  while (isSpace(c)) c = text.charCodeAt(++i);
  if (c !== QUOTE || (i = stringEnd(text, i)) < 0) return -1;
  c = text.charCodeAt(i);
  while (isSpace(c)) c = text.charCodeAt(++i);
  return c === COLON ? i + 1 : -1;
}

/** Past the string whose opening quote is at `i`, or -1 (a raw control character, a bad escape, no end). */
export function stringEnd(text: string, i: number): number {
  for (i++; ; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) {
      const e = text.charCodeAt(++i);
      if (e === 117 /* u */) {
        for (let k = 1; k <= 4; k++) {
          const h = text.charCodeAt(i + k);
          if (!((h >= 48 && h <= 57) || (h >= 65 && h <= 70) || (h >= 97 && h <= 102))) return -1;
        }
        i += 4;
      } else if (!(e === QUOTE || e === BACKSLASH || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116)) return -1;
    } else if (!(c >= 32)) return -1; // a control character, or the text's end (NaN)
  }
}

/** Past the number starting at `i` (`-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`), or -1. */
function numberEnd(text: string, i: number): number {
  let c = text.charCodeAt(i);
  if (c === 45) c = text.charCodeAt(++i);
  if (c === 48) c = text.charCodeAt(++i);
  else if (c >= 49 && c <= 57) do c = text.charCodeAt(++i); while (c >= 48 && c <= 57);
  else return -1;
  if (c === 46 /* . */) {
    c = text.charCodeAt(++i);
    if (!(c >= 48 && c <= 57)) return -1;
    do c = text.charCodeAt(++i); while (c >= 48 && c <= 57);
  }
  if (c === 101 || c === 69 /* e E */) {
    c = text.charCodeAt(++i);
    if (c === 43 || c === 45) c = text.charCodeAt(++i);
    if (!(c >= 48 && c <= 57)) return -1;
    do c = text.charCodeAt(++i); while (c >= 48 && c <= 57);
  }
  return i;
}
