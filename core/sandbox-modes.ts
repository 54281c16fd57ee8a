// Owns the sandbox settings' names (`off`, `read-only`, `workspace-write`): one list that config,
// profiles, `[[mcp]]` entries and the ACP `sandbox` option read. What each confines is tools/dev/sandbox.ts's.

export const SANDBOX_MODES = ["off", "read-only", "workspace-write"] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

export function isSandboxMode(value: unknown): value is SandboxMode {
  return typeof value === "string" && (SANDBOX_MODES as readonly string[]).includes(value);
}
