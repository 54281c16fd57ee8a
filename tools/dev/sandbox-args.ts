// Owns the bwrap command line of a confined process: the mounts and namespaces each setting means (the
// read-only root, the private /tmp, /run and /dev/shm, the writable roots and their git guards from
// sandbox-git.ts, hidden paths, covered host sockets), and how bwrap is started with its seccomp filter.
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { log } from "../../core/log.ts";
import { isInside } from "../../core/path-inside.ts";
import type { ConfineRequest, SandboxSettings } from "./sandbox-context.ts";
import { findGitEntries, type GitEntries, gitGuards } from "./sandbox-git.ts";
import { DEFAULT_LIMITS } from "../../core/limits.ts";
import { isDir, isRealDir } from "./sandbox-paths.ts";
import { homeInRootGuard, type HomeView } from "./sandbox-home.ts";
import { sandboxFilter } from "./seccomp.ts";
import { STATUS_FD } from "./exec.ts";

/** The descriptor bwrap reads the seccomp filter from (seccomp.ts): opened on the filter's file by the
 *  /bin/sh that then becomes bwrap. */
const SECCOMP_FD = 9;
/** The filter's file, in the command's private TMPDIR (removed with it). */
const SECCOMP_FILE = "tendril-seccomp.bpf";

export interface BwrapPlan {
  root: string;
  /** The session's additional workspace roots: writable like the root under workspace-write. */
  extraRoots?: readonly string[];
  cwd: string;
  tmp: string;
  hidden: readonly string[];
  /** More paths shown read-only after the private /tmp and /run (the allow-domains proxy's socket folder). */
  shown?: readonly string[];
  /** The host's listening unix sockets (hostUnixSockets): each outside the private directories is
   *  covered, so nothing connects to it from inside. */
  sockets?: readonly string[];
  /** The sockets of ours the command must reach (the allow-domains proxy's): the only ones left
   *  uncovered by name. A shown folder exempts nothing else in it. */
  ownSockets?: readonly string[];
  /** Under workspace-write: the `.git` entries under the roots (found now when not given). */
  git?: GitEntries;
  /** HOME hidden but for what tools need (sandbox-home.ts). */
  home?: HomeView;
  /** bwrap takes `--disable-userns` (0.8 and later). */
  disableUserns?: boolean;
  /** bwrap reports the sandbox's first pid and the command's exit on STATUS_FD (exec.ts). */
  status?: boolean;
  /** Where bwrap reads the seccomp filter: SECCOMP_FD (bwrapCommand's /bin/sh opens it there), or the
   *  caller's pipe (exec.ts's INPUT_FD). */
  seccompFd?: number;
}

/**
 * Where a host's unix sockets live (a tmux or screen server, D-Bus, an ssh or gpg agent, docker, an X
 * server): a socket on the read-only root can still be connected to, and many of them run commands
 * outside the sandbox. These get an empty, read-only tmpfs instead (what the command needs from them,
 * its workspace and private TMPDIR included, is mounted into it).
 */
const SOCKET_DIRS = ["/tmp", "/run", "/var/run", "/dev/shm"];
/** The private directories a command may write (each command's own, gone with it). */
const WRITABLE_PRIVATE_DIRS = ["/tmp", "/dev/shm"];

