// Owns this process as a child subreaper (Linux `prctl(PR_SET_CHILD_SUBREAPER)`, through Bun's FFI
// and libc): a process that leaves a command's group and then loses its parent comes back to us
// instead of to init, so it is found among our own children (/proc/self/task/*/children) without
// reading every process's environment, whatever it did to that environment. Also waits for
// (`waitpid`) the adopted children that die, which nothing else would reap. Elsewhere (macOS, no
// FFI, no /proc) it is off and the marks of process-marks.ts do the finding. Does not decide what is
// killed (process-group.ts does).
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
    // bun:ffi on demand (~1.3 ms to load): a process that starts no command never pays for it.
    const { dlopen, FFIType } = import.meta.require("bun:ffi") as typeof import("bun:ffi");
    const lib = dlopen("libc.so.6", {
      prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 },
      waitpid: { args: [FFIType.i32, FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
    });
    if (lib.symbols.prctl(PR_SET_CHILD_SUBREAPER, 1n, 0n, 0n, 0n) !== 0) return false;
    readFileSync("/proc/self/stat"); // the children are read from /proc
    libc = { waitpid: (pid) => lib.symbols.waitpid(pid, null, WNOHANG), prctl: (on) => lib.symbols.prctl(PR_SET_CHILD_SUBREAPER, on ? 1n : 0n, 0n, 0n, 0n) };
  } catch {
    libc = null;
  }
  return libc !== null;
}

/** One of our own children as /proc tells it. */
export interface OwnChild {
  pid: number;
  /** Its process group. */
  pgid: number;
  /** It has ended and waits to be reaped. */
  zombie: boolean;
  /** Its TENDRIL_RUN_MARK value as its environment reads now ("" when it has none, or blanked it). */
  marks: string;
}

/** `/proc/PID/stat`'s state and process group (the fields after the command's closing parenthesis). */
function statOf(pid: number): { state: string; pgid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "latin1");
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: f[0]!, pgid: Number(f[2]) };
  } catch {
    return undefined;
  }
}

function marksOf(pid: number, variable: string): string {
  try {
    const env = readFileSync(`/proc/${pid}/environ`, "latin1");
    const entry = `${variable}=`;
    const at = env.startsWith(entry) ? 0 : env.indexOf(`\0${entry}`) + 1;
    if (at === 0 && !env.startsWith(entry)) return "";
    const end = env.indexOf("\0", at);
    return env.slice(at + entry.length, end === -1 ? undefined : end);
  } catch {
    return "";
  }
}

/** This process's children now (every thread's list: a child belongs to the thread that forked it). */
export function ownChildren(markVar: string): OwnChild[] {
  const pids = new Set<number>();
  let tasks: string[];
  try {
    tasks = readdirSync("/proc/self/task");
  } catch {
    return [];
  }
  for (const t of tasks) {
    try {
      for (const p of readFileSync(`/proc/self/task/${t}/children`, "latin1").split(" ")) if (p.trim() !== "") pids.add(Number(p));
    } catch {
      // the thread ended meanwhile
    }
  }
  const out: OwnChild[] = [];
  for (const pid of pids) {
    const st = statOf(pid);
    if (st) out.push({ pid, pgid: st.pgid, zombie: st.state === "Z", marks: st.state === "Z" ? "" : marksOf(pid, markVar) });
  }
  return out;
}

/** Our own process group. */
export function ownGroup(): number {
  return statOf(process.pid)?.pgid ?? process.pid;
}

/** Waits for an ended child without blocking; whether it was reaped. */
export function reap(pid: number): boolean {
  return libc ? libc.waitpid(pid) === pid : false;
}
