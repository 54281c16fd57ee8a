// Owns the permission modes' names: one list that config, profiles, the ACP mode option and `/mode`
// read. What each mode allows is policy.ts's.

export const PERMISSION_MODES = ["ask", "auto-edit", "yolo", "read-only", "plan"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export function isPermissionMode(value: unknown): value is PermissionMode {
  return typeof value === "string" && (PERMISSION_MODES as readonly string[]).includes(value);
}