/** The bwrap arguments for a setting (everything before `--`). */
export function bwrapArgs(settings: SandboxSettings, plan: BwrapPlan): string[] {
  const privateDirs = SOCKET_DIRS.filter(isRealDir);
  const args = [
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    // /run and /var/run read-only once everything below is mounted into them (the last step before
    // --chdir); /tmp and /dev/shm stay writable, private to this command (Python's multiprocessing, a JVM,
    // a browser need them).
    ...privateDirs.flatMap((d) => ["--tmpfs", d]),
    // DNS for sandbox_network: a resolv.conf that leads into /run is shown again.
    ...resolvConfUnder("/run").flatMap((f) => ["--ro-bind", f, f]),
    // Own user, PID, IPC, UTS, cgroup and network namespaces; no capabilities even when run as root
    // (no remounting the read-only root, no unmounting a hidden path).
    "--unshare-all",
    // No user namespace inside (where a command would be root again, and reach kernel code unprivileged
    // users otherwise cannot); the filter refuses them too, for a bwrap without this flag or a host where
    // it cannot work (a setuid bwrap with unprivileged user namespaces off: prepareSandbox tries both).
    ...(plan.disableUserns ? ["--unshare-user", "--disable-userns"] : []),
    // The baseline filter (seccomp.ts); the host's network shares its abstract unix sockets, which no mount
    // hides, so under sandbox_network none can be made either.
    ...(settings.network ? ["--share-net"] : []),
    "--seccomp", String(plan.seccompFd ?? SECCOMP_FD),
    "--cap-drop", "ALL",
    // No controlling terminal to push input into (TIOCSTI) when the agent runs in one.
    "--new-session",
    // The command is the namespace's PID 1: bwrap's own reaper would outlive the outer bwrap for a moment
    // as a zombie of the host's init, and a zombie keeps the process group (and the kill ladder) waiting.
    "--as-pid-1",
    // The outer bwrap leads our process group: SIGTERM to the group kills it, and this takes the rest.
    "--die-with-parent",
  ];
  // HOME: an empty private folder with what tools need shown again, read-only (before the roots, which may lie in it).
  if (plan.home) args.push("--tmpfs", plan.home.home, ...plan.home.shown.flatMap((p) => ["--ro-bind", p, p]));
  // The workspace, read-only or writable (below), whatever the private /tmp, /run and HOME hid of it.
  const roots = [plan.root, ...(plan.extraRoots ?? [])];
  if (settings.mode !== "workspace-write") for (const root of roots) args.push("--ro-bind", root, root);
  if (settings.mode === "workspace-write") {
    // Every root first: a guard below may lie in another root (a hooks link into it), and must not be covered.
    for (const root of roots) args.push("--bind", root, root);
    args.push(...homeInRootGuard(roots, plan.home?.home));
    args.push(...gitGuards(plan.git ?? findGitEntries(roots, DEFAULT_LIMITS.SANDBOX_GIT_WALK_DIRS), roots));
  }
  args.push("--bind", plan.tmp, plan.tmp);
  for (const p of plan.shown ?? []) args.push("--ro-bind", p, p);
  // What lies in the hidden HOME, outside what is shown there again and outside the roots, is gone already.
  const home = plan.home;
  const unseen = (p: string) => home !== undefined && isInside(home.home, p) && ![...home.shown, ...roots, ...(plan.shown ?? [])].some((v) => isInside(v, p));
  for (const p of plan.hidden) {
    if (unseen(p)) continue;
    if (isDir(p)) args.push("--tmpfs", p, "--remount-ro", p);
    else args.push("--ro-bind", "/dev/null", p);
  }
  // A socket elsewhere (~/.docker/run/docker.sock, a user D-Bus or tmux socket moved out of /run) is
  // covered by /dev/null: connecting to it is refused. In the workspace too, which may be HOME; what the
  // command binds itself (in its own TMPDIR) and the allow-domains proxy's socket stay reachable; any
  // other socket in a folder shown again (the shim folder, the binary's) is covered like the rest.
  const own = new Set(plan.ownSockets ?? []);
  for (const s of plan.sockets ?? []) {
    const gone = underPrivateDir(s) && !roots.some((r) => isInside(r, s)); // in a private tmpfs, not mounted back
    if (gone || own.has(s) || KERNEL_DIRS.some((d) => isInside(d, s)) || isInside(plan.tmp, s) || plan.hidden.some((h) => isInside(h, s))) continue;
    args.push("--ro-bind", "/dev/null", s);
  }
  for (const d of privateDirs) if (!WRITABLE_PRIVATE_DIRS.includes(d)) args.push("--remount-ro", d);
  if (plan.status) args.push("--json-status-fd", String(STATUS_FD));
  args.push("--chdir", plan.cwd);
  return args;
}

/** Mounted afresh inside (--dev, --proc) or never a place for a listening socket. */
const KERNEL_DIRS = ["/dev", "/proc", "/sys"];

/**
 * The paths of the host's listening unix sockets that exist now (from /proc/net/unix, where every
 * socket bound to a path in this network namespace is listed), resolved through symlinks. Abstract
 * sockets have no path: a confined command reaches them only with sandbox_network (its own network
 * namespace otherwise). Empty when /proc/net/unix cannot be read.
 */
