// Owns the options a permission question offers and how the client's answer reads as ours; the same
// for ACP v1 and v2 (both carry `PermissionOption` and `{outcome: "selected", optionId}`). Does not
// send the question (connection-sessions.ts).
import type { PermissionOption, RequestPermissionResponse } from "@agentclientprotocol/sdk";
import type { PermissionAnswer } from "../agent/tool-calls.ts";

const PERMISSION_OPTIONS: PermissionOption[] = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
  { optionId: "reject_always", name: "Always reject", kind: "reject_always" },
];

/** The options one question offers: "Always allow" named for what it covers, or left out. */
export function permissionOptions(allowAlways: string | undefined): PermissionOption[] {
  return PERMISSION_OPTIONS.flatMap((o) => (o.kind !== "allow_always" ? [o] : allowAlways === undefined ? [] : [{ ...o, name: allowAlways }]));
}

export function answerOf(res: RequestPermissionResponse | undefined, offered: PermissionOption[]): PermissionAnswer {
  const outcome = res?.outcome;
  if (outcome?.outcome !== "selected") return "cancelled";
  // Only what was offered counts: "allow_always" for a question that left it out is not an answer.
  const option = offered.find((o) => o.optionId === outcome.optionId);
  // An unknown option id is a client bug; treat it as the safest answer.
  return (option?.kind as PermissionAnswer | undefined) ?? "reject_once";
}
