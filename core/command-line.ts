// Owns turning a command string ("A=1 bun agent.ts --flag 'two words'") into env + argv, POSIX-shell
// style quoting only (no expansion, pipes or globs), and finding a command on a PATH string.
// Does not spawn anything and does not read the process environment: callers pass PATH in.
import { findCommand } from "./process-group.ts";

export interface CommandLine {
  /** Leading NAME=value words. */
  env: Record<string, string>;
  command: string;
  args: string[];
}

export class CommandLineError extends Error {
  override name = "CommandLineError";
}

/** Splits like a POSIX shell: whitespace separates words; '…' is literal; "…" honours \" \\ \$ \`. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      i++;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new CommandLineError(`unterminated ' quote in ${JSON.stringify(text)}`);
      word += text.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      const [part, next] = readDoubleQuoted(text, i + 1);
      word += part;
      inWord = true;
      i = next;
    } else if (c === "\\") {
      if (i + 1 < text.length && text[i + 1] !== "\n") word += text[i + 1];
      inWord = true;
      i += 2;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) words.push(word);
  return words;
}

function readDoubleQuoted(text: string, start: number): [string, number] {
  let out = "";
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') return [out, i + 1];
    if (c === "\\" && i + 1 < text.length && '"\\$`\n'.includes(text[i + 1]!)) {
      if (text[i + 1] !== "\n") out += text[i + 1];
      i++;
    } else {
      out += c;
    }
  }
  throw new CommandLineError(`unterminated " quote in ${JSON.stringify(text)}`);
}

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;

/** Splits a command string; leading NAME=value words become env. Throws CommandLineError. */
export function parseCommandLine(text: string): CommandLine {
  const words = splitWords(text);
  const env: Record<string, string> = {};
  let i = 0;
  for (; i < words.length; i++) {
    const m = ASSIGNMENT.exec(words[i]!);
    if (!m) break;
    env[m[1]!] = m[2]!;
  }
  const command = words[i];
  if (command === undefined || command === "") {
    throw new CommandLineError(`no command in ${JSON.stringify(text)}`);
  }
  return { env, command, args: words.slice(i + 1) };
}

/**
 * The absolute path of `command`: a name with a slash resolves against `cwd`; a bare name is looked
 * up in `pathVar` (a PATH string). Undefined when nothing executable is there.
 */
export function resolveCommand(command: string, pathVar: string, cwd: string): string | undefined {
  // One lookup for every command Tendril starts: the one that spawns them.
  return findCommand(command, pathVar, cwd);
}
