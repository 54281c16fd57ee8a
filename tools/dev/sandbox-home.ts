// Owns what of HOME a confined command sees (HOME_TOOLS and the PATH's toolchains, read-only; the rest is
// an empty private folder), which roots may not be writable (`/`, HOME) and what under a root holding
// HOME stays read-only, and what may never be read: the usual credentials and histories, Tendril's
// config and state, `sandbox_hide`. Returns paths and bwrap arguments; sandbox-args.ts places them.
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { isInside } from "../../core/path-inside.ts";
import { SandboxError, type SandboxSettings } from "./sandbox-context.ts";

/** What of HOME tools need, shown read-only (README, "Sandbox"): git's and npm's configuration, the Rust
 *  and npm toolchains and caches, ~/.cache, the user's own ~/.local/bin. Credentials among them stay
 *  hidden (HOME_SECRETS). */
export const HOME_TOOLS = [".gitconfig", ".config/git", ".npmrc", ".npm", ".cargo", ".rustup", ".cache", ".local/bin"];
/** HOME folders whose PATH entries are shown alone, not the whole folder (they hold much else). */
const SHARED_HOME_DIRS = [".local", ".config"];

export interface HomeView {
  /** HOME's real path: an empty private folder inside, writable and gone after the command. */
  home: string;
  /** What is shown again in it, read-only. */
  shown: string[];
}

/**
 * The view of HOME a confined command gets: HOME_TOOLS, and each toolchain a PATH folder in HOME belongs
 * to (the HOME folder it lies in: ~/.nvm, ~/.pyenv, ~/go; a ~/.local/bin alone). Undefined when HOME is
 * unset or `/`.
 */
export function homeView(home: string | undefined, pathVar: string | undefined): HomeView | undefined {
  if (!home?.startsWith("/")) return undefined;
  const real = realOrUndefined(home);
  if (real === undefined || real === "/") return undefined;
  const wanted = HOME_TOOLS.map((rel) => join(real, rel));
  for (const dir of (pathVar ?? "").split(":")) {
    const r = dir.startsWith("/") ? realOrUndefined(dir) : undefined;
    if (r === undefined || r === real || !isInside(real, r)) continue;
    const top = relative(real, r).split("/")[0]!;
    wanted.push(SHARED_HOME_DIRS.includes(top) ? r : join(real, top));
  }
  return { home: real, shown: [...new Set(wanted)].filter((p) => existsSync(p)) };
}

/**
 * `/` and HOME are refused as writable roots (every dotfile, key and shell start-up file would be the
 * workspace); the session's additional directories alike.
 */
export function checkWritableRoots(roots: readonly string[], home: string | undefined): void {
  const realHome = home?.startsWith("/") ? realOrUndefined(home) : undefined;
  for (const root of roots) {
    const what = root === "/" ? "the whole file system" : root === realHome ? "HOME, with every dotfile, key and shell start-up file in it" : undefined;
    if (what) throw new SandboxError(`sandbox = "workspace-write" does not make ${root} writable: it is ${what}. Open a project folder as the workspace, or use sandbox = "read-only"`);
  }
}

/**
 * Under a writable root that holds HOME (a workspace at /home): HOME read-only but for its plain (not dot)
 * entries, so no dotfile or dot-folder (shell start-up files, ~/.config, ~/.local/bin) can be changed or
 * made; roots inside HOME are bound again, writable as asked. Placed right after the roots' binds.
 */
export function homeInRootGuard(roots: readonly string[], home: string | undefined): string[] {
  const real = home?.startsWith("/") ? realOrUndefined(home) : undefined;
  if (real === undefined || !roots.some((r) => isInside(r, real) && r !== real)) return [];
  let names: string[];
  try {
    names = readdirSync(real);
  } catch {
    return [];
  }
  const plain = names.filter((n) => !n.startsWith(".")).map((n) => join(real, n));
  const inside = roots.filter((r) => r !== real && isInside(real, r));
  return ["--ro-bind", real, real, ...[...plain, ...inside].flatMap((p) => ["--bind", p, p])];
}

function realOrUndefined(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/** Credentials under HOME a confined command has no use for (no network by default) and whose theft
 *  outlives the session: keys; the well-known token stores of git, GitHub's CLI and Copilot, cloud and
 *  package registries (publishing tokens only: `~/.npmrc`, which also says where to install from,
 *  stays) and other coding agents' logins; and shell and REPL histories, where typed tokens end up. */
const HOME_SECRETS = [
  ".ssh",
  ".aws",
  ".gnupg",
  ".git-credentials",
  // git credential-store's second file, inside ~/.config/git which is shown for git's own config.
  ".config/git/credentials",
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
  // Tokens kept under folders a confined command is shown for its tools (`~/.cache`, `~/.npm` aside):
  // the Hugging Face hub's login, Terraform's registry tokens.
  ".cache/huggingface/token",
  ".cache/huggingface/stored_tokens",
  ".terraform.d/credentials.tfrc.json",
  // Tendril's own config and state where XDG puts them by default (the ones in force are added too):
  // credentials, every session's transcript, remembered approvals.
  ".config/tendril",
  ".local/state/tendril",
  ".bash_history",
  ".zsh_history",
  ".local/share/fish/fish_history",
  ".python_history",
  ".node_repl_history",
  ".psql_history",
  ".mysql_history",
];
/** Paths the command must not read: the usual secrets in HOME, Tendril's config and state dirs, `sandbox_hide`. */
export function hiddenPaths(settings: SandboxSettings, home: string | undefined, configDir: string, stateDir?: string): string[] {
  // configDir is $XDG_CONFIG_HOME/tendril: git's credential store reads $XDG_CONFIG_HOME/git/credentials.
  const xdgGit = join(dirname(configDir), "git", "credentials");
  const wanted = [...(home ? HOME_SECRETS.map((d) => join(home, d)) : []), xdgGit, configDir, ...(stateDir ? [stateDir] : []), ...settings.hide];
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

