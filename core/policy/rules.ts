// Owns permission rules: the shape of a `[[rules]]` table, its validation, and the one matcher both
// the agent's policy and `tendril prompt --approve POLICY.toml` use, compiled once when the rules are
// parsed; a condition on `command` reads it as shell (shell-syntax.ts). Does not decide what a match
// means (policy.ts, approve.ts do).
import type Picomatch from "picomatch";
import { rootOf } from "../path-inside.ts";
import { describeIssue, lazySchema } from "../zod-issue.ts";
import { SHELL_COMMAND_ARG, shellCommandShape } from "./shell-syntax.ts";
import { denyForms } from "./deny-forms.ts";

export interface RuleCondition {
  arg: string;
  prefix?: string;
  glob?: string;
  regex?: string;
  inside_workspace?: boolean;
}

export interface RuleSpec {
  tool: string;
  decision: "allow" | "deny" | "ask";
  when?: RuleCondition;
  /** Where the rule came from, for `denied by policy: …` messages. */
  label: string;
}

export interface PermissionRule extends RuleSpec {
  /** True when the rule's `tool` glob matches one of the names and its `when` holds for the input.
   *  `workspace`: the root, or the roots (the first one is where relative paths start). */
  matches(names: readonly string[], input: unknown, workspace: string | readonly string[]): boolean;
}

export class RuleError extends Error {
  override name = "RuleError";
}

// Globs are shell globs over strings, not paths: `*` crosses `/` (`rm *` matches `rm -rf /tmp`) and
// dot files are not special. Tool names contain no `/`, so the same options serve both.
const GLOB_OPTIONS = { bash: true, dot: true } as const;

/** The glob compiler, picomatch: loaded with the first rule, so a run without rules never pays for it. */
export type GlobCompiler = typeof Picomatch;

export async function loadGlobCompiler(): Promise<GlobCompiler> {
  return (await import("picomatch")).default;
}

/** Compiles a rule once: its tool glob, argument glob and regex. Throws RuleError on a bad pattern. */
export function compileRule(spec: RuleSpec, picomatch: GlobCompiler): PermissionRule {
  const tool = picomatch(spec.tool, GLOB_OPTIONS);
  const c = spec.when;
  const glob = c?.glob !== undefined ? picomatch(c.glob, GLOB_OPTIONS) : undefined;
  let regex: RegExp | undefined;
  try {
    regex = c?.regex !== undefined ? new RegExp(c.regex) : undefined;
  } catch (err) {
    throw new RuleError(`${spec.label}: bad regex: ${(err as Error).message}`);
  }
  const test = (value: string, workspace: readonly string[]): boolean => {
    if (c!.prefix !== undefined && !value.startsWith(c!.prefix)) return false;
    if (glob && !glob(value)) return false;
    if (regex && !regex.test(value)) return false;
    if (c!.inside_workspace !== undefined && (rootOf(workspace, value) !== undefined) !== c!.inside_workspace) return false;
    return true;
  };
  const holds = (input: unknown, workspace: readonly string[]): boolean => {
    if (!c) return true;
    const value = input && typeof input === "object" ? (input as Record<string, unknown>)[c.arg] : undefined;
    if (typeof value !== "string") return false;
    if (c.arg !== SHELL_COMMAND_ARG) return test(value, workspace);
    // A shell command: an allow approves only one simple command as a whole (`git status` must not
    // approve `git status; curl … | sh` or `git status # ⏎curl … | sh`); deny and ask match the whole,
    // any command inside it, and each one's words as bash reads them (`'rm' -rf /`, `> f rm -rf /`).
    const shape = shellCommandShape(value);
    if (spec.decision === "allow") return shape.control === undefined && test(value, workspace);
    // Deny and ask fail closed (deny-forms.ts): what the reader cannot read with certainty matches.
    const d = denyForms(value);
    return d.uncertain !== undefined || d.forms.some((form) => test(form, workspace));
  };
  return { ...spec, matches: (names, input, workspace) => names.some((n) => tool(n)) && holds(input, typeof workspace === "string" ? [workspace] : workspace) };
}

/** The first rule matching, or undefined. */
/**
 * Whether an `allow` rule that matched `qualifiedName` may allow it: a hook (`server___name`, e.g. running a
 * command the sandbox stopped again without it) is allowed only by a rule naming it exactly, never by a
 * glob written for the server's ordinary tools. Deny rules are not limited.
 */
export function allowCovers(rule: RuleSpec, qualifiedName: string): boolean {
  return !isHookName(qualifiedName) || rule.tool === qualifiedName;
}

/** Whether `server__tool` names a hook (its tool starts with `_`), e.g. `dev___ShellUnsandboxed`. */
export function isHookName(qualifiedName: string): boolean {
  const sep = qualifiedName.indexOf("__");
  return sep >= 0 && qualifiedName.startsWith("_", sep + 2);
}

export function firstMatch(rules: readonly PermissionRule[], names: readonly string[], input: unknown, workspace: string | readonly string[]) {
  return rules.find((r) => r.matches(names, input, workspace));
}

const rulesSchema = lazySchema((z) => {
  const condition = z
    .strictObject({
      arg: z.string().min(1),
      prefix: z.string().optional(),
      glob: z.string().optional(),
      regex: z.string().optional(),
      inside_workspace: z.boolean().optional(),
    })
    .refine((c) => c.prefix !== undefined || c.glob !== undefined || c.regex !== undefined || c.inside_workspace !== undefined, {
      message: "when needs one of prefix, glob, regex, inside_workspace",
    });
  const rule = z.strictObject({
    tool: z.string().min(1),
    decision: z.enum(["allow", "deny", "ask"], { error: "decision must be allow, deny or ask" }),
    when: condition.optional(),
  });
  return z.array(rule);
});

/** Validates and compiles `[[rules]]` tables from `where` (a file name). Rejects with a RuleError naming the problem. */
export async function parseRules(raw: unknown, where: string): Promise<PermissionRule[]> {
  if (raw === undefined) return [];
  const parsed = (await rulesSchema()).safeParse(raw);
  if (!parsed.success) throw new RuleError(describeIssue(parsed.error, where, "rules"));
  const picomatch = await loadGlobCompiler();
  return parsed.data.map((r, i) => {
    const spec: RuleSpec = { tool: r.tool, decision: r.decision, label: `${where} rules[${i}] (${r.tool} ${r.decision})` };
    if (r.when) spec.when = r.when;
    return compileRule(spec, picomatch);
  });
}
