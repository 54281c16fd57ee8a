// Owns what the sandbox's modules share: the setting and the context a confiner works in, the request to
// confine a program, the one error type and the fix it suggests when a confined setting cannot work here.
import type { SandboxConfig } from "../../core/config.ts";
import type { SandboxMode } from "../../core/sandbox-modes.ts";

/** The setting in force: mode, `sandbox_network`, `sandbox_hide` (absolute paths). */
export type SandboxSettings = Readonly<SandboxConfig>;


export class SandboxError extends Error {
  override name = "SandboxError";
}

export function fixHint(mode: SandboxMode): string {
  return `Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) or set sandbox = "off" (--sandbox off, TENDRIL_SANDBOX=off) to run commands unconfined; the setting in force is sandbox = "${mode}"`;
}

export interface SandboxContext {
  settings: SandboxSettings;
  /** Real path of the workspace root. */
  root: string;
  /** Real paths of the session's additional workspace roots (writable under workspace-write). */
  extraRoots?: readonly string[];
  /** PATH where bwrap is looked up (the agent's own). */
  pathVar: string | undefined;
  home: string | undefined;
  /** Tendril's config dir (credentials). */
  configDir: string;
  /** Tendril's state dir (every session's transcript, remembered approvals). */
  stateDir?: string;
  /** How to run this binary (`tendril sandbox-forward` under sandbox_allow_domains). */
  self?: { command: string; args: string[] };
  /** More paths shown read-only where HOME is hidden, when they exist (the shell's artifact folder). */
  alsoShown?: readonly string[];
  /** SANDBOX_KILL_HOLD_MS in force (default: its default). */
  killHoldMs?: number;
  /** SANDBOX_GIT_WALK_DIRS in force (default: its default). */
  gitWalkDirs?: number;
  /** SANDBOX_PROXY_HEAD_BYTES and SANDBOX_PROXY_HEAD_TIMEOUT_S (in ms) in force (default: theirs). */
  proxyHead?: { maxBytes: number; timeoutMs: number };
}

/** A program to start confined: argv, working directory, whole environment. */
export interface ConfineRequest {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** The caller reads bwrap's status on exec.ts's STATUS_FD (a shell command; not an MCP server). */
  status?: boolean;
}
