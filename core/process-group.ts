// Owns every process group Tendril starts: spawning a command as the leader of a new group, the
// watchdog that kills the group when this process dies (even by SIGKILL), the registry of live
// groups, and the one kill ladder (SIGTERM, SIGKILL after a grace), which takes the processes that left
// the group too (strays): on Linux this process is a child subreaper (subreaper.ts), so those come back
// to it as children once their parents are gone, are told apart from the children of groups still
// running, and are ended and waited for from there, whatever they did to their environment; elsewhere
// they are found by process-marks.ts's mark, one look per ended group. Does not read output or speak
// any protocol; the callers (shell tool, MCP stdio transport, ACP agent process, conductor) do.
import type { ChildProcess } from "node:child_process";
import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { DEFAULT_LIMITS, type Limits } from "./limits.ts";
import { logFailure } from "./log.ts";
import { findMarked, findMarkedNow, MARK_VAR, markEnv, markOf, markSource, newMark, ownerMark, type Since, stillMarked } from "./process-marks.ts";
import { childPids, ownChildren, ownGroup, type ProcStat, procStat, reap, subreaperActive, subreaperOn } from "./subreaper.ts";

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

interface Group {
  label: string;
  /** The mark its processes carry. */
  mark: string;
  since: Since;
  /** Its leader's start (subreaper.ts's clock ticks; with the subreaper only): every process of the
   *  group started no earlier. */
  start?: number;
  /** killGroup has begun with it: its processes no longer count as a running group's. */
  ending: boolean;
}
/** Live groups by pgid. A group stays here until killGroup has finished with it. */
const live = new Map<number, Group>();
/** killGroup under way, by pgid: a second call (a timeout, then the command's end) waits for the first. */
const killing = new Map<number, Promise<void>>();
/** Children this process spawned itself (group leaders, watchdogs) until the runtime has reaped them:
 *  never waited for here, never taken for an adopted orphan. Every child spawned outside our own
 *  process group is one of these (the runtime's other children, `ps` or a probe, stay in it). */
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
  const adopting = subreaperOn();
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
  live.set(pgid, { label: spec.label, mark, since: { pid: pgid, at: Date.now() }, start: adopting ? procStat(pgid)?.start : undefined, ending: false });
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
function signalEach(pids: Iterable<number>, sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // gone already
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long killed strays (SIGKILL: they die at once) are waited for before the next look. */
const SETTLE_MS = 500;

/**
 * The kill ladder, the one there is: SIGTERM to group `pgid` (if any) and to `pids` (strays), then
 * SIGKILL once `grace` has passed to what is still there, unless all of it ended first. Zombies nobody
 * reaped still count as members, so the SIGKILL to a group that was there goes out whatever the polls
 * said. Whether there was anything to end.
 */
async function ladder(pgid: number | undefined, pids: readonly number[], grace: number, strays: Strays): Promise<boolean> {
  const present = () => pgid !== undefined && (strays.reapGroup(pgid), signalGroup(pgid, 0));
  let groupLeft = pgid !== undefined && signalGroup(pgid, "SIGTERM");
  signalEach(pids, "SIGTERM");
  let left = pids.filter((pid) => !strays.gone(pid));
  if (!groupLeft && left.length === 0) return pids.length > 0;
  const inGroup = groupLeft;
  const deadline = Date.now() + grace;
  while (Date.now() < deadline) {
    await sleep(Math.min(POLL_MS, Math.max(1, deadline - Date.now())));
    groupLeft = groupLeft && present();
    left = left.filter((pid) => !strays.gone(pid));
    if (!groupLeft && left.length === 0) break;
  }
  if (inGroup && groupLeft) {
    signalGroup(pgid!, "SIGKILL");
    // Until it is gone (the runtime reaps its leader): its members are not taken for strays.
    for (const end = Date.now() + SETTLE_MS; present() && Date.now() < end; ) await sleep(POLL_MS);
  }
  signalEach(left, "SIGKILL");
  return true;
}

/** Where the strays of one ended group are looked for. */
interface Strays {
  /** One look: the strays there now. */
  look(): Promise<number[]>;
  /** Whether a stray the last look found has ended (a subreaper's own child is waited for then). */
  gone(pid: number): boolean;
  /** Waits for the group's members that ended and came back to us (a subreaper's: a member whose
   *  parent died first), which would keep the group from reading empty. */
  reapGroup(pgid: number): void;
}

/** Groups whose command still runs (killGroup has not begun with them). */
const running = (): [number, Group][] => [...live].filter(([, g]) => !g.ending);

/**
 * The marks (macOS, no subreaper): each look is one read of every process's environment (by `ps`, or
 * /proc), asynchronous, for every process carrying one of this Tendril's marks and none of a running
 * group's. So a look finds what any ended group left behind, and a stray one look missed (a process
 * that forked and exited while `ps` read the list can hide its child) is found by the next ended
 * group's look; the watchdog's rounds take what remains when Tendril exits.
 */
function markedStrays(group: Group): Strays {
  const ours = `${ownerMark()}-`;
  return {
    look: async () => {
      const runs = running();
      return (await findMarked(ours, group.since)).filter((m) => !runs.some(([, g]) => m.marks.includes(g.mark))).map((m) => m.pid);
    },
    gone: (pid) => !stillMarked(pid, ours),
    reapGroup: () => {},
  };
}

/** Descendants of the strays found, at most this many (a fork bomb is taken in the next rounds). */
const MAX_STRAYS = 4096;

/**
 * Zombies among our children in our own process group, by pid (with their start and when first seen):
 * not strays (nothing of a group rejoins our group) but what a child of the runtime's own left when it
 * exited (bwrap's probe forks). The runtime waits for its own children within a turn of the event loop,
 * and waiting for one of those here would take its status (the runtime then reports ECHILD), so a
 * zombie here is waited for only once an earlier look, ZOMBIE_AGE_MS before, saw it already.
 */
let lingering = new Map<number, { start: number; at: number }>();
const ZOMBIE_AGE_MS = 1000;

/**
 * The subreaper (Linux): a process that left a group comes back to us once its parents are gone, and
 * every process that left an ended group has by the time the group is gone, so the strays are among
 * our own children: each look reads our children (not every process on the machine), waits for those
 * that ended, and takes those that are not the runtime's own (spawned here, or in our own process
 * group), not a running group's (adoptedByRunning), with all their descendants.
 */
function adoptedStrays(group: Group | undefined): Strays {
  /** Start of each stray found (a pid that now names another process is not ours to signal or reap). */
  const starts = new Map<number, number>();
  const look = (): number[] => {
    const own = ownGroup();
    const runs = running();
    const found: number[] = [];
    const seen = new Map<number, { start: number; at: number }>();
    for (const c of ownChildren()) {
      // The runtime's own children are never waited for or ended here: it waits for them itself.
      if (spawned.has(c.pid)) continue;
      if (c.pgid === own) {
        if (c.state !== "Z") continue;
        const before = lingering.get(c.pid);
        if (before?.start === c.start && Date.now() - before.at >= ZOMBIE_AGE_MS) reap(c.pid);
        else seen.set(c.pid, before?.start === c.start ? before : { start: c.start, at: Date.now() });
        continue;
      }
      if (c.state === "Z") {
        reap(c.pid); // an adopted orphan that ended: nothing else would wait for it
        continue;
      }
      if (adoptedByRunning(c, runs, group)) continue;
      starts.set(c.pid, c.start);
      found.push(c.pid);
    }
    lingering = seen;
    return withDescendants(found, starts);
  };
  return {
    look: async () => look(),
    gone: (pid) => {
      const st = procStat(pid);
      if (st === undefined || st.start !== starts.get(pid)) return true; // ended and waited for; the pid is not its any more
      if (st.state !== "Z") return false;
      if (st.ppid !== process.pid) return false; // its parent is ending too: then it is ours to wait for
      reap(pid);
      return true;
    },
    reapGroup: (pgid) => {
      for (const c of ownChildren()) if (c.pgid === pgid && c.state === "Z" && !spawned.has(c.pid)) reap(c.pid);
    },
  };
}

/** `roots` and every process they started (which would come back to us at their death, one round later
 *  each), at most MAX_STRAYS; `starts` learns each one's start. */
function withDescendants(roots: number[], starts: Map<number, number>): number[] {
  const all = [...roots];
  for (let i = 0; i < all.length && all.length < MAX_STRAYS; i++) {
    for (const kid of childPids(all[i]!)) {
      const st = procStat(kid);
      if (st === undefined || starts.has(kid)) continue;
      starts.set(kid, st.start);
      all.push(kid);
    }
  }
  return all;
}

/**
 * Whether our adopted child `c` belongs to a group whose command still runs, rather than to `ended`
 * (the group being killed) or any other that ended: it is then left alone until its group ends.
 * - Its session or process group is a running group's: it never called setsid (the kernel says so).
 * - Else its mark names a running group (a mark claimed by a process that started before that group's
 *   leader is false: it cannot descend from it).
 * - Else it carries no mark of ours (it blanked or emptied its environment): it cannot be named. It
 *   came back to us, so something we started orphaned it; it is ended with the first group to end that
 *   started no later than it did (no process of a group starts before the group, so every unnamed
 *   orphan of a group is ended with that group at the latest), and with any group when no other runs.
 *   An unnamed orphan of a running MCP server that appeared while a command ran is ended with that
 *   command: a process that hides where it came from is not kept.
 */
function adoptedByRunning(c: ProcStat, runs: [number, Group][], ended: Group | undefined): boolean {
  if (runs.some(([pgid]) => c.sid === pgid || c.pgid === pgid)) return true;
  const marks = markOf(c.pid) ?? "";
  if (marks.includes(`${ownerMark()}-`)) return runs.some(([, g]) => marks.includes(g.mark) && !(g.start !== undefined && c.start < g.start));
  if (runs.length === 0) return false;
  return ended?.start === undefined || c.start < ended.start;
}

/**
 * The strays of an ended group, in rounds until a look finds none (at most `strayRounds`; a round takes
 * what forked during the last): the first round's strays go through the ladder (unless all of them,
 * `termed`, had their SIGTERM and grace with the group), the later rounds' get SIGKILL; each round
 * waits for its strays to be gone (a subreaper's adopted children come back to it at their parents'
 * death).
 */
async function endStrays(strays: Strays, grace: number, termed: ReadonlySet<number>): Promise<void> {
  for (let round = 0; round < strayRounds; round++) {
    const found = await strays.look();
    if (found.length === 0) return;
    if (round === 0 && found.some((pid) => !termed.has(pid))) await ladder(undefined, found, grace, strays);
    else signalEach(found, "SIGKILL");
    for (const end = Date.now() + SETTLE_MS; found.some((pid) => !strays.gone(pid)) && Date.now() < end; ) await sleep(POLL_MS);
  }
}

/**
 * Ends group `pgid` and what left it: the ladder for the group (with, under a subreaper, the strays
 * already adopted: one SIGTERM, one grace), then, once the group is gone, its strays, found among our
 * children (subreaper) or by one look for the marks, through endStrays. A look made once the group is
 * gone cannot miss a stray because a member of the group forked it while the look read the list.
 */
export function killGroup(pgid: number, grace: number = graceMs): Promise<void> {
  const under = killing.get(pgid);
  if (under) return under;
  const done = killNow(pgid, grace).finally(() => killing.delete(pgid));
  killing.set(pgid, done);
  return done;
}

async function killNow(pgid: number, grace: number): Promise<void> {
  const group = live.get(pgid);
  if (group) group.ending = true;
  try {
    if (subreaperOn()) {
      const strays = adoptedStrays(group);
      const first = await strays.look();
      // Nothing there: the group was gone, and every process that left it was adopted then; none was.
      if (!(await ladder(pgid, first, grace, strays))) return;
      await endStrays(strays, grace, new Set(first));
    } else {
      const strays = group ? markedStrays(group) : undefined;
      await ladder(pgid, [], grace, strays ?? { look: async () => [], gone: () => true, reapGroup: () => {} });
      if (strays) await endStrays(strays, grace, new Set());
    }
  } finally {
    dropWatchdog(pgid);
  }
}

/** Every live group through the ladder, in parallel: at most one grace period. */
export async function killAllGroups(): Promise<void> {
  await Promise.all([...live.keys()].map((pgid) => killGroup(pgid)));
}

/** SIGKILL to every live group and what left them, synchronously: for the exit hook (the exit
 *  policy's), where nothing async runs. The watchdog's rounds follow once this process is gone. */
export function killAllGroupsNow(): void {
  const groups = [...live];
  for (const [pgid] of groups) {
    signalGroup(pgid, "SIGKILL");
    dropWatchdog(pgid);
  }
  if (groups.length > 0) {
    // One look for all of them: a young group's range when it is the only one, else every process.
    const since = groups.length === 1 ? groups[0]![1].since : undefined;
    for (let round = 0; round < strayRounds; round++) {
      const pids = findMarkedNow(`${ownerMark()}-`, since).map((m) => m.pid);
      if (pids.length === 0) break;
      signalEach(pids, "SIGKILL");
    }
  }
  // The orphans already adopted: nothing of ours runs any more (what they fork later goes to init,
  // where the watchdog's marks and the groups' kills are what remains).
  if (subreaperActive()) {
    const own = ownGroup();
    const adopted = ownChildren().filter((c) => !spawned.has(c.pid) && c.state !== "Z" && c.pgid !== own);
    signalEach(withDescendants(adopted.map((c) => c.pid), new Map(adopted.map((c) => [c.pid, c.start]))), "SIGKILL");
  }
}

/** How many started groups are not known to be gone (tests, diagnostics). */
export function liveGroupCount(): number {
  return live.size;
}
