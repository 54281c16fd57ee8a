// Owns the permission decision for one tool call: config rules (first match wins), the session mode,
// MCP readOnlyHint, and `*_always` answers, remembered for the session and, with an ApprovalStore,
// for the workspace in every later session and process, by the first words of an allow-listed read
// command or else the exact command. A remembered allow never covers a shell command with control
// syntax; a remembered rejection covers every command inside one. Does not talk to the client.
import type { PermissionMode } from "./modes.ts";
import { log } from "../log.ts";
import type { ApprovalStore } from "./approvals.ts";
import { allowCovers, firstMatch, isHookName, type PermissionRule } from "./rules.ts";
import { rememberedWords, shellCommandOf, shellCommandShape } from "./shell-syntax.ts";

export interface PolicyCall {
  /** `server__tool`, what rules match on. */
  qualifiedName: string;
  tool: string;
  input: Record<string, unknown>;
  readOnly: boolean;
}

export type Decision =
  | { decision: "allow"; why: string }
  | { decision: "deny"; why: string }
  | { decision: "ask" };

export interface Policy {
  decide(call: PolicyCall): Decision;
  /** Records an `allow_always` / `reject_always` answer for the session (and the workspace, when stored). */
  remember(call: PolicyCall, answer: "allow" | "reject"): void;
  setMode(mode: PermissionMode): void;
  readonly mode: PermissionMode;
}

export interface PolicyOptions {
  rules: PermissionRule[];
  mode: PermissionMode;
  /** Absolute workspace root, for `inside_workspace` conditions and remembered approvals. */
  workspace: string;
  /** More workspace roots (ACP `additionalDirectories`): inside one of them is inside the workspace. */
  additionalRoots?: readonly string[];
  /** Persists `*_always` answers per workspace; undefined = this session only. */
  approvals?: ApprovalStore;
}

/** What the model reads when a mode that changes nothing denies a call. */
const MODE_DENIALS = {
  "read-only": "denied by mode read-only: the tool may change things",
  plan: "denied by mode plan: the tool may change things. Explore with read-only tools, then call plan__ready with your plan; the user decides whether to switch modes and carry it out",
} as const;

const EDIT_TOOLS = new Set(["str_replace", "write", "edit", "write_file", "edit_file"]);

/**
 * The remembered-approval scope: the tool, and for a call with a shell command the words
 * `rememberedWords` picks (the first words of an allow-listed read command, or the whole command).
 * A hook's (running a command again without the sandbox) is always the exact command as given.
 */
export function approvalScope(call: PolicyCall): string {
  const command = shellCommandOf(call.input);
  if (command === undefined) return call.qualifiedName;
  return `${call.qualifiedName} ${isHookName(call.qualifiedName) ? command : rememberedWords(command).words}`;
}

/** A shell call's working folder as the model gave it, normalised; undefined for the root. */
function workdirOf(input: Record<string, unknown>): string | undefined {
  const wd = input.workdir;
  if (typeof wd !== "string") return undefined;
  const norm = wd.replace(/\/+$/, "").replace(/^(\.\/)+/, "");
  return norm === "" || norm === "." ? undefined : norm;
}

/** What a remembered allow covers: the approval scope in its working folder (git in another folder
 *  reads another repository's config, so `git status` allowed at the root is not allowed in src/). */
function allowScope(call: PolicyCall): string {
  const scope = approvalScope(call);
  const wd = shellCommandOf(call.input) === undefined ? undefined : workdirOf(call.input);
  return wd === undefined ? scope : `${scope} [in ${wd}]`;
}

/**
 * Every scope a remembered rejection of which denies the call: its own, each command's inside a
 * compound one, and each command's first word (as written and as bash reads it), so a rejection
 * saved by first word still rejects every command starting with it.
 */
function rejectionScopes(call: PolicyCall): string[] {
  const command = shellCommandOf(call.input);
  if (command === undefined) return [call.qualifiedName];
  const shape = shellCommandShape(command);
  const inner = shape.control ? shape.segments.map((s) => approvalScope({ ...call, input: { ...call.input, command: s } })) : [];
  const firstWords = [...shape.segments.map((s) => s.split(/\s+/, 1)[0]!), ...shape.words.map((w) => w[0] ?? "")].filter((w) => w !== "");
  return [...new Set([approvalScope(call), ...inner, ...firstWords.map((w) => `${call.qualifiedName} ${w}`)])];
}

