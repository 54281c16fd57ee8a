// Owns this process as a child subreaper (Linux `prctl(PR_SET_CHILD_SUBREAPER)`, through Bun's FFI
// and libc): a process that leaves a command's group and then loses its parent comes back to us
// instead of to init, so it is found among our own children (/proc/self/task/*/children) without
// reading every process's environment, whatever it did to that environment. Also reads what /proc says
// of one process (state, group, session, start, children) and waits for (`waitpid` on that pid, never
// -1) an adopted child that died, which nothing else would reap. Elsewhere (macOS, no FFI, no /proc)
// it is off and the marks of process-marks.ts do the finding. Does not decide what is killed
// (process-group.ts does).
import { readdirSync, readFileSync } from "node:fs";

const PR_SET_CHILD_SUBREAPER = 36;
const WNOHANG = 1;

interface Libc {
  waitpid(pid: number): number;
  prctl(on: boolean): number;
}

/** undefined: not tried yet; null: not available here. */
let libc: Libc | null | undefined;

/** Off by a test of the marks (the fallback where there is no subreaper). */
let disabled = false;

/** Turns the subreaper off or on again (tests of the fallback); whether it is on now. */
export function setSubreaper(on: boolean): boolean {
  disabled = !on;
  if (libc) libc.prctl(on);
  return subreaperOn();
}

/** Whether this process is a subreaper already (never makes it one: for the exit path, which must not
 *  pay for the FFI when no command ever ran). */
export function subreaperActive(): boolean {
  return !disabled && libc !== undefined && libc !== null;
}

/** Makes this process a subreaper once; whether it is one. */
export function subreaperOn(): boolean {
  if (disabled) return false;
  if (libc !== undefined) return libc !== null;
  libc = null;
  if (process.platform !== "linux" || typeof Bun === "undefined") return false;
  try {
    // Adopted children are found in /proc/self/task/*/children (a kernel built without
    // CONFIG_PROC_CHILDREN has none): without it an adoption could not be seen, so no subreaper.
    readFileSync(`/proc/self/task/${process.pid}/children`);
    // bun:ffi on demand (~1.3 ms to load): a process that starts no command never pays for it.
    const { dlopen, FFIType } = import.meta.require("bun:ffi") as typeof import("bun:ffi");
    const lib = dlopen("libc.so.6", {
      prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 },
      waitpid: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
    });
    if (lib.symbols.prctl(PR_SET_CHILD_SUBREAPER, 1n, 0n, 0n, 0n) !== 0) return false;
    libc = { waitpid: (pid) => lib.symbols.waitpid(pid, null, WNOHANG), prctl: (on) => lib.symbols.prctl(PR_SET_CHILD_SUBREAPER, on ? 1n : 0n, 0n, 0n, 0n) };
  } catch {
    libc = null; // no libc.so.6 (musl), no FFI, no /proc: the marks find what left a group
  }
  return libc !== null;
}

/** What /proc/PID/stat says of a process. */
export interface ProcStat {
  pid: number;
  /** R, S, D, T, Z (ended, waiting to be reaped)… */
  state: string;
  ppid: number;
  pgid: number;
  /** Its session: the pid of the process that last called setsid above it. */
  sid: number;
  /** When it started, in clock ticks since boot: a process forked from another started no earlier. */
  start: number;
}

/** `/proc/PID/stat` (the fields after the command's closing parenthesis, which may hold anything). */
export function procStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "latin1");
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { pid, state: f[0]!, ppid: Number(f[1]), pgid: Number(f[2]), sid: Number(f[3]), start: Number(f[19]) };
  } catch {
    return undefined;
  }
}

/** The direct children of process `pid` ("self" for this one): every thread's list, since a child
 *  belongs to the thread that forked it. Empty when it is gone. */
export function childPids(pid: number | "self"): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tasks) {
    try {
      for (const p of readFileSync(`/proc/${pid}/task/${t}/children`, "latin1").split(" ")) if (p.trim() !== "") out.push(Number(p));
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** This process's children now, as /proc tells them (those that ended meanwhile left out). */
export function ownChildren(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const pid of new Set(childPids("self"))) {
    const st = procStat(pid);
    if (st) out.push(st);
  }
  return out;
}

let ownPgid: number | undefined;
/** Our own process group (read once: this process never changes it). */
export function ownGroup(): number {
  ownPgid ??= procStat(process.pid)?.pgid ?? process.pid;
  return ownPgid;
}

/** Waits for our ended child `pid` without blocking (never any other pid); whether it was reaped. */
export function reap(pid: number): boolean {
  return pid > 0 && libc ? libc.waitpid(pid) === pid : false;
}
