// Owns ripgrep's -g/--iglob globs: `{a,b}` alternatives, case-insensitive globs, and the override verdict
// (a match of a glob keeps a path, of a `!glob` drops it). Does not walk (walk.ts applies the verdict first).
import { RuleSet, type Verdict } from "./ignore-rules.ts";

/** Why ripgrep refuses a glob (its message, naming the glob), or undefined when it parses. */
export function globError(glob: string): string | undefined {
  const why = globProblem(glob.startsWith("!") ? glob.slice(1) : glob);
  return why && `error parsing glob '${glob}': ${why}`;
}

function globProblem(g: string): string | undefined {
  let inAlt = false;
  for (let i = 0; i < g.length; i++) {
    const c = g[i]!;
    if (c === "\\") {
      if (i + 1 >= g.length) return "dangling '\\'";
      i++;
    } else if (c === "[") {
      let j = i + 1;
      if (g[j] === "!" || g[j] === "^") j++;
      const first = j;
      for (; j < g.length && (g[j] !== "]" || j === first); j++) {
        if (g[j + 1] === "-" && j + 2 < g.length && g[j + 2] !== "]") {
          if (g[j]! > g[j + 2]!) return `invalid range; '${g[j]}' > '${g[j + 2]}'`;
          j += 2;
        }
      }
      if (j >= g.length) return "unclosed character class; missing ']'";
      i = j;
    } else if (c === "{") {
      if (inAlt) return "nested alternate groups are not allowed";
      inAlt = true;
    } else if (c === "}") inAlt = false;
  }
  return inAlt ? "unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)" : undefined;
}

/** Expands `{a,b}` alternatives, which ripgrep's globs have and gitignore syntax lacks. */
export function expandBraces(glob: string): string[] {
  const m = /\{([^{}]*)\}/.exec(glob);
  if (!m) return [glob];
  const [head, tail] = [glob.slice(0, m.index), glob.slice(m.index + m[0].length)];
  return m[1]!.split(",").flatMap((alt) => expandBraces(head + alt + tail));
}

/** A glob matching regardless of case (--iglob, --glob-case-insensitive): each letter becomes `[xX]`. */
export function caseless(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "\\") {
      out += glob.slice(i, i + 2);
      i++;
    } else if (c === "[") {
      const end = glob.indexOf("]", i + 2);
      const cls = end < 0 ? glob.slice(i) : glob.slice(i, end + 1);
      out += cls.replace(/\p{L}/gu, (l) => l.toLowerCase() + l.toUpperCase());
      i += cls.length - 1;
    } else {
      const lo = c.toLowerCase();
      const up = c.toUpperCase();
      out += lo === up ? c : `[${lo}${up}]`;
    }
  }
  return out;
}

/** ripgrep's -g: a match of a glob keeps the path, of a `!glob` drops it; with any plain glob, other files drop. */
export function globVerdict(globs: readonly string[]): ((path: string, isDir: boolean) => Verdict) | undefined {
  if (globs.length === 0) return undefined;
  const rules = new RuleSet(globs.flatMap(expandBraces)); // gitignore syntax: a match "ignores", `!` "whitelists"
  const anyPlain = globs.some((g) => !g.startsWith("!"));
  return (path, isDir) => {
    const v = rules.verdict(path, isDir);
    if (v === "ignore") return "whitelist";
    if (v === "whitelist") return "ignore";
    return anyPlain && !isDir ? "ignore" : undefined;
  };
}
