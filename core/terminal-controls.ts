// Owns what untrusted text (model output, tool titles, an agent's stderr) may send to a terminal: ESC,
// CSI (cursor moves), OSC (titles, clipboard writes) and DCS/SOS/PM/APC sequences, C0 controls but
// newline and tab (CR, backspace) and C1 controls (8-bit CSI/OSC too) are removed, even when split
// across chunks; the rest passes unchanged. Callers decide when (a terminal sink). For an editor's display
// terminal (`keepScreenControls`) CSI sequences (colours, cursor moves), simple ESC sequences, CR and
// backspace are kept: only the string sequences go (OSC 52 clipboard writes, OSC 8 links, titles, DCS/APC/PM/SOS).

const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;
const C1_CSI = 0x9b;
const C1_ST = 0x9c;
/** 8-bit DCS, SOS, OSC, PM, APC: each opens a string that runs to ST (or BEL). */
const C1_STRINGS = new Set([0x90, 0x98, 0x9d, 0x9e, 0x9f]);
/** After ESC: `]` OSC, `P` DCS, `X` SOS, `^` PM, `_` APC. */
const ESC_STRINGS = new Set([0x5d, 0x50, 0x58, 0x5e, 0x5f]);

type State = "ground" | "esc" | "csi" | "string" | "string-esc";

const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** A filter over one stream of text: `push` returns what is safe to show of each chunk, in order. */
export class TerminalTextFilter {
  #state: State = "ground";
  /** The sequence read so far, shown whole once it ends as a kept one (keepScreenControls). */
  #seq = "";

  constructor(private readonly keepScreenControls = false) {}

  push(chunk: string): string {
    if (this.#state === "ground" && !CONTROL.test(chunk)) return chunk; // the common case: plain text
    let out = "";
    let run = 0; // start of the current run of plain text
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (this.#state === "ground") {
        if (c === 0x0a || c === 0x09 || !isControl(c)) continue;
        if (this.keepScreenControls && (c === 0x0d || c === 0x08)) continue;
        out += chunk.slice(run, i);
        run = i + 1;
        this.#state = c === ESC ? "esc" : c === C1_CSI ? "csi" : C1_STRINGS.has(c) ? "string" : "ground";
        this.#seq = chunk[i]!;
        continue;
      }
      const before = this.#state;
      const ended = this.#step(c);
      if (this.keepScreenControls) this.#keep(before, ended, chunk[i]!, (t) => (out += t));
      if (ended) {
        run = i; // this character ended the sequence without being part of it: it is shown (or filtered) anew
        i--;
      } else {
        run = i + 1;
      }
    }
    if (this.#state === "ground") out += chunk.slice(run);
    return out;
  }

  /** Keeps a CSI or simple ESC sequence whole once it ends; a string sequence (and its end) is dropped. */
  #keep(before: State, ended: boolean, ch: string, emit: (text: string) => void): void {
    const now = this.#state;
    const inString = (st: State) => st === "string" || st === "string-esc";
    if (inString(now)) this.#seq = "";
    else if (inString(before)) this.#seq = now === "ground" ? "" : `\x1b${ch}`; // ended by ST, BEL or a line; or ESC began another
    else {
      if (!ended) this.#seq += ch;
      if (now === "ground") {
        if (!ended) emit(this.#seq);
        this.#seq = "";
      }
    }
  }

  /** One character inside a sequence; true when it is not part of it and must be read in ground. */
  #step(c: number): boolean {
    switch (this.#state) {
      case "esc":
        if (c === 0x5b) this.#state = "csi";
        else if (ESC_STRINGS.has(c)) this.#state = "string";
        else if (c === ESC || (c >= 0x20 && c <= 0x2f)) this.#state = "esc"; // a fresh ESC, or an intermediate byte
        else if (c >= 0x30 && c <= 0x7e) this.#state = "ground"; // the final byte
        else return this.#toGround();
        return false;
      case "csi":
        if (c >= 0x20 && c <= 0x3f) return false; // parameter and intermediate bytes
        if (c >= 0x40 && c <= 0x7e) return void (this.#state = "ground"), false;
        if (c === ESC) return void (this.#state = "esc"), false;
        return this.#toGround();
      case "string":
        if (c === BEL || c === C1_ST || c === CAN || c === SUB) this.#state = "ground";
        else if (c === ESC) this.#state = "string-esc";
        // A line ends an unterminated string here (terminals would swallow the rest of the answer).
        else if (c === 0x0a) return this.#toGround();
        return false;
      case "string-esc":
        if (c === 0x5c) return void (this.#state = "ground"), false; // ESC \ is ST
        this.#state = "esc"; // ESC ends the string and starts a sequence of its own
        return this.#step(c);
      default:
        return true;
    }
  }

  #toGround(): true {
    this.#state = "ground";
    return true;
  }
}

function isControl(c: number): boolean {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f);
}

/** `text` for an editor's display terminal: colours and cursor control kept, string sequences removed. */
export function screenSafe(): TerminalTextFilter {
  return new TerminalTextFilter(true);
}

/** `text` with every terminal control sequence and control character but newline and tab removed. */
export function stripTerminalControls(text: string): string {
  return new TerminalTextFilter().push(text);
}
