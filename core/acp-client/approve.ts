// Owns `tendril prompt --approve`: how a non-interactive client answers session/request_permission
// (ask-deny, all, or a POLICY.toml of [[rules]]). Nobody is there to ask, so `ask` always means deny.
// Does not know ACP's SDK: the request and answer are plain structural types the client adapter fills.
import { ConfigError, type PermissionRule, parseConfigFile, parseRules } from "../config.ts";
import { HOOK } from "../mcp/tool-definition.ts";
import { allowCovers, firstMatch } from "../policy/rules.ts";
import { shellCommandOf, shellCommandShape } from "../policy/shell-syntax.ts";

export type ApprovalPolicy =
  | { kind: "ask-deny" }
  | { kind: "all" }
  | { kind: "rules"; file: string; rules: PermissionRule[] };

export interface PermissionOptionLike {
  optionId: string;
  name?: string;
  kind: string;
}

/** What the client knows of the tool call being asked about (request merged with earlier updates). */
export interface ToolCallLike {
  id: string;
  title?: string;
  /** The tool's own name when the agent declares one (see tool-call-table.ts's declaredToolName). */
  name?: string;
  kind?: string;
  rawInput?: unknown;
}

export type PermissionOutcome = { outcome: "selected"; optionId: string } | { outcome: "cancelled" };

export interface Decision {
  answer: PermissionOutcome;
  allowed: boolean;
  /** Why, for the tool activity line: `--approve all`, a rule label, or the default. */
  reason: string;
}

/**
 * Reads the `--approve` value: `ask-deny`, `all`, or a path to a TOML file with [[rules]].
 * Rejects with a ConfigError naming the problem (missing file, bad TOML, bad rule, no rules).
 */
export async function parseApprovalPolicy(value: string, readFile: (path: string) => string | undefined): Promise<ApprovalPolicy> {
  if (value === "ask-deny") return { kind: "ask-deny" };
  if (value === "all") return { kind: "all" };
  const text = readFile(value);
  if (text === undefined) {
    throw new ConfigError(`--approve must be ask-deny, all or a POLICY.toml file; cannot read ${value}`);
  }
  const table = parseConfigFile(value, text, true);
  const extra = Object.keys(table).filter((k) => k !== "rules");
  if (extra.length > 0) throw new ConfigError(`${value}: a policy file holds only [[rules]]; unknown key ${extra[0]}`);
  const rules = await parseRules(table.rules, value);
  if (rules.length === 0) throw new ConfigError(`${value}: no [[rules]] tables; add at least one rule`);
  return { kind: "rules", file: value, rules };
}

/** Names a rule's `tool` glob is matched against: the declared name, the title and its leading word. */
export function toolCallNames(call: ToolCallLike): string[] {
  const names: string[] = [];
  const add = (v: unknown) => {
    if (typeof v === "string" && v !== "" && !names.includes(v)) names.push(v);
  };
  add(call.name);
  add(call.title);
  add(call.title?.split(/[:\s(]/, 1)[0]);
  return names;
}

function pick(options: PermissionOptionLike[], kinds: string[]): PermissionOptionLike | undefined {
  for (const kind of kinds) {
    const found = options.find((o) => o.kind === kind);
    if (found) return found;
  }
  return undefined;
}

function allow(options: PermissionOptionLike[], reason: string): Decision {
  const option = pick(options, ["allow_once", "allow_always"]);
  if (!option) return { answer: { outcome: "cancelled" }, allowed: false, reason: `${reason}, but no allow option` };
  return { answer: { outcome: "selected", optionId: option.optionId }, allowed: true, reason };
}

// reject_always is never chosen: it would be remembered by the agent beyond this one run.
function deny(options: PermissionOptionLike[], reason: string): Decision {
  const option = pick(options, ["reject_once"]);
  if (!option) return { answer: { outcome: "cancelled" }, allowed: false, reason };
  return { answer: { outcome: "selected", optionId: option.optionId }, allowed: false, reason };
}

/** Answers one permission request. Rules: first match wins; `ask` and no match both deny. */
export function decidePermission(
  policy: ApprovalPolicy,
  call: ToolCallLike,
  options: PermissionOptionLike[],
  cwd: string,
): Decision {
  if (policy.kind === "all") {
    // Nobody watches a `--approve all` run: the sandbox the run asked for stays; a rule naming the hook lifts it.
    if (call.name?.endsWith(`__${HOOK.shellUnsandboxed}`)) return deny(options, `denied: --approve all does not lift the sandbox (a POLICY.toml rule on ${call.name} does)`);
    return allow(options, "--approve all");
  }
  if (policy.kind === "ask-deny") return deny(options, "denied: nobody to ask (use --approve all or a POLICY.toml)");
  const rule = firstMatch(policy.rules, toolCallNames(call), call.rawInput, cwd);
  if (!rule) {
    const control = compoundControl(call.rawInput);
    const why = control ? ` (an allow rule on command approves one simple command; this one has \`${control}\`)` : "";
    return deny(options, `denied: no rule in ${policy.file} matches${why}`);
  }
  if (rule.decision === "allow" && call.name !== undefined && !allowCovers(rule, call.name)) {
    return deny(options, `denied: ${rule.label} is a pattern; only a rule naming ${call.name} exactly lifts the sandbox`);
  }
  if (rule.decision === "allow") return allow(options, `allowed by ${rule.label}`);
  if (rule.decision === "deny") return deny(options, `denied by ${rule.label}`);
  return deny(options, `denied: ${rule.label} says ask and nobody is there to ask`);
}

/** The control syntax of the call's shell command, if it has one: why an allow rule did not match. */
function compoundControl(input: unknown): string | undefined {
  const command = shellCommandOf(input);
  return command === undefined ? undefined : shellCommandShape(command).control;
}
