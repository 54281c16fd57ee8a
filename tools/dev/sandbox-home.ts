// Owns what of HOME and Tendril's own files a confined command may not read: the usual credentials and
// histories, Tendril's config dir and `sandbox_hide`. Returns paths; sandbox-args.ts hides them.
import { existsSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { SandboxError, type SandboxSettings } from "./sandbox-context.ts";

/** Credentials under HOME a confined command has no use for (no network by default) and whose theft
 *  outlives the session: keys; the well-known token stores of git, GitHub's CLI and Copilot, cloud and
 *  package registries (publishing tokens only: `~/.npmrc`, which also says where to install from,
 *  stays) and other coding agents' logins; and shell and REPL histories, where typed tokens end up. */
const HOME_SECRETS = [
  ".ssh",
  ".aws",
  ".gnupg",
  ".git-credentials",
  ".netrc",
  ".config/gh",
  ".config/github-copilot",
  ".kube",
  ".docker/config.json",
  ".config/gcloud",
  ".azure",
  ".pypirc",
  ".cargo/credentials.toml",
  ".cargo/credentials",
  ".claude/.credentials.json",
  ".codex/auth.json",
  ".bash_history",
  ".zsh_history",
  ".local/share/fish/fish_history",
  ".python_history",
  ".node_repl_history",
  ".psql_history",
  ".mysql_history",
];
/** Paths the command must not read: the usual secrets in HOME, Tendril's config dir, `sandbox_hide`. */
export function hiddenPaths(settings: SandboxSettings, home: string | undefined, configDir: string): string[] {
  const wanted = [...(home ? HOME_SECRETS.map((d) => join(home, d)) : []), configDir, ...settings.hide];
  const out = new Set<string>();
  for (const p of wanted) {
    if (!existsSync(p)) continue;
    out.add(p);
    try {
      out.add(realpathSync(p)); // a symlinked ~/.ssh: hide where it leads too
    } catch {
      // gone meanwhile
    }
  }
  return [...out];
}

/** `sandbox_hide` entries must exist (a typo would otherwise hide nothing, silently). */
export function checkHidePaths(hide: readonly string[]): void {
  for (const p of hide) {
    if (!existsSync(p)) throw new SandboxError(`sandbox_hide: ${p} does not exist`);
  }
}

