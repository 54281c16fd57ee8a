// Owns the mark every process group's command carries in its environment (TENDRIL_RUN_MARK), reading
// it, and finding by it the processes a command started that left its group (setsid, a double fork, a
// daemon): from /proc/PID/environ on Linux, from `ps`'s environment column where there is no /proc
// (macOS). A look for a finished command leaves the event loop free (an asynchronous `ps`, /proc read
// in batches between its turns); the exit hook's is synchronous. Does not spawn or kill anything;
// process-group.ts decides when what it finds ends.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { randomHex } from "./ids.ts";

/** The variable: one `OWNER-N;` token per Tendril between the command and the first Tendril above it. */
export const MARK_VAR = "TENDRIL_RUN_MARK";
let owner: string | undefined;
let seq = 0;

/** This process's part of every mark it hands out: the watchdog finds all of them by it when we die. */
export function ownerMark(): string {
  owner ??= `${process.pid.toString(36)}x${randomHex(5)}`;
  return owner;
}

/** A fresh mark for one group (`OWNER-N;`: the `;` keeps `-1;` from matching `-12;`). */
export function newMark(): string {
  return `${ownerMark()}-${++seq};`;
}

/** `env` with `mark` added to MARK_VAR (kept: a mark from a Tendril this one runs inside, which ends it all too). */
export function markEnv(env: Record<string, string>, mark: string): Record<string, string> {
  return { ...env, [MARK_VAR]: (env[MARK_VAR] ?? "") + mark };
}

/** Where marks are read: /proc where the system has it, else `ps` (tests use both). */
export type MarkSource = "proc" | "ps";
let source: MarkSource | undefined;

/** Chooses where marks are read (tests of the macOS fallback on Linux). */
export function setMarkSource(s: MarkSource): void {
  source = s;
}

export function markSource(): MarkSource {
  source ??= existsSync("/proc/self/environ") ? "proc" : "ps";
  return source;
}

const ENTRY = `${MARK_VAR}=`;

/** A group's leader pid and when it started: what its processes were started after. */
export interface Since {
  pid: number;
  at: number;
}
/**
 * Processes started after a leader got pid L have pids from L+1 to the newest pid while the pid counter
 * has not wrapped since (the newest is still ≥ L): only those are read, not every process on the machine
 * (listing /proc alone costs ~4 µs a process). A full turn of the counter (pid_max, 32768 at least)
 * inside one command younger than this is not credible; an older one, or a counter that wrapped, has
 * every process read.
 */
const RANGE_MAX_AGE_MS = 1000;
/** A range wider than this is read by listing /proc instead (each pid tried costs about one listed entry). */
const RANGE_MAX_PIDS = 4096;

/** A live process, ours to read, and its MARK_VAR value. */
export interface Marked {
  pid: number;
  marks: string;
}

/** The processes whose MARK_VAR holds `needle` (a mark, or `${ownerMark()}-` for all of ours);
 *  `since`: they descend from that leader, which bounds where they are looked for. One look, off the
 *  event loop as far as the source allows. */
export async function findMarked(needle: string, since?: Since): Promise<Marked[]> {
  if (markSource() === "ps") return fromPs(needle, await psOutput());
  const { found, rest } = fromProcRange(needle, since);
  for (let i = 0; i < rest.length; i++) {
    // Each read is ~10 µs and an asynchronous one costs several times that: read in batches, letting
    // the event loop run between them.
    if (i > 0 && i % PROC_BATCH === 0) await new Promise((r) => setImmediate(r));
    const marks = markOf(rest[i]!);
    if (marks?.includes(needle)) found.push({ pid: rest[i]!, marks });
  }
  return found;
}

/** findMarked, synchronously: for the exit hook, where nothing asynchronous runs. */
export function findMarkedNow(needle: string, since?: Since): Marked[] {
  if (markSource() === "ps") return fromPs(needle, psOutputNow());
  const { found, rest } = fromProcRange(needle, since);
  for (const pid of rest) {
    const marks = markOf(pid);
    if (marks?.includes(needle)) found.push({ pid, marks });
  }
  return found;
}

