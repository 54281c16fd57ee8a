// Owns every process group Tendril starts: spawning a command as the leader of a new group, the
// watchdog that kills the group when this process dies (even by SIGKILL), the registry of live
// groups, and the one kill ladder (SIGTERM, SIGKILL after a grace), which takes the processes that left
// the group too: on Linux this process is a child subreaper (subreaper.ts), so those come back to it as
// children once their parents are gone and are ended from there, whatever they did to their
// environment; elsewhere they are found by process-marks.ts's mark. Does not read output or speak any
// protocol; the callers (shell tool, MCP stdio transport, ACP agent process, conductor) do.
import type { ChildProcess } from "node:child_process";
import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { DEFAULT_LIMITS, type Limits } from "./limits.ts";
import { logFailure } from "./log.ts";
import { findMarked, MARK_VAR, markEnv, markSource, newMark, ownerMark, type Since, stillMarked } from "./process-marks.ts";
import { ownChildren, ownGroup, reap, subreaperActive, subreaperOn } from "./subreaper.ts";

/** Where the marks are read (/proc, or the `ps` fallback macOS uses): tests run both. */
export { markSource, setMarkSource } from "./process-marks.ts";
/** Whether orphans are found as adopted children (Linux) or by their marks: tests run both. */
export { setSubreaper, subreaperOn } from "./subreaper.ts";

/** node:child_process, loaded with the first spawn: it costs ~4 ms of an agent's ~9 ms spawn →
 *  `initialize` answer, and a session spawns nothing before its first shell command or stdio server. */
const childProcess = () => process.getBuiltinModule("node:child_process");

export interface GroupSpawn {
  /** What the group is, for error messages: `MCP server fs`, `agent`, `shell command`. */
  label: string;
  command: string;
  args?: readonly string[];
  /** The child's whole environment; PATH in it is where `command` is looked up. */
  env: Record<string, string>;
  cwd?: string;
  /** stdin of the command: a pipe (protocol peers) or nothing (shell commands). */
  stdin: "pipe" | "ignore";
  /** More pipes the command gets, on descriptors 4 onward (3 is the gate's): the sandbox's bwrap
   *  reports on one. The caller reads them from `child.stdio`. */
  extraPipes?: number;
}

export class SpawnError extends Error {
  override name = "SpawnError";
}

// The watchdog: one tiny `sh` per owner process, outside every group (its own session, so a
// terminal's Ctrl-C and a kill of our own group miss it), whose stdin is a pipe from us. We tell it
// `+PGID` when a group starts (it answers the PGID on its stdout once the group is on its list) and
// `-PGID` when the group is dealt with; when we die, however we die, the kernel closes the pipe, its
// `read` sees EOF, and it kills every group still on its list. It is not a member of any group, so a
// group empties (no orphaned zombie) when its command ends. Then it kills, in rounds until two looks
// in a row find none, every process that carries one of our marks ($1) and left its group: setsid, a
// double fork, a daemon ($2 says where marks are read, as process-marks.ts does; $3 bounds the rounds;
// $4 is the variable).
const WATCHDOG = [
  'groups=" "',
  'while read -r line; do',
  '  case "$line" in',
  '    +*) groups="$groups${line#+} "; echo "${line#+}" ;;',
  '    -*) kept=" "; for g in $groups; do [ "$g" = "${line#-}" ] || kept="$kept$g "; done; groups=$kept ;;',
  "  esac",
  "done",
  'for g in $groups; do kill -9 "-$g" 2>/dev/null; done',
  "n=0; empty=0",
  'while [ "$n" -lt "$3" ]; do',
  '  if [ "$2" = proc ]; then',
  '    pids=$(grep -lsz "^$4=.*$1-" /proc/[0-9]*/environ | sed "s,^/proc/\\([0-9]*\\)/environ\$,\\1,")',
  "  else",
  '    pids=$(ps axwwe -o pid= -o command= | awk -v v="$4" -v o="$1-" -v me="$$" \'$1 != me { i = index($0, " " v "="); if (i && index(substr($0, i), o)) print $1 }\')',
  "  fi",
  // Two empty looks in a row end it, as findStrays does.
  '  if [ -z "$pids" ]; then empty=$((empty + 1)); [ "$empty" -lt 2 ] || break; n=$((n + 1)); continue; fi',
  "  empty=0",
  "  kill -9 $pids 2>/dev/null",
  "  n=$((n + 1))",
  "done",
].join("\n");
// The command itself waits for a go on fd 3, sent once the watchdog has answered for its group:
// there is no moment in which the command runs unwatched. If we die before the go, it exits
// without running at all.
const GATE = 'read _ <&3 || exit 125; exec 3<&-; exec "$0" "$@"';
const POLL_MS = 10;

