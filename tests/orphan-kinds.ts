// Owns what the orphan tests share: the ways a shell command's process leaves its group, the unique
// `sleep 1000.<run><n>` markers that name each case's escapee, and finding and killing them. Test-only.
import { readdirSync, readFileSync } from "node:fs";

/** Each way out of the group; `m` is the marker (the escapee runs `sleep m`). */
export const KINDS: Record<string, (m: string) => string> = {
  setsid: (m) => `setsid sleep ${m} >/dev/null 2>&1 </dev/null &`,
  "double fork": (m) => `(setsid sh -c 'sleep ${m} >/dev/null 2>&1 </dev/null & exit 0' &)`,
  "nohup/disown": (m) => `nohup sleep ${m} >/dev/null 2>&1 </dev/null & disown`,
  "a daemon that closes its fds": (m) => `setsid sh -c 'cd /; exec <&- >&- 2>&-; sleep ${m}' &`,
};

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