/**
 * What "Always allow" says it covers, for the permission question; undefined when it is not offered
 * (a compound shell command: its allow could only ever be this once).
 */
export function alwaysAllowName(call: PolicyCall): string | undefined {
  const command = shellCommandOf(call.input);
  if (command === undefined) return "Always allow";
  if (!mayRememberAllow(call)) return undefined;
  if (isHookName(call.qualifiedName)) return "Always allow this exact command";
  const { words, whole } = rememberedWords(command);
  return whole ? "Always allow this exact command" : `Always allow \`${words}\` commands`;
}

/** Whether an "always" allow may apply to the call: not to a shell command with control syntax. */
export function mayRememberAllow(call: PolicyCall): boolean {
  const command = shellCommandOf(call.input);
  return command === undefined || shellCommandShape(command).control === undefined;
}

/** The tool that writes to a background command's stdin (`SERVER__shell_write`), beside `SERVER__shell`. */
const STDIN_TOOL = "shell_write";

/** A stdin write as the shell call the deny and ask rules judge: `SERVER__shell {command: TEXT}`. */
function writtenAsCommand(call: PolicyCall): { qualifiedName: string; input: Record<string, unknown> } | undefined {
  const text = call.input.text;
  if (call.tool !== STDIN_TOOL || typeof text !== "string" || !call.qualifiedName.endsWith(`__${STDIN_TOOL}`)) return undefined;
  return { qualifiedName: `${call.qualifiedName.slice(0, -STDIN_TOOL.length)}shell`, input: { command: text } };
}

export function createPolicy(opts: PolicyOptions): Policy {
  const remembered = new Map<string, "allow" | "reject">();
  const roots = [opts.workspace, ...(opts.additionalRoots ?? [])];
  let mode = opts.mode;

  return {
    get mode() {
      return mode;
    },
    setMode(next) {
      mode = next;
    },
    remember(call, answer) {
      // An allow of a compound command is this once only: the client was offered no "always" for it.
      if (answer === "allow" && !mayRememberAllow(call)) return;
      const scope = answer === "allow" ? allowScope(call) : approvalScope(call);
      remembered.set(scope, answer);
      try {
        opts.approvals?.add({ decision: answer, tool: call.qualifiedName, scope, workspace: opts.workspace });
      } catch (err) {
        // The session still remembers it; only later sessions will not.
        log.warn("could not save the approval; it holds for this session only", { scope, error: err });
      }
    },
    decide(call) {
      // Text written to a background command's stdin may be a command to a shell or an interpreter:
      // the deny and ask rules on that server's shell read it as one (fail closed: a deny on `rm `
      // is not bypassed by `bash` in the background and `rm …` written to it).
      const written = writtenAsCommand(call);
      const byText = written && firstMatch(opts.rules, [written.qualifiedName], written.input, roots);
      if (byText?.decision === "deny") return { decision: "deny", why: `denied by policy: ${byText.label} (the text written to a background command reads as a command)` };
      const rule = byText?.decision === "ask" ? byText : firstMatch(opts.rules, [call.qualifiedName], call.input, roots);
      if (rule?.decision === "deny") return { decision: "deny", why: `denied by policy: ${rule.label}` };
      if (rule?.decision === "allow" && allowCovers(rule, call.qualifiedName)) return { decision: "allow", why: `allowed by policy: ${rule.label}` };
      if (!rule && call.readOnly) return { decision: "allow", why: "read-only tool" };
      if (mode === "yolo") return { decision: "allow", why: "mode yolo" };
      // Hard modes: nothing remembered and no question can let a tool that may change things run.
      if (mode === "read-only" || mode === "plan") return { decision: "deny", why: MODE_DENIALS[mode] };
      for (const scope of rejectionScopes(call)) {
        if (remembered.get(scope) === "reject") return { decision: "deny", why: "rejected always for this session" };
        if (opts.approvals?.lookup(opts.workspace, scope) === "reject") return { decision: "deny", why: `rejected always in ${opts.workspace}` };
      }
      if (mayRememberAllow(call)) {
        const scope = allowScope(call);
        if (remembered.get(scope) === "allow") return { decision: "allow", why: "allowed always for this session" };
        if (opts.approvals?.lookup(opts.workspace, scope) === "allow") return { decision: "allow", why: `allowed always in ${opts.workspace}` };
      }
      if (mode === "auto-edit" && EDIT_TOOLS.has(call.tool)) return { decision: "allow", why: "mode auto-edit" };
      return { decision: "ask" };
    },
  };
}