/** Live groups (pgid → label and the mark its processes carry). A group stays here until killGroup has finished with it. */
const live = new Map<number, { label: string; mark: string; since: Since }>();
/** Children this process spawned itself (group leaders, watchdogs) until the runtime has reaped them:
 *  never waited for here, never taken for an adopted orphan. */
const spawned = new Set<number>();
const track = (child: ChildProcess) => {
  if (child.pid === undefined) return;
  const pid = child.pid;
  spawned.add(pid);
  child.once("exit", () => spawned.delete(pid));
};
let watchdog: ChildProcess | undefined;
/** Groups told to a watchdog and not yet answered for (pgid → that watchdog, what to do on the answer,
 *  how many watchdogs it has been told to). */
const awaiting = new Map<number, { dog: ChildProcess; then: (ok: boolean) => void; tries: number }>();
/** Watchdogs a group may be told to before it is given up: one that died unanswering, and a fresh one. */
const WATCHDOG_TRIES = 3;
let graceMs: number = DEFAULT_LIMITS.KILL_GRACE_MS;
let strayRounds: number = DEFAULT_LIMITS.STRAY_KILL_ROUNDS;

/** Sets the SIGTERM → SIGKILL grace of the ladder and the rounds of stray kills (cli/ passes the limits in force). */
export function setKillLimits(limits: Pick<Limits, "KILL_GRACE_MS" | "STRAY_KILL_ROUNDS">): void {
  graceMs = limits.KILL_GRACE_MS;
  strayRounds = limits.STRAY_KILL_ROUNDS;
}

/** The command's absolute path, looked up on PATH as exec would; undefined when there is none. */
export function findCommand(command: string, pathVar: string | undefined, cwd: string = process.cwd()): string | undefined {
  const candidates = command.includes("/")
    ? [isAbsolute(command) ? command : resolve(cwd, command)]
    : (pathVar ?? "").split(delimiter).filter((d) => d !== "").map((d) => join(isAbsolute(d) ? d : resolve(cwd, d), command));
  for (const file of candidates) {
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, fsConstants.X_OK);
      return file;
    } catch {
      // not here: try the next PATH entry
    }
  }
  return undefined;
}

/**
 * Starts `command` as the leader of a new process group (its pid is the group id), registered until
 * killGroup ends it. stdout and stderr are pipes. Throws SpawnError, naming what is wrong, when the
 * working directory or the command does not exist (checked before anything runs) or no process
 * could be started; a returned child is running.
 */
