// Owns what the orphan tests share: the ways a shell command's process leaves its group (and one that
// blanks its mark as well), the unique `sleep 1000.<run><n>` markers that name each case's escapee,
// and finding and killing them. Test-only.
import { existsSync, readdirSync, readFileSync } from "node:fs";

/** Each way out of the group; `m` is the marker (the escapee runs `sleep m`). */
export const KINDS: Record<string, (m: string) => string> = {
  setsid: (m) => `setsid sleep ${m} >/dev/null 2>&1 </dev/null &`,
  "double fork": (m) => `(setsid sh -c 'sleep ${m} >/dev/null 2>&1 </dev/null & exit 0' &)`,
  "nohup/disown": (m) => `nohup sleep ${m} >/dev/null 2>&1 </dev/null & disown`,
  "a daemon that closes its fds": (m) => `setsid sh -c 'cd /; exec <&- >&- 2>&-; sleep ${m}' &`,
};

/**
 * A process that leaves the group (`setsid`, or only its process group with `pgrp`) as a child the
 * shell does not wait for, then zeroes its whole environment in memory (perl's `$0` is written over the
 * argument and environment block: /proc/PID/environ reads zeros, TENDRIL_RUN_MARK gone) and names
 * itself `sleep m`; it creates file `ready` once it has, and the command waits for that (5 s at most).
 */
export function blanked(m: string, ready: string, leave: "setsid" | "pgrp" = "setsid"): string {
  const perl = `perl -e '${leave === "pgrp" ? "setpgrp(0, 0); " : ""}$0 = "sleep\\0$ARGV[0]" . ("\\0" x 65536); open(my $f, ">", $ARGV[1]); close $f; sleep 60' ${m} ${ready}`;
  return `(${leave === "setsid" ? "setsid " : ""}${perl} >/dev/null 2>&1 </dev/null &)\ni=0; while [ ! -e ${ready} ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done`;
}

/** Whether perl (blanked's) is on PATH. */
export const hasPerl = (process.env.PATH ?? "").split(":").some((d) => d !== "" && existsSync(`${d}/perl`));

/** Markers of one test run: `sleep` durations no other run (another worktree's suite) uses. */
export function markers(): { run: string; next: () => string } {
  const run = `1000.${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
  let made = 0;
  return { run, next: () => `${run}${String(++made).padStart(5, "0")}` };
}

/** Pids of live processes whose command line is `sleep <prefix>…` (a zombie's reads empty). */
export function sleeping(prefix: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "latin1").startsWith(`sleep\0${prefix}`)) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

/** Polls until no `sleep <m>…` lives, at most `ms`; the pids still there. */
export async function survivors(m: string, ms: number): Promise<number[]> {
  const end = Date.now() + ms;
  let left = sleeping(m);
  while (left.length > 0 && Date.now() < end) {
    await Bun.sleep(20);
    left = sleeping(m);
  }
  return left;
}

/** SIGKILLs this run's escapees, and only them (afterAll). */
export function killRun(run: string): void {
  for (const pid of sleeping(run)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

/** Zombies among this process's children outside its own process group: adopted orphans nobody waited
 *  for (the runtime's own children, in its group, are the runtime's to wait for). */
export function adoptedZombies(): number[] {
  const stat = (pid: string) => {
    try {
      return readFileSync(`/proc/${pid}/stat`, "latin1").split(") ")[1]!.split(" ");
    } catch {
      return undefined;
    }
  };
  const ownGroup = stat("self")![2];
  return readdirSync("/proc/self/task")
    .flatMap((t) => readFileSync(`/proc/self/task/${t}/children`, "latin1").split(" ").filter((p) => p.trim() !== ""))
    .filter((pid) => {
      const f = stat(pid);
      return f !== undefined && f[0] === "Z" && f[2] !== ownGroup;
    })
    .map(Number);
}
