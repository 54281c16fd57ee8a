// Owns the sandbox for shell commands: finding bubblewrap (on PATH, never inside the workspace), the
// mounts and namespaces each setting means, the probe that fails a confined setting closed, and the
// line telling the model a failed command ran confined. exec.ts runs what the launcher here returns;
// the MCP pool's stdio starts are confined by the same `confine`. Under sandbox_allow_domains each
// confined process gets its own egress-proxy.ts on a unix socket, reached through sandbox-forward.ts;
// under sandbox_network bwrap gets seccomp.ts's filter (no unix sockets: the host's abstract ones are near).
import { execFile } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { findCommand } from "../../core/process-group.ts";
import { log } from "../../core/log.ts";
import { isInside } from "../../core/path-inside.ts";
import type { SandboxConfig } from "../../core/config.ts";
import type { SandboxMode } from "../../core/sandbox-modes.ts";
import type { Launch, Launcher } from "./exec.ts";
import { startEgressProxy } from "./egress-proxy.ts";
import { SECCOMP_HOSTS, seccompSupported, unixSocketFilter } from "./seccomp.ts";

/** The setting in force: mode, `sandbox_network`, `sandbox_hide` (absolute paths). */
export type SandboxSettings = Readonly<SandboxConfig>;
const CONFINED: readonly SandboxMode[] = ["read-only", "workspace-write"];

export class SandboxError extends Error {
  override name = "SandboxError";
}

/** What the hidden paths are, for messages; HOME-relative ones are shown with `~`. */
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
/** The port the in-sandbox forwarder listens on: the sandbox's loopback is its own, so any port is free. */
export const PROXY_PORT = 3128;
/** How long the start-up probe may take before the sandbox counts as broken. */
const PROBE_TIMEOUT_MS = 10_000;
/** Under sandbox_network, the descriptor bwrap reads the unix-socket filter from (seccomp.ts): opened on
 *  the filter's file by the /bin/sh that then becomes bwrap. */
const SECCOMP_FD = 9;
/** The filter's file, in the command's private TMPDIR (removed with it). */
const SECCOMP_FILE = "tendril-unix-sockets.bpf";

function fixHint(mode: SandboxMode): string {
  return `Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) or set sandbox = "off" (--sandbox off, TENDRIL_SANDBOX=off) to run commands unconfined; the setting in force is sandbox = "${mode}"`;
}

/**
 * The bwrap to use: the first on `pathVar`, resolved through symlinks; refused when it lies inside
 * the workspace (a program the model can write would be its own jailer).
 */
export function findBwrap(pathVar: string | undefined, root: string, mode: SandboxMode): string {
  const found = findCommand("bwrap", pathVar);
  if (found === undefined) {
    const inert = (pathVar ?? "").split(":").filter((d) => d.startsWith("/")).map((d) => join(d, "bwrap")).find((f) => existsSync(f));
    if (inert) throw new SandboxError(`the sandbox cannot start: ${inert} is not an executable file. ${fixHint(mode)}`);
    throw new SandboxError(`the sandbox cannot start: bwrap (bubblewrap) is not on PATH. ${fixHint(mode)}`);
  }
  let real: string;
  try {
    real = realpathSync(found);
  } catch {
    real = found;
  }
  if (isInside(root, real) || isInside(root, found)) {
    throw new SandboxError(`the sandbox cannot start: bwrap on PATH (${found}) lies inside the workspace ${root}, where commands may write it; put a system bwrap first on PATH. ${fixHint(mode)}`);
  }
  return real;
}

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
}

/**
 * Where a host's unix sockets live (a tmux or screen server, D-Bus, an ssh or gpg agent, docker, an X
 * server): a socket on the read-only root can still be connected to, and many of them run commands
 * outside the sandbox. These get an empty, read-only tmpfs instead (what the command needs from them,
 * its workspace and private TMPDIR included, is mounted into it).
 */
const SOCKET_DIRS = ["/tmp", "/run", "/var/run", "/dev/shm"];