export function spawnGroup(spec: GroupSpawn): ChildProcess {
  const cwd = spec.cwd ?? process.cwd();
  let isDir = false;
  try {
    isDir = statSync(cwd).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new SpawnError(`cannot start ${spec.label}: working directory ${cwd} does not exist or is not a directory`);
  const file = findCommand(spec.command, spec.env.PATH, cwd);
  if (file === undefined) {
    const where = spec.command.includes("/") ? "no such executable file" : "not found on PATH";
    throw new SpawnError(`cannot start ${spec.label}: ${JSON.stringify(spec.command)}: ${where}`);
  }
  const mark = newMark();
  subreaperOn();
  const child = childProcess().spawn("/bin/sh", ["-c", GATE, file, ...(spec.args ?? [])], {
    cwd,
    env: markEnv(spec.env, mark),
    detached: true, // setsid: a new session and group, no controlling terminal, no terminal Ctrl-C
    stdio: [spec.stdin, "pipe", "pipe", "pipe", ...Array<"pipe">(spec.extraPipes ?? 0).fill("pipe")],
  });
  track(child);
  // Callers need not wait for a `spawn` event (Bun does not always emit one): a pid means it runs.
  const refused = () => new SpawnError(`cannot start ${spec.label}: the system refused to start a process (too many processes or open files?)`);
  if (child.pid === undefined) {
    child.once("error", () => {});
    throw refused();
  }
  const pgid = child.pid;
  const gate = child.stdio[3] as (NodeJS.WritableStream & { destroy?: () => void }) | null;
  gate?.on("error", () => {});
  // The go waits until the watchdog has answered for the group: were we killed in between, the
  // command would otherwise run with nobody to take it down.
  const listed = watch(pgid, (ok) => {
    if (ok) gate?.end("go\n");
    else {
      gate?.destroy?.();
      signalGroup(pgid, "SIGKILL");
    }
  });
  if (!listed) {
    signalGroup(pgid, "SIGKILL");
    throw refused();
  }
  live.set(pgid, { label: spec.label, mark, since: { pid: pgid, at: Date.now() } });
  return child;
}

/**
 * Puts a group on the watchdog's list, starting the watchdog (again, if it died) when needed;
 * `then` learns whether the watchdog answered for it. False: no watchdog could start.
 */
function watch(pgid: number, then: (ok: boolean) => void, tries = 1): boolean {
  if (watchdog === undefined || watchdog.exitCode !== null || watchdog.signalCode !== null) {
    const args = ["-c", WATCHDOG, "watchdog", ownerMark(), markSource(), String(strayRounds), MARK_VAR];
    const dog = childProcess().spawn("/bin/sh", args, { detached: true, stdio: ["pipe", "pipe", "ignore"], env: { PATH: "/usr/bin:/bin" } });
    if (dog.pid === undefined) return false;
    track(dog);
    dog.once("error", logFailure("the watchdog"));
    dog.stdin?.on("error", logFailure("a write to the watchdog")); // it died: the next group starts another
    let partial = "";
    dog.stdout?.setEncoding("utf8");
    dog.stdout?.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) answered(Number(line), true);
    });
    let wentAway = false;
    const gone = () => {
      if (wentAway) return;
      wentAway = true;
      if (watchdog === dog) watchdog = undefined;
      for (const g of [...awaiting.keys()]) retell(g, dog);
    };
    dog.stdout?.once("close", gone);
    dog.once("exit", gone);
    // None of it keeps us alive: the owner decides when it exits.
    dog.unref();
    // Bun's and Node's pipe streams have unref(); the stream types do not declare it.
    for (const stream of [dog.stdin, dog.stdout]) (stream as { unref?: () => void } | null)?.unref?.();
    watchdog = dog;
    // A new watchdog knows nothing yet: tell it every group still alive.
    for (const g of live.keys()) dog.stdin?.write(`+${g}\n`);
  }
  const dog = watchdog;
  const pipe = dog.stdin;
  if (!pipe) return false;
  awaiting.set(pgid, { dog, then, tries });
  pipe.write(`+${pgid}\n`, (err) => {
    if (err) retell(pgid, dog);
  });
  return true;
}

/**
 * A group `dog` never answered for because it died (killed, say, between our write and its echo): told
 * to a new watchdog, so a watchdog's death costs no command; failed when no watchdog will answer.
 */
function retell(pgid: number, dog: ChildProcess): void {
  const wait = awaiting.get(pgid);
  if (!wait || wait.dog !== dog) return;
  awaiting.delete(pgid);
  if (watchdog === dog) watchdog = undefined;
  if (wait.tries >= WATCHDOG_TRIES || !watch(pgid, wait.then, wait.tries + 1)) wait.then(false);
}

function answered(pgid: number, ok: boolean): void {
  const wait = awaiting.get(pgid);
  if (!wait) return; // a group re-told to a new watchdog, or one already settled
  awaiting.delete(pgid);
  wait.then(ok);
}

/** Takes a group off the watchdog's list (it is dealt with). */
function dropWatchdog(pgid: number): void {
  live.delete(pgid);
  watchdog?.stdin?.write(`-${pgid}\n`);
}

/** Whether a process with this pid exists on this host (EPERM: it does, owned by someone else). The one
 *  liveness test for pids recorded in file and folder names (lock files, temp and shim folders). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Sends `sig` to every process of group `pgid`; false when the group is gone (or not ours). */
export function signalGroup(pgid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Sends `sig` to each of `pids`, ignoring those gone. */
function signalEach(pids: readonly number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // gone already
    }
  }
}

/**
 * The processes carrying `mark`; a look that finds none is made again: a process that forks and exits
 * while one look reads the process list (a double fork's middle process) can hide its child from that
 * look, never from the next, which starts after the child exists.
 */
