// Owns what a confined command's result and the tool server's instructions say about the sandbox: the
// rules in one clause list, and the lines for a command the sandbox is known to have stopped (bwrap's
// own failure, the proxy's refusals).
import { isInside } from "../../core/path-inside.ts";
import type { SandboxContext } from "./sandbox-context.ts";
import { HOME_TOOLS, hiddenPaths } from "./sandbox-home.ts";

/** The line a command's result gets when the proxy refused hosts for it. */
export function proxyNote(hosts: readonly string[], patterns: readonly string[]): string {
  return `sandbox: the proxy refused ${hosts.join(", ")}: not in sandbox_allow_domains (${patterns.join(", ")}). Tell the user; they can add the host to sandbox_allow_domains.`;
}

/** What a confined command may do, in one parenthesis-free clause list. */
function rulesText(ctx: SandboxContext, hidden: readonly string[]): string {
  const home = ctx.home;
  const show = (p: string) => (home && isInside(home, p) ? `~${p.slice(home.length)}` : p);
  const writable = ctx.settings.mode === "workspace-write" ? "the workspace (except git's hooks, config and pointers; a git dir cannot be moved or replaced), $TMPDIR, /tmp and /dev/shm" : "only $TMPDIR, /tmp and /dev/shm";
  const domains = ctx.settings.allowDomains;
  const net = ctx.settings.network ? "network allowed, but no unix sockets (socketpair works)" : domains.length > 0 ? `network only to ${domains.join(", ")} through the HTTP(S)_PROXY given` : "no network";
  const homeSeen = home ? `; HOME is empty but for ${HOME_TOOLS.map((p) => `~/${p}`).join(", ")} and the toolchains on PATH, read-only` : "";
  return `sandbox = "${ctx.settings.mode}": writable: ${writable}; ${net}${homeSeen}; unreadable: ${hidden.map(show).join(", ") || "nothing"}`;
}

/** One sentence for the tool server's instructions: the model knows the rules before it runs anything. */
export function describeSandbox(ctx: SandboxContext): string {
  return `Shell commands run in a sandbox (${rulesText(ctx, hiddenPaths(ctx.settings, ctx.home, ctx.configDir, ctx.stateDir))}; no new user namespaces, ptrace, keyring, io_uring, bpf or perf events); $TMPDIR, /tmp and /dev/shm are private to each command. What the sandbox refuses fails with the system's own error (Read-only file system, Permission denied, Operation not permitted): say so to the user rather than working around it.`;
}

/**
 * The line a command's result gets when bwrap itself failed before the command ran (bwrap's status said
 * so, sandbox-status.ts; never read from the output, which the command writes). A file the sandbox keeps
 * read-only or hidden gives no such line: only the command's output shows it, and that is not evidence
 * (README, "Sandbox").
 */
export function setupFailedNote(mode: string): string {
  return `sandbox: bwrap could not set up this command (its message is in stderr); the setting in force is sandbox = "${mode}", and sandbox = "off" runs commands unconfined.`;
}
