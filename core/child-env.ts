// Owns the environment of every process Tendril starts: for a tool (an MCP server, a dev shell
// command) a safe whitelist of ours (PATH, HOME, USER, LANG, TERM, SHELL, TMPDIR, LC_*) under what was
// declared for it, and for shell commands Tendril's own settings plus the names a user passes through
// explicitly (`--pass-env`), never our API keys unless a user names them; for an agent or a conductor
// component (which need their keys) all of ours under what was declared; and the shims' folder on PATH.
// The sandbox's additions inside bwrap (TMPDIR, the egress proxy) are tools/dev/sandbox.ts's.

const ENV_WHITELIST = ["PATH", "HOME", "USER", "LANG", "TERM", "SHELL", "TMPDIR"];
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

type Env = Readonly<Record<string, string | undefined>>;

/** The declared env over a safe whitelist of the parent's. */
export function childEnv(parentEnv: Env, declared: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parentEnv)) {
    if (v !== undefined && (ENV_WHITELIST.includes(k) || k.startsWith("LC_"))) out[k] = v;
  }
  return { ...out, ...declared };
}

/** An agent's or a conductor component's environment: all of the parent's (unset entries dropped)
 *  under what was declared for it. */
export function inheritedEnv(parentEnv: Env, declared: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parentEnv)) if (v !== undefined) out[k] = v;
  return { ...out, ...declared };
}

/** `env` with `dir` first on its PATH (the shims' folder: `rg` and `tree` there win). */
export function withPathFirst(env: Record<string, string>, dir: string): Record<string, string> {
  return { ...env, PATH: env.PATH ? `${dir}:${env.PATH}` : dir };
}

/**
 * A dev shell command's environment: the whitelist, Tendril's settings (TENDRIL_*: the `rg` and `tree`
 * shims it runs read their limits there) and the parent's variables named in `passNames` (unset
 * names are skipped).
 */
export function shellEnv(parentEnv: Env, passNames: readonly string[] = []): Record<string, string> {
  const extra: Record<string, string> = {};
  for (const [k, v] of Object.entries(parentEnv)) if (k.startsWith("TENDRIL_") && v !== undefined) extra[k] = v;
  for (const name of passNames) {
    const v = parentEnv[name];
    if (v !== undefined) extra[name] = v;
  }
  return childEnv(parentEnv, extra);
}

export class PassEnvError extends Error {
  override name = "PassEnvError";
}

/**
 * The names to pass through: `--pass-env` when given, else TENDRIL_PASS_ENV; `NAME,NAME…` (spaces
 * allowed around the commas; empty or unset = none). A bad name throws PassEnvError naming it.
 */
export function passEnvNames(flag: string | undefined, env: Env): string[] {
  const what = flag !== undefined ? "--pass-env" : "TENDRIL_PASS_ENV";
  const raw = flag ?? env.TENDRIL_PASS_ENV;
  if (raw === undefined || raw.trim() === "") return [];
  const names = raw.split(",").map((n) => n.trim());
  const bad = names.find((n) => !ENV_NAME.test(n));
  if (bad !== undefined) {
    throw new PassEnvError(`${what} takes variable names separated by commas (letters, digits, _), got ${JSON.stringify(bad)}`);
  }
  return names;
}
