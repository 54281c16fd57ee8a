// Owns the permission decision for one tool call: config rules (first match wins), the session mode,
// MCP readOnlyHint, and `*_always` answers, remembered for the session and, with an ApprovalStore,
// for the workspace in every later session and process. Does not talk to the client (the turn asks).
import type { PermissionMode } from "../config.ts";
import { log } from "../log.ts";
import type { ApprovalStore } from "./approvals.ts";
import { firstMatch, type PermissionRule } from "./rules.ts";

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
  /** Persists `*_always` answers per workspace; undefined = this session only. */
  approvals?: ApprovalStore;
}

const EDIT_TOOLS = new Set(["str_replace", "write", "edit", "write_file", "edit_file"]);

/** The remembered-approval scope: the tool, and for a shell call the command's first word. */
export function approvalScope(call: PolicyCall): string {
  const command = call.input.command;
  if (call.tool === "shell" && typeof command === "string") {
    const first = command.trim().split(/\s+/)[0] ?? "";
    return `${call.qualifiedName} ${first}`;
  }
  return call.qualifiedName;
}

export function createPolicy(opts: PolicyOptions): Policy {
  const remembered = new Map<string, "allow" | "reject">();
  let mode = opts.mode;

  return {
    get mode() {
      return mode;
    },
    setMode(next) {
      mode = next;
    },
    remember(call, answer) {
      const scope = approvalScope(call);
      remembered.set(scope, answer);
      try {
        opts.approvals?.add({ decision: answer, tool: call.qualifiedName, scope, workspace: opts.workspace });
      } catch (err) {
        // The session still remembers it; only later sessions will not.
        log.warn("could not save the approval; it holds for this session only", { scope, error: err });
      }
    },
    decide(call) {
      const rule = firstMatch(opts.rules, [call.qualifiedName], call.input, opts.workspace);
      if (rule?.decision === "deny") return { decision: "deny", why: `denied by policy: ${rule.label}` };
      if (rule?.decision === "allow") return { decision: "allow", why: `allowed by policy: ${rule.label}` };
      if (!rule && call.readOnly) return { decision: "allow", why: "read-only tool" };
      if (mode === "yolo") return { decision: "allow", why: "mode yolo" };
      if (mode === "read-only") return { decision: "deny", why: "denied by mode read-only: the tool may change things" };
      const scope = approvalScope(call);
      const memory = remembered.get(scope);
      if (memory === "allow") return { decision: "allow", why: "allowed always for this session" };
      if (memory === "reject") return { decision: "deny", why: "rejected always for this session" };
      const saved = opts.approvals?.lookup(opts.workspace, scope);
      if (saved === "allow") return { decision: "allow", why: `allowed always in ${opts.workspace}` };
      if (saved === "reject") return { decision: "deny", why: `rejected always in ${opts.workspace}` };
      if (mode === "auto-edit" && EDIT_TOOLS.has(call.tool)) return { decision: "allow", why: "mode auto-edit" };
      return { decision: "ask" };
    },
  };
}
