// Owns what a deny (or ask) rule on shell commands is matched against, failing closed: the forms
// shell-syntax.ts reads as bash does, plus crude pieces of the text cut at every operator and line, with
// the commands a wrapper runs (`command rm`, `sudo -u x rm`, `eval 'rm …'`) and quotes removed; and what
// the reader cannot read with certainty (eval, source, arithmetic on variables, `$'\c`) matches every rule.
import { commandForms, shellCommandShape, UNREADABLE } from "./shell-syntax.ts";

/** Words that run the command (or code) in their arguments: every later word may start it. */
const WRAPPERS = new Set([
  "command", "exec", "builtin", "nohup", "env", "time", "nice", "ionice", "timeout", "xargs", "sudo", "doas", "setsid",
  "stdbuf", "busybox", "chrt", "taskset", "unbuffer", "flock", "watch", "strace", "ltrace", "nsenter", "unshare", "chroot",
  "bash", "sh", "zsh", "dash", "ksh", "fish", "eval", "source", ".", "then", "do", "else", "if", "while", "until", "!",
]);
/** Words whose argument is code the reader does not follow (a string, a file): counted as matching. */
const UNREADABLE_RUNNERS = new Set(["eval", "source", ".", "let", "declare", "typeset", "mapfile", "readarray", "trap", "fc", "enable"]);

export interface DenyForms {
  forms: string[];
  /** Why the command cannot be read with certainty: then every deny rule on commands matches it. */
  uncertain?: string;
}

/** Pieces of the text cut at operators, lines, brackets and substitutions: what bash might run, crudely. */
function pieces(command: string): string[] {
  return command.split(/\n|;|&&|\|\||\||&|\$\(|\(|\)|`|\{|\}|<\(|>\(/).map((p) => p.trim()).filter((p) => p !== "");
}

/** Quotes and backslashes removed, as a last-resort reading of a word list. */
function unquoted(text: string): string {
  return text.replace(/\$'|\$"|['"\\]/g, "").replace(/\s+/g, " ").trim();
}

/** Each suffix of a piece after a wrapper word (`sudo -u x rm y` → `-u x rm y`, `x rm y`, `rm y`). */
function afterWrappers(piece: string): string[] {
  const words = piece.split(/\s+/);
  const out: string[] = [];
  let k = 0;
  while (k < words.length && /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(words[k]!)) k++;
  if (k > 0) out.push(words.slice(k).join(" "));
  if (k < words.length && WRAPPERS.has(unquoted(words[k]!))) for (let j = k + 1; j < words.length; j++) out.push(words.slice(j).join(" "));
  return out;
}

/** Why a command cannot be read with certainty, or undefined. */
export function uncertainty(command: string): string | undefined {
  const shape = shellCommandShape(command);
  if (shape.control === UNREADABLE) return UNREADABLE;
  if (/\$'[^']*\\c/.test(command)) return "`\\c` inside `$'…'` (it swallows the character after it)";
  // Arithmetic evaluates a variable's value as an expression, and a subscript in it runs `$(…)`.
  for (const m of command.matchAll(/\$\(\(([\s\S]*?)\)\)|\(\(([\s\S]*?)\)\)|\$\[([\s\S]*?)\]/g)) {
    if (/[A-Za-z_$]/.test(m[1] ?? m[2] ?? m[3] ?? "")) return "arithmetic on variables";
  }
  for (const p of pieces(command)) {
    const first = unquoted(p.split(/\s+/).find((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) ?? "");
    if (UNREADABLE_RUNNERS.has(first)) return `\`${first}\` (its argument is code the reader does not follow)`;
  }
  // A here-document that never ends swallows the rest of the text.
  for (const m of command.matchAll(/(?<!<)<<(?!<)-?\s*(['"]?)([A-Za-z0-9_]+)\1/g)) {
    if (!new RegExp(`^\\t*${m[2]}$`, "m").test(command.slice(m.index! + m[0].length))) return "an unterminated here-document";
  }
  return undefined;
}

/** Every form a deny or ask rule is matched against, and whether the command is readable at all. */
export function denyForms(command: string): DenyForms {
  const forms = new Set(commandForms(command));
  for (const piece of pieces(command)) {
    for (const f of [piece, unquoted(piece), ...afterWrappers(piece), ...afterWrappers(unquoted(piece))]) forms.add(f);
  }
  for (const f of [...forms]) for (const s of afterWrappers(f)) forms.add(s);
  const why = uncertainty(command);
  return { forms: [...forms], ...(why !== undefined && { uncertain: why }) };
}