function findStrays(mark: string, since: Since | undefined): number[] {
  const pids = findMarked(mark, since);
  return pids.length > 0 ? pids : findMarked(mark, since);
}

/** SIGKILL, in rounds until two looks in a row find none (a stray may fork between a look and a kill),
 *  to every process that still carries `mark`. */
function killMarked(mark: string, since: Since): void {
  for (let round = 0; round < strayRounds; round++) {
    const pids = findStrays(mark, since);
    if (pids.length === 0) return;
    signalEach(pids, "SIGKILL");
  }
}

/**
 * The kill ladder: SIGTERM to the group and to the processes that left it (strays: they carry the
 * group's mark), then SIGKILL once the grace has passed unless all of them ended first. Zombies
 * nobody reaped still count as members, so the last SIGKILL to the group is sent whatever the polls
 * said; strays are killed until a look finds none.
 */
export async function killGroup(pgid: number, grace: number = graceMs): Promise<void> {
  const { mark, since } = live.get(pgid) ?? {};
  // A subreaper finds what left the group among its own children once the group is gone: no
  // process's environment is read (the marks stay for the watchdog, and where there is no subreaper).
  const adopting = subreaperOn();
  try {
    const inGroup = signalGroup(pgid, "SIGTERM");
    const strays = mark === undefined || adopting ? [] : findStrays(mark, since);
    signalEach(strays, "SIGTERM");
    if (!inGroup && strays.length === 0) return;
    const deadline = Date.now() + grace;
    let groupLeft = inGroup;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(1, deadline - Date.now()))));
      groupLeft = groupLeft && signalGroup(pgid, 0);
      if (!groupLeft && !strays.some((pid) => stillMarked(pid, mark!))) break;
    }
    if (groupLeft) signalGroup(pgid, "SIGKILL");
    if (mark !== undefined && !adopting) killMarked(mark, since!);
  } finally {
    dropWatchdog(pgid);
    if (adopting) await endAdopted();
  }
}

/**
 * Ends the orphans this subreaper adopted: children it did not spawn itself that left our own process
 * group (a `setsid`, a daemon) and carry no live group's mark (a blanked or emptied environment
 * counts as none), in rounds while a kill brings their own children back to us; and waits for those
 * that died. A child of a live group (an MCP server's daemon) keeps running until its group ends.
 */
async function endAdopted(): Promise<void> {
  const own = ownGroup();
  const liveMarks = () => [...live.values()].map((g) => g.mark);
  for (let round = 0; round < strayRounds; round++) {
    const orphans: number[] = [];
    for (const c of ownChildren(MARK_VAR)) {
      if (spawned.has(c.pid)) continue;
      // A zombie in our own group is a child the runtime spawned itself (a probe's execFile): its
      // status is the runtime's to take. Adopted orphans are never in our group.
      if (c.zombie) {
        if (c.pgid !== own) reap(c.pid);
        continue;
      }
      if (c.pgid === own || liveMarks().some((m) => c.marks.includes(m))) continue;
      orphans.push(c.pid);
    }
    if (orphans.length === 0) return;
    signalEach(orphans, "SIGKILL");
    // Each dies at once (SIGKILL); it is waited for, and what it had forked comes back to us.
    for (let t = 0; t < 50 && orphans.some((pid) => !reap(pid) && pidAlive(pid)); t++) await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Every live group through the ladder, in parallel: at most one grace period. */
export async function killAllGroups(): Promise<void> {
  await Promise.all([...live.keys()].map((pgid) => killGroup(pgid)));
}

/** SIGKILL to every live group, synchronously: for the exit hook (the exit policy's), where nothing async runs. */
export function killAllGroupsNow(): void {
  for (const [pgid, { mark, since }] of [...live]) {
    signalGroup(pgid, "SIGKILL");
    killMarked(mark, since);
    dropWatchdog(pgid);
  }
  // The orphans already adopted: nothing of ours is live any more (what they fork later goes to init,
  // where the watchdog's marks and the groups' kills are what remains).
  if (subreaperActive()) {
    const own = ownGroup();
    signalEach(ownChildren(MARK_VAR).filter((c) => !spawned.has(c.pid) && !c.zombie && c.pgid !== own).map((c) => c.pid), "SIGKILL");
  }
}

/** How many started groups are not known to be gone (tests, diagnostics). */
export function liveGroupCount(): number {
  return live.size;
}
