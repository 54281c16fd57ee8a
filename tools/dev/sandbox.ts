// Owns the sandbox for shell commands: finding bubblewrap (on PATH, never inside the workspace), the
// probe that fails a confined setting closed, the confiner that starts each process in bwrap (its
// private TMPDIR, under sandbox_allow_domains its own egress-proxy.ts reached through
// sandbox-forward.ts), and `--check-sandbox`. The bwrap arguments are sandbox-args.ts's, the git guards
// sandbox-git.ts's, what stays unreadable sandbox-home.ts's, what results say sandbox-notes.ts's.
import { execFile } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findCommand } from "../../core/process-group.ts";
import { log } from "../../core/log.ts";
import { isInside } from "../../core/path-inside.ts";
import type { SandboxMode } from "../../core/sandbox-modes.ts";
import { bashArgv, INPUT_FD, type Launch, type Launcher, type RunEnd } from "./exec.ts";
import { DEFAULT_LIMITS } from "../../core/limits.ts";
import { startEgressProxy } from "./egress-proxy.ts";
import { SECCOMP_HOSTS, seccompSupported } from "./seccomp.ts";
import { bwrapArgs, bwrapCommand, bwrapDisablesUserns, hostUnixSockets, neededFromPrivateDirs, noUsernsFlag, seccompFilter } from "./sandbox-args.ts";
import { type ConfineRequest, type SandboxContext, SandboxError, type SandboxSettings, fixHint } from "./sandbox-context.ts";
import { gitEntriesOf } from "./sandbox-git.ts";
import { GitGuard } from "./git-watch.ts";
import { checkWritableRoots, hiddenPaths, homeView } from "./sandbox-home.ts";
import { proxyNote, setupFailedNote } from "./sandbox-notes.ts";
import { BwrapStatus } from "./sandbox-status.ts";

export { bwrapArgs, hostUnixSockets } from "./sandbox-args.ts";
export type { SandboxSettings } from "./sandbox-context.ts";
export { type ConfineRequest, type SandboxContext, SandboxError } from "./sandbox-context.ts";
export { checkHidePaths, hiddenPaths } from "./sandbox-home.ts";
export { describeSandbox } from "./sandbox-notes.ts";

const CONFINED: readonly SandboxMode[] = ["read-only", "workspace-write"];

/** One git check with its memory per set of writable roots (and walk bound): the most recently used
 *  few (each holds an inotify instance, which the user's other programs share a limit on). */
const guards = new Map<string, GitGuard>();
const MAX_GUARDS = 4;
function gitGuard(roots: readonly string[], walk: number): GitGuard {
  const key = JSON.stringify([roots, walk]);
  let g = guards.get(key);
  if (g) guards.delete(key);
  else {
    g = new GitGuard(roots, walk);
    const oldest = guards.keys().next();
    if (guards.size >= MAX_GUARDS && !oldest.done) {
      guards.get(oldest.value)?.close();
      guards.delete(oldest.value);
    }
  }
  guards.set(key, g);
  return g;
}