/** The bwrap arguments for a setting (everything before `--`). */
export function bwrapArgs(settings: SandboxSettings, plan: BwrapPlan): string[] {
  const privateDirs = SOCKET_DIRS.filter(isRealDir);
  const args = [
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    // Read-only once everything below is mounted into them (the last step before --chdir).
    ...privateDirs.flatMap((d) => ["--tmpfs", d]),
    // DNS for sandbox_network: a resolv.conf that leads into /run is shown again.
    ...resolvConfUnder("/run").flatMap((f) => ["--ro-bind", f, f]),
    // Own user, PID, IPC, UTS, cgroup and network namespaces; no capabilities even when run as root
    // (no remounting the read-only root, no unmounting a hidden path).
    "--unshare-all",
    // The host's network shares its abstract unix sockets, which no mount hides: none can be made (seccomp.ts).
    ...(settings.network ? ["--share-net", "--seccomp", String(SECCOMP_FD)] : []),
    "--cap-drop", "ALL",
    // The command is the namespace's PID 1: bwrap's own reaper would outlive the outer bwrap for a moment
    // as a zombie of the host's init, and a zombie keeps the process group (and the kill ladder) waiting.
    "--as-pid-1",
    // The outer bwrap leads our process group: SIGTERM to the group kills it, and this takes the rest.
    "--die-with-parent",
  ];
  // The workspace, read-only or writable (below), whatever the private /tmp and /run hid of it.
  const roots = [plan.root, ...(plan.extraRoots ?? [])];
  if (settings.mode !== "workspace-write") for (const root of roots) args.push("--ro-bind", root, root);
  if (settings.mode === "workspace-write") {
    // Every root first: a guard below may lie in another root (a hooks link into it), and must not be covered.
    for (const root of roots) args.push("--bind", root, root);
    for (const root of roots) {
      const git = join(root, ".git");
      if (isRealDir(git)) args.push(...gitDirGuards(git, roots));
      // A .git that is a link: what it leads to is read-only (the link itself can still be replaced, like a new .git).
      else if (isSymlink(git) && isDir(git)) args.push("--ro-bind", git, git);
      // A linked worktree's or a submodule checkout's pointer to its git dir: not re-pointed at one the command made.
      else if (isRealFile(git)) args.push("--ro-bind", git, git);
    }
  }
  args.push("--bind", plan.tmp, plan.tmp);
  for (const p of plan.shown ?? []) args.push("--ro-bind", p, p);
  for (const p of plan.hidden) {
    if (isDir(p)) args.push("--tmpfs", p, "--remount-ro", p);
    else args.push("--ro-bind", "/dev/null", p);
  }
  // A socket elsewhere (~/.docker/run/docker.sock, a user D-Bus or tmux socket moved out of /run) is
  // covered by /dev/null: connecting to it is refused. In the workspace too, which may be HOME; what the
  // command binds itself, and the allow-domains proxy's socket (shown), stay reachable.
  const mine = [plan.tmp, ...(plan.shown ?? [])];
  for (const s of plan.sockets ?? []) {
    const gone = underPrivateDir(s) && !roots.some((r) => isInside(r, s)); // in a private tmpfs, not mounted back
    if (gone || KERNEL_DIRS.some((d) => isInside(d, s)) || mine.some((d) => isInside(d, s)) || plan.hidden.some((h) => isInside(h, s))) continue;
    args.push("--ro-bind", "/dev/null", s);
  }
  for (const d of privateDirs) args.push("--remount-ro", d);
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
function underPrivateDir(p: string): boolean {
  return p.startsWith("/") && SOCKET_DIRS.some((d) => isInside(d, p));
}

/**
 * What a confined command needs from under the private /tmp and /run, shown read-only: its PATH's
 * folders there (the rg and tree shims) and what their links lead to, the program and files its argv
 * names by absolute path (an MCP server's script), and this binary (the allow-domains forwarder).
 */
function neededFromPrivateDirs(req: ConfineRequest, self: { command: string; args: string[] } | undefined): string[] {
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
  return [...new Set([...dirs, ...linked, ...files].filter((p) => underPrivateDir(p) && existsSync(p)))];
}

/**
 * A git dir in a writable workspace stays writable (commits work), but git runs hooks and reads config
 * (core.hooksPath, core.fsmonitor, aliases …) later, as the user: those are read-only, and the dir is a
 * mount of its own, so it cannot be renamed away and replaced by one with a config the command wrote
 * (EBUSY). The same for each submodule's git dir (.git/modules/…), and a linked worktree's pointer to
 * its common dir (.git/worktrees/NAME/commondir). `config.worktree` is guarded when git would read it.
 */
function gitDirGuards(dir: string, roots: readonly string[], depth = 0): string[] {
  const config = join(dir, "config");
  const configText = readOrEmpty(config);
  // The workspace's own repository (not a submodule's): the folder its core.hooksPath names.
  const hooksPath = depth === 0 ? hooksPathGuard(dirname(dir), configText, roots) : [];
  // A link (hooks -> ../.githooks) cannot be made a mount itself (a mount follows it), so the command could
  // replace it with a folder of its own: such a git dir (or one with stranger entries) is read-only as a
  // whole, and commits inside it fail.
  if (!plainGitEntries(dir)) return [...readOnlyGitDir(dir, roots), ...hooksPath];
  const args = ["--bind", dir, dir];
  const hooks = join(dir, "hooks");
  if (isRealDir(hooks)) args.push("--ro-bind", hooks, hooks);
  else args.push("--tmpfs", hooks, "--remount-ro", hooks);
  args.push("--ro-bind", existsSync(config) ? config : "/dev/null", config);
  const perWorktree = /^\s*worktreeconfig\s*=\s*(true|yes|on|1)\s*$/im.test(configText);
  for (const d of [dir, ...subdirs(join(dir, "worktrees"))]) {
    if (d !== dir && !plainGitEntries(d)) {
      args.push(...readOnlyGitDir(d, roots));
      continue;
    }
    if (d !== dir) args.push("--bind", d, d);
    const wt = join(d, "config.worktree");
    if (existsSync(wt) || perWorktree) args.push("--ro-bind", existsSync(wt) ? wt : "/dev/null", wt);
    const common = join(d, "commondir");
    if (d !== dir && existsSync(common)) args.push("--ro-bind", common, common);
  }
  // Submodules nest (.git/modules/a/modules/b); a bound on the depth keeps a hostile tree finite.
  if (depth < 8) for (const m of gitDirsUnder(join(dir, "modules"))) args.push(...gitDirGuards(m, roots, depth + 1));
  return [...args, ...hooksPath];
}

/**
 * `core.hooksPath` in the repository's config naming a folder in a writable root (husky's `.husky/_`,
 * gitignored, so a planted hook there shows in no diff): read-only like .git/hooks, or made empty and
 * read-only when it does not exist yet. Relative paths are the work tree's, as git reads them.
 */
function hooksPathGuard(worktree: string, configText: string, roots: readonly string[]): string[] {
  const match = /^\s*hookspath\s*=\s*(.*?)\s*$/im.exec(configText);
  let value = match?.[1];
  if (!value) return [];
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  if (value.startsWith("~/") && process.env.HOME) value = join(process.env.HOME, value.slice(2));
  let target = resolve(worktree, value);
  try {
    target = realpathSync(target);
  } catch {
    // not there yet: the mount below makes it, empty
  }
  if (!roots.some((r) => isInside(r, target))) return [];
  if (existsSync(target)) return ["--ro-bind", target, target];
  return ["--tmpfs", target, "--remount-ro", target];
}

/** The git dirs below a `modules` folder: a submodule named `a/b` lives at modules/a/b. */
function gitDirsUnder(dir: string, depth = 0): string[] {
  const found: string[] = [];
  for (const d of subdirs(dir)) {
    if (existsSync(join(d, "HEAD")) && existsSync(join(d, "objects"))) found.push(d);
    else if (depth < 8) found.push(...gitDirsUnder(d, depth + 1));
  }
  return found;
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/**
 * A git dir read-only as a whole, and what its linked entries lead to when that is in a writable root
 * (a `hooks -> ../.githooks`): read-only too, or, when it does not exist yet, made there empty and
 * read-only (the command could otherwise make it and fill it).
 */
function readOnlyGitDir(dir: string, roots: readonly string[]): string[] {
  const args = ["--ro-bind", dir, dir];
  for (const name of GUARDED_GIT_ENTRIES) {
    const p = join(dir, name);
    if (!isSymlink(p)) continue;
    let target: string;
    try {
      target = existsSync(p) ? realpathSync(p) : resolve(dirname(p), readlinkSync(p));
    } catch {
      continue;
    }
    if (!roots.some((r) => isInside(r, target))) continue; // outside the writable roots: read-only already
    if (existsSync(target)) args.push("--ro-bind", target, target);
    else if (name === "hooks") args.push("--tmpfs", target, "--remount-ro", target);
    else args.push("--ro-bind", "/dev/null", target);
  }
  return args;
}

const GUARDED_GIT_ENTRIES = ["hooks", "config", "config.worktree", "commondir"];

/** Whether a git dir's guarded entries are what they should be, or absent: `hooks` a folder; `config`,
 *  `config.worktree` and `commondir` files (not links, which a mount would follow). */
function plainGitEntries(dir: string): boolean {
  const hooks = entryKind(join(dir, "hooks"));
  return (hooks === "dir" || hooks === "none") && GUARDED_GIT_ENTRIES.slice(1).every((n) => ["file", "none"].includes(entryKind(join(dir, n))));
}

/** What a path itself is, its last link not followed. */
function entryKind(p: string): "dir" | "file" | "link" | "other" | "none" {
  try {
    const st = lstatSync(p);
    return st.isDirectory() ? "dir" : st.isFile() ? "file" : st.isSymbolicLink() ? "link" : "other";
  } catch {
    return "none";
  }
}

function isSymlink(p: string): boolean {
  return entryKind(p) === "link";
}

function isRealFile(p: string): boolean {
  return entryKind(p) === "file";
}

/** A directory that is not a symlink (`/var/run` is usually a link to `/run`, masked with it). */
function isRealDir(p: string): boolean {
  return entryKind(p) === "dir";
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

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
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
  /** How to run this binary (`tendril sandbox-forward` under sandbox_allow_domains). */
  self?: { command: string; args: string[] };
}

/** A program to start confined: argv, working directory, whole environment. */
export interface ConfineRequest {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

/**
 * How to start bwrap with `args`: itself, or under sandbox_network a /bin/sh that opens the filter's file
 * (written into `tmp` here) on SECCOMP_FD and becomes bwrap.
 */
export async function bwrapCommand(settings: SandboxSettings, bwrap: string, args: string[], tmp: string): Promise<{ command: string; args: string[] }> {
  if (!settings.network) return { command: bwrap, args };
  const filter = join(tmp, SECCOMP_FILE);
  await writeFile(filter, unixSocketFilter(), { mode: 0o444 });
  return { command: "/bin/sh", args: ["-c", `exec "$@" ${SECCOMP_FD}<"$0"`, filter, bwrap, ...args] };
}

/** Runs `bwrap ARGS -- true` as bwrapCommand starts it; resolves to bwrap's complaint, or undefined when it worked. */
export async function probeBwrap(settings: SandboxSettings, bwrap: string, args: string[], tmp: string): Promise<string | undefined> {
  const start = await bwrapCommand(settings, bwrap, args, tmp);
  return runProbe(start.command, [...start.args, "--", "true"], { PATH: "/usr/bin:/bin" });
}

/** Runs a probe command within PROBE_TIMEOUT_MS; resolves to the first line of its complaint, or undefined when it worked. */
function runProbe(command: string, args: string[], env: Record<string, string>): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: PROBE_TIMEOUT_MS, env }, (err, _out, stderr) => {
      if (!err) return resolve(undefined);
      const said = String(stderr).trim().split("\n")[0];
      resolve(said || err.message);
    });
  });
}

