// Owns what the permission engine knows of shell syntax: whether a command is one simple command
// (no control syntax: nothing chained, piped, substituted or redirected), and the simple commands a
// compound one is made of, for deny rules and remembered rejections to match anywhere in it.
// Does not parse shell grammar: any doubt (an unclosed quote, a stray parenthesis) counts as control.

export interface ShellCommandShape {
  /** The first control syntax found, e.g. `;`, `&&`, `$(`, `>`; undefined for one simple command. */
  control: string | undefined;
  /** The simple commands in it, split at every control token (substitutions' insides included), trimmed. */
  segments: string[];
}

// Two-character tokens first, so `&&` is named as such rather than as `&`.
const PAIRS = ["&&", "||", ";;", "$(", "${", "<(", ">(", ">>", "<<", "&>", "|&"];
const SINGLES = new Set([";", "&", "|", "`", ">", "<", "(", ")", "\n", "\r", "\0"]);

/**
 * Scans `command` as a POSIX shell would read its quoting: inside single quotes nothing is special;
 * inside double quotes only `$(` and a backquote are; a backslash outside single quotes escapes the
 * next character (an escaped newline still counts: it is easy to misread). `${` counts as control
 * (its expansions can hide a substitution), a plain `$NAME` does not.
 */
export function shellCommandShape(command: string): ShellCommandShape {
  // Most commands have nothing to scan for.
  if (!/[;&|`<>()$\n\r\0\\'"]/.test(command)) return { control: undefined, segments: command.trim() ? [command.trim()] : [] };
  const segments: string[] = [];
  let control: string | undefined;
  let current = "";
  let quote: "'" | '"' | undefined;
  const cut = (token: string) => {
    control ??= token;
    if (current.trim()) segments.push(current.trim());
    current = "";
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    const pair = command.slice(i, i + 2);
    if (quote === "'") {
      if (c === "'") quote = undefined;
      current += c;
      continue;
    }
    if (c === "\\") {
      const next = command[i + 1];
      if (next === "\n" || next === "\r" || next === undefined) cut(next === undefined ? "\\" : "\\\n");
      else current += c + next;
      i++;
      continue;
    }
    if (quote === '"') {
      if (pair === "$(" || pair === "${") {
        cut(pair);
        i++;
      } else if (c === "`" || c === "\n" || c === "\r" || c === "\0") {
        cut(c);
      } else {
        if (c === '"') quote = undefined;
        current += c;
      }
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      current += c;
      continue;
    }
    if (PAIRS.includes(pair)) {
      cut(pair);
      i++;
      continue;
    }
    if (SINGLES.has(c)) cut(c);
    else current += c;
  }
  if (quote) control ??= `an unclosed ${quote}`;
  if (current.trim()) segments.push(current.trim());
  return { control, segments };
}

// Commands that run another command given as their arguments: remembering one by its first word
// would approve whatever it is asked to run, so such a command is remembered only as a whole.
const COMMAND_RUNNERS = new Set([
  "sudo", "doas", "su", "runuser", "env", "xargs", "sh", "bash", "zsh", "dash", "ksh", "fish", "busybox",
  "eval", "exec", "command", "builtin", "nohup", "timeout", "nice", "ionice", "time", "watch", "stdbuf",
  "setsid", "chroot", "unshare", "nsenter", "flock", "strace", "ltrace", "parallel", "script",
]);

/**
 * The words a remembered approval of this command covers: its first word, or the whole command when
 * the first word runs other commands (`sudo`, `xargs`, `bash -c`), sets variables (`LD_PRELOAD=… ls`)
 * or the command has control syntax. `whole` tells which.
 */
export function rememberedWords(command: string): { words: string; whole: boolean } {
  const trimmed = command.trim();
  const first = trimmed.split(/\s+/, 1)[0] ?? "";
  const name = first.slice(first.lastIndexOf("/") + 1);
  if (shellCommandShape(trimmed).control || first.includes("=") || COMMAND_RUNNERS.has(name)) return { words: trimmed, whole: true };
  return { words: first, whole: false };
}

/** The argument read as a shell command, whatever the tool: `dev__shell`'s, and any other tool's of that name. */
export const SHELL_COMMAND_ARG = "command";

/** The call's shell command, when its input has one. */
export function shellCommandOf(input: unknown): string | undefined {
  const value = input && typeof input === "object" ? (input as Record<string, unknown>)[SHELL_COMMAND_ARG] : undefined;
  return typeof value === "string" ? value : undefined;
}