export function hostUnixSockets(): string[] {
  let table: string;
  try {
    table = readFileSync("/proc/net/unix", "utf8");
  } catch (error) {
    log.debug("cannot read /proc/net/unix: no host socket is covered", { error: (error as Error).message });
    return [];
  }
  const out = new Set<string>();
  for (const row of table.split("\n").slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path — the path is the rest of the row (it may hold spaces).
    const fields = row.trim().split(/\s+/);
    if (fields.length < 8) continue;
    const path = fields.slice(7).join(" ");
    if (!path.startsWith("/")) continue;
    try {
      const real = realpathSync(path);
      if (lstatSync(real).isSocket()) out.add(real);
    } catch {
      // removed since it was bound, or in a directory we cannot search
    }
  }
  return [...out];
}

/** Under one of the private directories (SOCKET_DIRS): hidden inside unless shown again. */
export function underPrivateDir(p: string): boolean {
  return p.startsWith("/") && SOCKET_DIRS.some((d) => isInside(d, p));
}

/**
 * What a confined command needs from under the private /tmp and /run, shown read-only: its PATH's
 * folders there (the rg and tree shims) and what their links lead to; and from there or from the hidden
 * `home`: the program and files its argv names by absolute path (an MCP server's script), and this
 * binary (the allow-domains forwarder).
 */
export function neededFromPrivateDirs(req: ConfineRequest, self: { command: string; args: string[] } | undefined, home?: string): string[] {
  // PATH folders in HOME are homeView's (the HOME folder each lies in is shown whole).
  const covered = (p: string) => underPrivateDir(p) || (home !== undefined && isInside(home, p));
  const dirs = (req.env.PATH ?? "").split(":").filter((d) => underPrivateDir(d) && isRealDir(d));
  const linked = dirs.flatMap((d) =>
    readdirSync(d).flatMap((name) => {
      try {
        return [realpathSync(join(d, name))];
      } catch {
        return [];
      }
    }),
  );
  const files = [...req.argv, ...(self ? [self.command, ...self.args.slice(0, 1)] : [])];
  return [...new Set([...dirs, ...linked, ...files].filter((p) => covered(p) && existsSync(p)))];
}

/** /etc/resolv.conf's real path when it lies under `dir` (systemd-resolved's stub), else nothing. */
function resolvConfUnder(dir: string): string[] {
  try {
    const real = realpathSync("/etc/resolv.conf");
    return isInside(dir, real) && real !== dir ? [real] : [];
  } catch {
    return [];
  }
}

/**
 * How to start bwrap with `args`: a /bin/sh that opens the filter's file (written into `tmp` here) on
 * SECCOMP_FD and becomes bwrap.
 */
export async function bwrapCommand(settings: SandboxSettings, bwrap: string, args: string[], tmp: string): Promise<{ command: string; args: string[] }> {
  const filter = join(tmp, SECCOMP_FILE);
  await writeFile(filter, seccompFilter(settings), { mode: 0o444 });
  return { command: "/bin/sh", args: ["-c", `exec "$@" ${SECCOMP_FD}<"$0"`, filter, bwrap, ...args] };
}

/** The filter bwrap reads on its --seccomp descriptor for this setting. */
export function seccompFilter(settings: SandboxSettings): Uint8Array {
  return sandboxFilter({ unixSockets: settings.network });
}

/** Whether this bwrap takes `--disable-userns` (asked once per bwrap; its --help lists the flag, and
 *  prepareSandbox's probe says whether it works here). */
export function bwrapDisablesUserns(bwrap: string): boolean {
  let known = usernsFlag.get(bwrap);
  if (known === undefined) {
    const help = spawnSync(bwrap, ["--help"], { encoding: "utf8", timeout: 5000 });
    known = `${help.stdout}${help.stderr}`.includes("--disable-userns");
    usernsFlag.set(bwrap, known);
  }
  return known;
}
const usernsFlag = new Map<string, boolean>();

/** This bwrap's `--disable-userns` does not work here (its probe failed, and without the flag it works). */
export function noUsernsFlag(bwrap: string): void {
  usernsFlag.set(bwrap, false);
}