/** The port the in-sandbox forwarder listens on: the sandbox's loopback is its own, so any port is free. */
export const PROXY_PORT = 3128;
/** How long the start-up probe may take before the sandbox counts as broken. */
const PROBE_TIMEOUT_MS = 10_000;


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
  if (ctx.settings.mode === "workspace-write") checkWritableRoots([ctx.root, ...(ctx.extraRoots ?? [])], ctx.home);
  const bwrap = findBwrap(ctx.pathVar, ctx.root, ctx.settings.mode);
  if (!seccompSupported()) {
    throw new SandboxError(`the sandbox's seccomp filter is made for ${SECCOMP_HOSTS.join(" and ")} only (this is ${process.arch}); set sandbox = "off" to run commands unconfined`);
  }
  const tmp = await mkdtemp(join(tmpdir(), "tendril-sandbox-"));
  try {
    const plan = { root: ctx.root, extraRoots: ctx.extraRoots, cwd: ctx.root, tmp, hidden: hiddenPaths(ctx.settings, ctx.home, ctx.configDir, ctx.stateDir), sockets: hostUnixSockets(), home: homeView(ctx.home, ctx.pathVar), disableUserns: bwrapDisablesUserns(bwrap) };
    let complaint = await probeBwrap(ctx.settings, bwrap, bwrapArgs(ctx.settings, plan), tmp);
    // A setuid bwrap where unprivileged user namespaces are off cannot make the nested one
    // --disable-userns needs; the seccomp filter still refuses new user namespaces.
    if (complaint !== undefined && plan.disableUserns && (await probeBwrap(ctx.settings, bwrap, bwrapArgs(ctx.settings, { ...plan, disableUserns: false }), tmp)) === undefined) {
      log.debug("bwrap --disable-userns does not work here: the seccomp filter alone refuses new user namespaces", { bwrap, complaint });
      noUsernsFlag(bwrap);
      complaint = undefined;
    }
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
  let walkWarned = false;
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
    const home = homeView(ctx.home, req.env.PATH);
    const shown = [...neededFromPrivateDirs(req, ctx.self, home?.home), ...(ctx.alsoShown ?? []).filter((p) => existsSync(p))];
    const sockets = hostUnixSockets();
    const walk = ctx.gitWalkDirs ?? DEFAULT_LIMITS.SANDBOX_GIT_WALK_DIRS;
    const roots = [ctx.root, ...(ctx.extraRoots ?? [])];
    // One walk before the command: the mounts' git dirs and the git check's state to compare with after.
    const since = Date.now();
    const guard = ctx.settings.mode === "workspace-write" ? gitGuard(roots, walk) : undefined;
    const before = guard?.before();
    const gitBefore = before?.state;
    const git = gitBefore && gitEntriesOf(gitBefore);
    if (git && !git.complete && !walkWarned) {
      walkWarned = true;
      log.warn("the workspace has more folders than SANDBOX_GIT_WALK_DIRS: a .git deeper than that is neither guarded nor reported", { limit: walk });
    }
    const status = req.status ? new BwrapStatus() : undefined;
    const plan = (extra: string[] = [], ownSockets: string[] = []) => ({
      root: ctx.root, extraRoots: ctx.extraRoots, cwd: req.cwd, tmp, hidden: hiddenPaths(ctx.settings, ctx.home, ctx.configDir, ctx.stateDir), shown: [...shown, ...extra], sockets, ownSockets,
      git, home, disableUserns: bwrapDisablesUserns(bwrap), status: status !== undefined,
      // The shell's executor pipes the filter in (no /bin/sh in between); an MCP server's start opens the file.
      ...(status && { seccompFd: INPUT_FD }),
    });
    const env: Record<string, string> = { ...req.env, TMPDIR: tmp };
    const quarantine = join(ctx.stateDir ?? ctx.configDir, "quarantine");
    // Run after the command and, for one that runs in the background, at each read of its output:
    // each line is said once.
    const said = new Set<string>();
    const gitNote = () => {
      const lines = (guard && before ? guard.after(before, quarantine, since - 1000).note : undefined)?.split("\n").filter((l) => l !== "" && !said.has(l));
      for (const l of lines ?? []) said.add(l);
      return lines?.length ? lines.join("\n") : undefined;
    };
    const watch = status && { onStatus: (b: Buffer | null) => status.onData(b), beforeKill: () => status.kill(ctx.killHoldMs ?? DEFAULT_LIMITS.SANDBOX_KILL_HOLD_MS) };
    const stoppedBy = (end: RunEnd, refused: readonly string[]) =>
      refused.length > 0 ? proxyNote(refused, ctx.settings.allowDomains) : !end.killed && status?.setupFailed(end.exitCode) ? setupFailedNote(ctx.settings.mode) : undefined;
    const report = (refused: readonly string[]) => (end: RunEnd) => ({ note: gitNote(), stopped: stoppedBy(end, refused) });
    const removeTmp = () => rm(tmp, { recursive: true, force: true });
    const start = (args: string[]) => (status ? Promise.resolve({ command: bwrap, args, input: seccompFilter(ctx.settings) }) : bwrapCommand(ctx.settings, bwrap, args, tmp));
    if (!proxied) {
      const started = await start(bwrapArgs(ctx.settings, plan())).catch(async (err) => {
        await removeTmp();
        throw err;
      });
      return { ...started, args: [...started.args, "--", ...req.argv], env, ...watch, report: report([]), check: gitNote, cleanup: removeTmp };
    }
    // The proxy listens on a unix socket in a folder of its own (0700), outside the command's writable TMPDIR.
    const dir = await mkdtemp(join(tmpdir(), "tendril-proxy-"));
    const removeBoth = () => Promise.all([rm(dir, { recursive: true, force: true }), removeTmp()]).then(() => undefined);
    const proxy = await startEgressProxy(join(dir, "proxy.sock"), ctx.settings.allowDomains, ctx.proxyHead && { maxHeadBytes: ctx.proxyHead.maxBytes, headTimeoutMs: ctx.proxyHead.timeoutMs }).catch(async (err) => {
      await removeBoth();
      throw err;
    });
    const url = `http://127.0.0.1:${PROXY_PORT}`;
    for (const k of ["NO_PROXY", "no_proxy"]) delete env[k];
    Object.assign(env, { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, ALL_PROXY: url, all_proxy: url });
    const started = await start(bwrapArgs(ctx.settings, plan([dir], [join(dir, "proxy.sock")]))).catch(async (err) => {
      await proxy.close();
      await removeBoth();
      throw err;
    });
    return {
      ...started,
      args: [...started.args, "--", ctx.self!.command, ...ctx.self!.args, "sandbox-forward", String(PROXY_PORT), join(dir, "proxy.sock"), "--", ...req.argv],
      env,
      ...watch,
      report: (end) => report(proxy.refused)(end),
      check: gitNote,
      cleanup: async () => {
        await proxy.close();
        await removeBoth();
      },
    };
  };
}

/** A launcher that runs each shell command as `bash -c` in the sandbox. */
export function sandboxLauncher(ctx: SandboxContext): Launcher {
  const confine = sandboxConfiner(ctx);
  return (req) => confine({ argv: bashArgv(req.command), cwd: req.cwd, env: req.env, status: true });
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
