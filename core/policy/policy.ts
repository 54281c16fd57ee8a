// Owns the permission decision for one tool call: config rules (first match wins), the session mode,
// MCP readOnlyHint, and `*_always` answers remembered for the session. Does not talk to the client
// (the turn asks) and does not persist approvals (a later concern).
import type { PermissionMode } from "../config.ts";
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
  /** Records an `allow_always` / `reject_always` answer for the rest of the session. */
  remember(call: PolicyCall, answer: "allow" | "reject"): void;
  setMode(mode: PermissionMode): void;
  readonly mode: PermissionMode;
}

export interface PolicyOptions {
  rules: PermissionRule[];
  mode: PermissionMode;
  /** Absolute workspace root, for `inside_workspace` conditions. */
  workspace: string;
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
      remembered.set(approvalScope(call), answer);
    },
    decide(call) {
      const rule = firstMatch(opts.rules, [call.qualifiedName], call.input, opts.workspace);
      if (rule?.decision === "deny") return { decision: "deny", why: `denied by policy: ${rule.label}` };
      if (rule?.decision === "allow") return { decision: "allow", why: `allowed by policy: ${rule.label}` };
      if (!rule && call.readOnly) return { decision: "allow", why: "read-only tool" };
      if (mode === "yolo") return { decision: "allow", why: "mode yolo" };
      if (mode === "read-only") return { decision: "deny", why: "denied by mode read-only: the tool may change things" };
      const memory = remembered.get(approvalScope(call));
      if (memory === "allow") return { decision: "allow", why: "allowed always for this session" };
      if (memory === "reject") return { decision: "deny", why: "rejected always for this session" };
      if (mode === "auto-edit" && EDIT_TOOLS.has(call.tool)) return { decision: "allow", why: "mode auto-edit" };
      return { decision: "ask" };
    },
  };
}
