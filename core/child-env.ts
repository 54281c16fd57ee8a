// Owns the environment a process Tendril starts for a tool gets: a safe whitelist of ours (PATH,
// HOME, USER, LANG, TERM, SHELL, TMPDIR, LC_*) under what was declared for it. Never our API keys:
// MCP stdio servers and the in-process shell's commands are both built with it.

const ENV_WHITELIST = ["PATH", "HOME", "USER", "LANG", "TERM", "SHELL", "TMPDIR"];

/** The declared env over a safe whitelist of the parent's. */
export function childEnv(
  parentEnv: Readonly<Record<string, string | undefined>>,
  declared: Record<string, string> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parentEnv)) {
    if (v !== undefined && (ENV_WHITELIST.includes(k) || k.startsWith("LC_"))) out[k] = v;
  }
  return { ...out, ...declared };
}
