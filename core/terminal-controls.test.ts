import { expect, test } from "bun:test";
import { stripTerminalControls, TerminalTextFilter, screenSafe } from "./terminal-controls.ts";

const ESC = "\x1b";
const HOSTILE: [string, string, string][] = [
  ["OSC 52 clipboard write (BEL)", `copy ${ESC}]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07this`, "copy this"],
  ["OSC 52 clipboard write (ST)", `a${ESC}]52;c;ZXZpbA==${ESC}\\b`, "ab"],
  ["window title set", `${ESC}]0;pwned${ESC}\\${ESC}]2;again\x07ok`, "ok"],
  ["OSC 8 hyperlink", `${ESC}]8;;https://evil.example${ESC}\\click${ESC}]8;;${ESC}\\`, "click"],
  ["cursor moves and erases", `one${ESC}[2A${ESC}[1;1H${ESC}[2J${ESC}[K two`, "one two"],
  ["SGR colours and private modes", `${ESC}[31;1mred${ESC}[0m ${ESC}[?1049h${ESC}[?25l`, "red "],
  ["CR overwrite", "rm -rf / # \rls -l\n", "rm -rf / # ls -l\n"],
  ["backspaces, BEL, NUL, DEL", "a\bb\x07c\x00d\x7fe", "abcde"],
  ["8-bit CSI and OSC (C1)", "x\u009b2Jy\u009d0;title\u009cz\u0085w", "xyzw"],
  ["DCS, SOS, PM, APC strings", `${ESC}Pq#0;2;0;0;0${ESC}\\${ESC}Xsos${ESC}\\${ESC}^pm${ESC}\\${ESC}_apc${ESC}\\done`, "done"],
  ["two-byte escapes (charset, keypad, reset)", `${ESC}(0${ESC}=${ESC}c${ESC}7${ESC}8fine`, "fine"],
  ["newline and tab kept, CRLF becomes LF", "a\tb\r\nc\n", "a\tb\nc\n"],
  ["an unterminated OSC ends with its line", `${ESC}]0;never closed\nthe answer`, "\nthe answer"],
  ["an ESC before a newline or a non-ASCII letter", `${ESC}\n${ESC}é`, "\né"],
];

for (const [what, input, shown] of HOSTILE) {
  test(`stripTerminalControls removes ${what}`, () => {
    expect(stripTerminalControls(input)).toBe(shown);
  });
}

test("plain text, Unicode and emoji pass unchanged (the same string)", () => {
  const text = "Grüße — 你好 👋 `code` [link](x) ~/path; 100% done\n";
  expect(stripTerminalControls(text)).toBe(text);
});

test("a sequence split across chunks, at every split point, is removed whole", () => {
  for (const [, input, shown] of HOSTILE) {
    for (let cut = 0; cut <= input.length; cut++) {
      const f = new TerminalTextFilter();
      expect(f.push(input.slice(0, cut)) + f.push(input.slice(cut))).toBe(shown);
    }
  }
});

test("nothing a terminal acts on survives: no control character but LF and TAB in any output", () => {
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const alphabet = [ESC, "[", "]", "\\", "\x07", "\x9b", "\x9c", "\x9d", "\r", "\n", "\t", "a", "0", ";", "P", "_", "\x18", "\x85"];
  const f = new TerminalTextFilter();
  for (let i = 0; i < 2000; i++) {
    let chunk = "";
    for (let j = 0; j < 12; j++) chunk += alphabet[Math.floor(rand() * alphabet.length)];
    expect(f.push(chunk)).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  }
});

test("regression: an editor's display terminal got raw OSC 52, OSC 8 and title strings; now they go, colours, cursor moves, CR and clear-screen stay, also split across chunks", () => {
  const f = screenSafe();
  const chunks = [`\x1b[32mok\x1b[0m\r\x1b[2Kdone \x1b]52;c;ZXZp`, `bA==\x07\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ \x1b]0;title\x07\x1b[2J\x1bP1;2q\x1b\\end\x1b[`, `1A\n`];
  expect(chunks.map((c) => f.push(c)).join("")).toBe(`\x1b[32mok\x1b[0m\r\x1b[2Kdone link \x1b[2Jend\x1b[1A\n`);
});
