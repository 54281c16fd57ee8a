// Owns the mark every process group's command carries in its environment (TENDRIL_RUN_MARK) and finding,
// by it, the processes a command started that left its group (setsid, a double fork, a daemon): from
// /proc/PID/environ on Linux, from `ps`'s environment column where there is no /proc (macOS). Does not
// spawn or kill anything; process-group.ts decides when what it finds ends.
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

/** Pids of live processes, ours to read, whose MARK_VAR holds `needle` (a mark, or ownerMark() for all of
 *  ours); `since`: they descend from that leader, which bounds where they are looked for. */
export function findMarked(needle: string, since?: Since): number[] {
  return markSource() === "proc" ? fromProc(needle, since) : fromPs(needle);
}

/** The pid the kernel handed out last in our PID namespace (the last field of /proc/loadavg). */
function lastPid(): number | undefined {
  try {
    const n = Number(readFileSync("/proc/loadavg", "latin1").trim().split(" ").pop());
    return Number.isInteger(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

function fromProc(needle: string, since?: Since): number[] {
  const found: number[] = [];
  let above = 0;
  if (since !== undefined && Date.now() - since.at < RANGE_MAX_AGE_MS) {
    const last = lastPid();
    if (last !== undefined && last >= since.pid) {
      if (last - since.pid <= RANGE_MAX_PIDS) {
        // A thread's id names its process here too (and a signal to it reaches the whole process).
        for (let pid = since.pid + 1; pid <= last; pid++) if (environHas(String(pid), needle)) found.push(pid);
        return found;
      }
      above = since.pid;
    }
  }
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return found;
  }
  for (const entry of entries) {
    const c = entry.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const pid = Number(entry);
    if (pid > above && environHas(entry, needle)) found.push(pid);
  }
  return found;
}

/** Whether process `pid` (a /proc entry name) lives and its MARK_VAR holds `needle`; a zombie's environment reads empty. */
function environHas(pid: string, needle: string): boolean {
  let env: string;
  try {
    env = readFileSync(`/proc/${pid}/environ`, "latin1");
  } catch {
    return false; // gone, or not ours to read
  }
  let at = 0;
  if (!env.startsWith(ENTRY)) {
    const i = env.indexOf(`\0${ENTRY}`);
    if (i === -1) return false;
    at = i + 1;
  }
  const end = env.indexOf("\0", at);
  return env.slice(at + ENTRY.length, end === -1 ? undefined : end).includes(needle);
}

/** `ps axwwe` appends each process's environment (ours only) to its command line, on procps and BSD alike. */
function fromPs(needle: string): number[] {
  // node:child_process on demand (the ps path is macOS's, or a /proc-less Linux): not at start-up
  const out = process.getBuiltinModule("node:child_process").spawnSync("ps", ["axwwe", "-o", "pid=", "-o", "command="], { encoding: "latin1", maxBuffer: 256 * 1024 * 1024 });
  if (typeof out.stdout !== "string") return [];
  const found: number[] = [];
  for (const line of out.stdout.split("\n")) {
    const at = line.indexOf(` ${ENTRY}`);
    if (at === -1) continue;
    const value = line.slice(at + 1 + ENTRY.length).split(" ", 1)[0]!;
    const pid = Number(line.trim().split(" ", 1)[0]);
    if (value.includes(needle) && Number.isInteger(pid) && pid !== process.pid) found.push(pid);
  }
  return found;
}

/** Whether `pid` is still a live process carrying `needle` (a zombie does not count: it has ended). */
export function stillMarked(pid: number, needle: string): boolean {
  if (markSource() === "proc") return environHas(String(pid), needle);
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
