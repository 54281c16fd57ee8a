// Owns the sandbox settings' names (`off`, `read-only`, `workspace-write`): one list that config,
// profiles, `[[mcp]]` entries and the ACP `sandbox` option read, and their order from loosest to
// strictest. What each confines is tools/dev/sandbox.ts's.

export const SANDBOX_MODES = ["off", "read-only", "workspace-write"] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

export function isSandboxMode(value: unknown): value is SandboxMode {
  return typeof value === "string" && (SANDBOX_MODES as readonly string[]).includes(value);
}

/** Loosest first: `off` confines nothing, `workspace-write` lets the workspace be written, `read-only` not. */
const STRICTNESS: readonly SandboxMode[] = ["off", "workspace-write", "read-only"];

/** Does `a` confine at least as much as `b`? */
export function atLeastAsStrict(a: SandboxMode, b: SandboxMode): boolean {
  return STRICTNESS.indexOf(a) >= STRICTNESS.indexOf(b);
}