/** Finds bwrap and checks that it works for this setting: its path, or a SandboxError saying why not and how to fix it. */
export async function prepareSandbox(ctx: SandboxContext): Promise<string> {
  const bwrap = findBwrap(ctx.pathVar, ctx.root, ctx.settings.mode);
  if (ctx.settings.network && !seccompSupported()) {
    throw new SandboxError(`sandbox_network = true needs the filter that keeps confined commands from the host's abstract unix sockets, which is made for ${SECCOMP_HOSTS.join(" and ")} only (this is ${process.arch}); use sandbox_allow_domains, or sandbox = "off"`);
  }
  const tmp = await mkdtemp(join(tmpdir(), "tendril-sandbox-"));
  try {
    const plan = { root: ctx.root, cwd: ctx.root, tmp, hidden: hiddenPaths(ctx.settings, ctx.home, ctx.configDir), sockets: hostUnixSockets() };
    const complaint = await probeBwrap(ctx.settings, bwrap, bwrapArgs(ctx.settings, plan), tmp);
    if (complaint !== undefined) throw new SandboxError(`the sandbox cannot start: ${complaint}. ${fixHint(ctx.settings.mode)}`);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return bwrap;
}

/**
 * Confines programs: each runs in bwrap with a private TMPDIR (made for it, removed after it) and,
 * under sandbox_allow_domains, its own proxy. The first start checks that bwrap is there and works
 * (the answer is kept; `prepared`: a bwrap prepareSandbox already checked for this context); when it is
 * not, every start fails with why and how to fix it.
 */
export function sandboxConfiner(ctx: SandboxContext, prepared?: string): (req: ConfineRequest) => Promise<Launch> {
  let ready: Promise<string> | undefined = prepared === undefined ? undefined : Promise.resolve(prepared);
  let warned = false;
  const prepare = () => prepareSandbox(ctx);
  const proxied = !ctx.settings.network && ctx.settings.allowDomains.length > 0;
  if (proxied && !ctx.self) throw new SandboxError("sandbox_allow_domains needs the tendril binary to forward to its proxy inside the sandbox");
  return async (req) => {
    ready ??= prepare();
    let bwrap: string;
    try {
      bwrap = await ready;
    } catch (err) {
      ready = undefined; // installed meanwhile? the next command looks again
      if (!warned) log.warn("confined commands fail: the sandbox cannot start", { error: (err as Error).message });
      warned = true;
      throw err;
    }
    const tmp = await mkdtemp(join(tmpdir(), "tendril-sandbox-"));
    const shown = neededFromPrivateDirs(req, ctx.self);
    const sockets = hostUnixSockets();
    const plan = (extra: string[] = []) => ({ root: ctx.root, extraRoots: ctx.extraRoots, cwd: req.cwd, tmp, hidden: hiddenPaths(ctx.settings, ctx.home, ctx.configDir), shown: [...shown, ...extra], sockets });
    const env: Record<string, string> = { ...req.env, TMPDIR: tmp };
    const newGit = newGitDirs(ctx);
    if (!proxied) {
      const start = await bwrapCommand(ctx.settings, bwrap, bwrapArgs(ctx.settings, plan()), tmp).catch(async (err) => {
        await rm(tmp, { recursive: true, force: true });
        throw err;
      });
      return { command: start.command, args: [...start.args, "--", ...req.argv], env, report: newGit, cleanup: () => rm(tmp, { recursive: true, force: true }) };
    }
    // The proxy listens on a unix socket in a folder of its own (0700), outside the command's writable TMPDIR.
    const dir = await mkdtemp(join(tmpdir(), "tendril-proxy-"));
    const proxy = await startEgressProxy(join(dir, "proxy.sock"), ctx.settings.allowDomains).catch(async (err) => {
      await rm(dir, { recursive: true, force: true });
      await rm(tmp, { recursive: true, force: true });
      throw err;
    });
    const url = `http://127.0.0.1:${PROXY_PORT}`;
    for (const k of ["NO_PROXY", "no_proxy"]) delete env[k];
    Object.assign(env, { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, ALL_PROXY: url, all_proxy: url });
    return {
      command: bwrap,
      args: [...bwrapArgs(ctx.settings, plan([dir])), "--", ctx.self!.command, ...ctx.self!.args, "sandbox-forward", String(PROXY_PORT), join(dir, "proxy.sock"), "--", ...req.argv],
      env,
      report: () => [proxy.refused.length > 0 ? proxyNote(proxy.refused, ctx.settings.allowDomains) : undefined, newGit()].filter((l) => l !== undefined).join("\n") || undefined,
      cleanup: async () => {
        await proxy.close();
        await Promise.all([rm(dir, { recursive: true, force: true }), rm(tmp, { recursive: true, force: true })]);
      },
    };
  };
}

/**
 * A `.git` a command makes at a workspace root where there was none cannot be guarded (a mount there
 * would leave one behind on the host), and git runs its hooks and config as the user later (a git-aware
 * shell prompt does on `cd`). So it is said in the command's result: read before the command starts,
 * the report tells which roots gained one.
 */
function newGitDirs(ctx: SandboxContext): () => string | undefined {
  if (ctx.settings.mode !== "workspace-write") return () => undefined;
  const bare = [ctx.root, ...(ctx.extraRoots ?? [])].filter((r) => entryKind(join(r, ".git")) === "none");
  return () => {
    const made = bare.filter((r) => entryKind(join(r, ".git")) !== "none");
    if (made.length === 0) return undefined;
    return `sandbox: this command created ${made.map((r) => join(r, ".git")).join(" and ")}; git runs the hooks and config (core.fsmonitor, core.hooksPath …) of a repository as the user, outside the sandbox, whenever git runs there (a git-aware shell prompt does on cd). Tell the user, so they check it before running git there.`;
  };
}

/** The line a command's result gets when the proxy refused hosts for it. */
export function proxyNote(hosts: readonly string[], patterns: readonly string[]): string {
  return `sandbox: the proxy refused ${hosts.join(", ")}: not in sandbox_allow_domains (${patterns.join(", ")}). Tell the user; they can add the host to sandbox_allow_domains.`;
}

/** A launcher that runs each shell command as `bash -c` in the sandbox. */
export function sandboxLauncher(ctx: SandboxContext): Launcher {
  const confine = sandboxConfiner(ctx);
  return (req) => confine({ argv: ["bash", "-c", req.command], cwd: req.cwd, env: req.env });
}

/** Output that looks like the sandbox said no: a read-only file system, a refused permission, a guarded
 *  mount that cannot be moved or removed, no network. */
const REFUSAL = /read-only file system|permission denied|operation not permitted|device or resource busy|network is unreachable|connection refused|could not resolve|name resolution|name or service not known|no route to host/i;

/** What a confined command may do, in one parenthesis-free clause list. */
function rulesText(ctx: SandboxContext, hidden: readonly string[]): string {
  const home = ctx.home;
  const show = (p: string) => (home && isInside(home, p) ? `~${p.slice(home.length)}` : p);
  const writable = ctx.settings.mode === "workspace-write" ? "the workspace (except git's hooks and config; the git dir cannot be moved or replaced) and $TMPDIR" : "only $TMPDIR";
  const domains = ctx.settings.allowDomains;
  const net = ctx.settings.network ? "network allowed, but no unix sockets (socketpair works)" : domains.length > 0 ? `network only to ${domains.join(", ")} through the HTTP(S)_PROXY given` : "no network";
  return `sandbox = "${ctx.settings.mode}": writable: ${writable}; ${net}; unreadable: ${hidden.map(show).join(", ") || "nothing"}`;
}

/** One sentence for the tool server's instructions: the model knows the rules before it runs anything. */
export function describeSandbox(ctx: SandboxContext): string {
  return `Shell commands run in a sandbox (${rulesText(ctx, hiddenPaths(ctx.settings, ctx.home, ctx.configDir))}); $TMPDIR is private to each command.`;
}

/** The line a failed sandboxed command's result gets when its output looks like the sandbox stopped it. */
export function explainSandboxFailure(ctx: SandboxContext, output: string): string | undefined {
  if (/^bwrap: /m.test(output)) {
    return `sandbox: bwrap could not set up this command (its message is above); the setting in force is sandbox = "${ctx.settings.mode}", and sandbox = "off" runs commands unconfined.`;
  }
  const hidden = hiddenPaths(ctx.settings, ctx.home, ctx.configDir);
  if (!REFUSAL.test(output) && !hidden.some((p) => output.includes(p))) return undefined;
  return `sandbox: this command ran confined (${rulesText(ctx, hidden)}), which may be what stopped it. Tell the user; they can widen the setting (sandbox = "workspace-write", sandbox_network = true) or turn it off (sandbox = "off").`;
}

/** One line per setting: whether it works on this machine. Each runs `true` the way a confined command
 *  starts (the start-up probe, then bwrap with the setting's mounts, filter or forwarder and proxy). */
export async function checkSandbox(
  pathVar: string | undefined,
  home: string | undefined,
  configDir: string,
  self?: { command: string; args: string[] },
): Promise<{ lines: string[]; ok: boolean }> {
  const lines = ["off: works (commands run unconfined)"];
  let ok = true;
  const scratch = await mkdtemp(join(tmpdir(), "tendril-sandbox-check-"));
  try {
    const ws = join(realpathSync(scratch), "ws");
    await mkdir(ws);
    const settings: [string, SandboxSettings][] = [
      ...CONFINED.map((mode): [string, SandboxSettings] => [mode, { mode, network: false, hide: [], allowDomains: [] }]),
      ["workspace-write with sandbox_network = true", { mode: "workspace-write", network: true, hide: [], allowDomains: [] }],
    ];
    // The forwarder is this binary inside the sandbox: checked only when the caller says how to run it.
    if (self) settings.push(["workspace-write with sandbox_allow_domains", { mode: "workspace-write", network: false, hide: [], allowDomains: ["example.com"] }]);
    for (const [name, s] of settings) {
      try {
        const ctx: SandboxContext = { settings: s, root: ws, pathVar, home, configDir, self };
        const bwrap = await prepareSandbox(ctx); // its error here, not the confiner's warning too
        const launch = await sandboxConfiner(ctx, bwrap)({ argv: ["true"], cwd: ws, env: { PATH: "/usr/bin:/bin" } });
        const complaint = await runProbe(launch.command, launch.args, launch.env).finally(() => launch.cleanup?.());
        if (complaint !== undefined) throw new SandboxError(`a confined \`true\` failed: ${complaint}. ${fixHint(s.mode)}`);
        lines.push(`${name}: works (${bwrap})`);
      } catch (err) {
        ok = false;
        lines.push(`${name}: does not work: ${(err as Error).message}`);
      }
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return { lines, ok };
}