/** /proc entries an asynchronous look reads in one turn of the event loop (~1 ms). */
const PROC_BATCH = 100;

/** The pid the kernel handed out last in our PID namespace (the last field of /proc/loadavg). */
function lastPid(): number | undefined {
  try {
    const n = Number(readFileSync("/proc/loadavg", "latin1").trim().split(" ").pop());
    return Number.isInteger(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/** A young command's range read at once (a handful of pids: found), or the /proc entries left to read. */
function fromProcRange(needle: string, since?: Since): { found: Marked[]; rest: number[] } {
  const found: Marked[] = [];
  let above = 0;
  if (since !== undefined && Date.now() - since.at < RANGE_MAX_AGE_MS) {
    const last = lastPid();
    if (last !== undefined && last >= since.pid) {
      if (last - since.pid <= RANGE_MAX_PIDS) {
        // A thread's id names its process here too (and a signal to it reaches the whole process).
        for (let pid = since.pid + 1; pid <= last; pid++) {
          const marks = markOf(pid);
          if (marks?.includes(needle)) found.push({ pid, marks });
        }
        return { found, rest: [] };
      }
      above = since.pid;
    }
  }
  const rest: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return { found, rest };
  }
  for (const entry of entries) {
    const c = entry.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const pid = Number(entry);
    if (pid > above) rest.push(pid);
  }
  return { found, rest };
}

/** MARK_VAR's value in an environment block; undefined when it has none. */
function markIn(env: string): string | undefined {
  let at = 0;
  if (!env.startsWith(ENTRY)) {
    const i = env.indexOf(`\0${ENTRY}`);
    if (i === -1) return undefined;
    at = i + 1;
  }
  const end = env.indexOf("\0", at);
  return env.slice(at + ENTRY.length, end === -1 ? undefined : end);
}

/** Process `pid`'s MARK_VAR as its environment reads now (Linux); undefined when it has none, blanked
 *  it, is gone or not ours to read. A zombie's environment reads empty. */
export function markOf(pid: number): string | undefined {
  try {
    return markIn(readFileSync(`/proc/${pid}/environ`, "latin1"));
  } catch {
    return undefined;
  }
}

const PS_ARGS = ["axwwe", "-o", "pid=", "-o", "command="];
const PS_MAX_BUFFER = 256 * 1024 * 1024;
// node:child_process on demand (the ps path is macOS's, or a /proc-less Linux): not at start-up
const childProcess = () => process.getBuiltinModule("node:child_process");

function psOutput(): Promise<string> {
  return new Promise((resolve) => {
    childProcess().execFile("ps", PS_ARGS, { encoding: "latin1", maxBuffer: PS_MAX_BUFFER }, (_err, stdout) => resolve(typeof stdout === "string" ? stdout : ""));
  });
}

function psOutputNow(): string {
  const out = childProcess().spawnSync("ps", PS_ARGS, { encoding: "latin1", maxBuffer: PS_MAX_BUFFER });
  return typeof out.stdout === "string" ? out.stdout : "";
}

/** `ps axwwe` appends each process's environment (ours only) to its command line, on procps and BSD alike. */
function fromPs(needle: string, stdout: string): Marked[] {
  const found: Marked[] = [];
  for (const line of stdout.split("\n")) {
    const at = line.indexOf(` ${ENTRY}`);
    if (at === -1) continue;
    const marks = line.slice(at + 1 + ENTRY.length).split(" ", 1)[0]!;
    const pid = Number(line.trim().split(" ", 1)[0]);
    if (marks.includes(needle) && Number.isInteger(pid) && pid !== process.pid) found.push({ pid, marks });
  }
  return found;
}

/** Whether `pid` is still a live process carrying `needle` (a zombie does not count: it has ended). */
export function stillMarked(pid: number, needle: string): boolean {
  if (markSource() === "proc") return markOf(pid)?.includes(needle) ?? false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
