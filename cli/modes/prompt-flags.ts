// Owns `tendril prompt`'s flags: the one table the command line parser (with the help's groups) and the
// fast path both read, and the values they give. Does not parse or check values: cli/modes/prompt.ts does.
import { OUTPUT_FORMATS, type OutputFormat } from "../../core/acp-client/prompt-output.ts";
import { SANDBOX_MODES } from "../../core/sandbox-modes.ts";

export interface PromptFlags {
  agent?: string;
  cwd?: string;
  approve: string;
  output: OutputFormat;
  timeout?: string;
  mcp?: string[];
  sandbox?: string;
  maxTurns?: string;
  model?: string;
  mode?: string;
  systemPrompt?: string;
  appendSystemPrompt?: string;
  outputFile?: string;
  outputSchema?: string;
  resume?: string;
  continue?: boolean;
  maxBudgetUsd?: string;
  /** false with `--no-session-persistence` (commander's name for a `--no-` switch). */
  sessionPersistence?: boolean;
}

/** The help's groups, in the order a CI author decides them. */
export const GROUPS = {
  ask: "What to ask:",
  agent: "Which agent:",
  may: "What it may do:",
  back: "What you get back:",
} as const;

export interface FlagSpec {
  name: string;
  short?: string;
  /** `<VALUE>`; none for a switch. */
  arg?: string;
  help: string;
  group: keyof typeof GROUPS;
  default?: string;
  choices?: readonly string[];
  repeatable?: boolean;
}

/** prompt's flags, the one table both the command line parser and the fast path read. */
export const FLAGS: FlagSpec[] = [
  { name: "system-prompt", arg: "<TEXT>", group: "ask", help: "replace the agent's system prompt (_meta.systemPrompt)" },
  { name: "append-system-prompt", arg: "<TEXT>", group: "ask", help: "add TEXT to the agent's system prompt (_meta.systemPrompt.append)" },
  { name: "resume", arg: "<ID>", group: "ask", help: "continue that session of the agent (session/resume, else session/load)" },
  { name: "continue", group: "ask", help: "continue the agent's newest session for --cwd (session/list)" },
  { name: "agent", arg: "<CMD>", group: "agent", help: "ACP agent command, shell-split; leading NAME=value words set env (default: tendril agent)" },
  { name: "model", arg: "<ID>", group: "agent", help: "the agent's model for this session (its `model` config option, or session/set_model)" },
  { name: "mode", arg: "<ID>", group: "agent", help: "the agent's session mode (its `mode` config option, or session/set_mode)" },
  { name: "mcp", arg: "<NAME=CMD>", group: "agent", help: "add a stdio MCP server to the session (repeatable)", repeatable: true },
  { name: "cwd", arg: "<DIR>", group: "may", help: "workspace directory of the session (default: the current directory)" },
  { name: "approve", arg: "<POLICY>", group: "may", help: "permission answers: ask-deny (deny all), all, or a POLICY.toml with [[rules]]", default: "ask-deny" },
  { name: "sandbox", arg: "<S>", group: "may", help: "off, read-only or workspace-write: confine the built-in agent's shell commands (TENDRIL_SANDBOX)", choices: [...SANDBOX_MODES] },
  { name: "max-turns", arg: "<N>", group: "may", help: "stop after N model turns: the next one is cancelled (exit 5)" },
  { name: "timeout", arg: "<S>", group: "may", help: "cancel the turn and stop the agent after S seconds (exit 124)" },
  { name: "max-budget-usd", arg: "<N>", group: "may", help: "cancel the turn once the session's reported cost reaches N US dollars (exit 6)" },
  { name: "no-session-persistence", group: "may", help: "the built-in agent writes no session file for this run" },
  { name: "output", arg: "<FORMAT>", group: "back", help: "text, json (one object) or stream-json (one line per update)", default: "text", choices: [...OUTPUT_FORMATS] },
  { name: "output-schema", arg: "<FILE>", group: "back", help: "the answer must be one JSON document valid against this JSON Schema (asked once more if not; exit 4)" },
  { name: "output-file", short: "o", arg: "<FILE>", group: "back", help: "also write the final answer text (or the --output-schema document) to FILE" },
];

/** `max-turns` → `maxTurns`, the key commander gives a flag (`no-x` → `x`, which the switch sets false). */
export function flagKey(name: string): keyof PromptFlags {
  return name.replace(/^no-/, "").replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()) as keyof PromptFlags;
}

/** A flag's value as commander gives it: a `--no-` switch that is present is false. */
export function flagValue(name: string, value: unknown): unknown {
  return name.startsWith("no-") && value === true ? false : value;
}

/** The plain command lines the fast path takes: values by flag name (the last of a repeated flag, an
 *  array for a repeatable one), and the positionals. */
export interface PlainArgs {
  values: Record<string, string | boolean | string[]>;
  positionals: string[];
}

/**
 * The command line when it is plain, read with the flag table alone (node:util's parser costs ~3 ms
 * to load, a tenth of a one-line `tendril prompt`): `--name`, `--name VALUE`, `--name=VALUE`, `-o VALUE`
 * and positionals. Anything else — an unknown flag, a missing value, a value that looks like a flag,
 * `--`, bundled short flags — is undefined, for the full parser to take or refuse.
 */
export function parsePlain(args: readonly string[]): PlainArgs | undefined {
  const values: PlainArgs["values"] = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-" || !a.startsWith("-")) {
      positionals.push(a);
      continue;
    }
    const eq = a.startsWith("--") ? a.indexOf("=") : -1;
    const spec = a.startsWith("--") ? FLAGS.find((f) => f.name === (eq < 0 ? a.slice(2) : a.slice(2, eq))) : FLAGS.find((f) => f.short !== undefined && a === `-${f.short}`);
    if (!spec) return undefined;
    if (!spec.arg) {
      if (eq >= 0) return undefined;
      values[spec.name] = true;
      continue;
    }
    let value: string;
    if (eq >= 0) value = a.slice(eq + 1);
    else {
      const next = args[i + 1];
      if (next === undefined || next.startsWith("-")) return undefined;
      value = next;
      i++;
    }
    if (spec.repeatable) values[spec.name] = [...((values[spec.name] as string[] | undefined) ?? []), value];
    else values[spec.name] = value;
  }
  return { values, positionals };
}

