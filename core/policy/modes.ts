// Owns the permission modes' names: one list that config, profiles, the ACP mode option and `/mode`
// read, and their order from loosest to strictest. What each mode allows is policy.ts's.

export const PERMISSION_MODES = ["ask", "auto-edit", "yolo", "read-only", "plan"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export function isPermissionMode(value: unknown): value is PermissionMode {
  return typeof value === "string" && (PERMISSION_MODES as readonly string[]).includes(value);
}

/** Loosest first: `yolo` asks about nothing, `auto-edit` not about edits, `ask` about each call; `plan`
 *  and `read-only` let nothing that may change things run (equally strict). */
const STRICTNESS: Record<PermissionMode, number> = { yolo: 0, "auto-edit": 1, ask: 2, plan: 3, "read-only": 3 };

/** Does mode `a` allow at most what `b` allows? */
export function modeAtLeastAsStrict(a: PermissionMode, b: PermissionMode): boolean {
  return STRICTNESS[a] >= STRICTNESS[b];
}
