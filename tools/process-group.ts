// Owns the process groups the shell tool starts: the set of live groups, and killing one or all
// (SIGTERM to the whole group, SIGKILL after a grace period). Does not spawn or read output.

const POLL_MS = 20;

/** Sends `sig` to every process of group `pgid`; false when the group is gone (or not ours). */
export function signalGroup(pgid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * SIGTERM, then SIGKILL once `graceMs` has passed unless the group emptied first. Zombies that no
 * one reaps still count as members, so the SIGKILL is sent regardless of what the polls said last.
 */
export async function killGroup(pgid: number, graceMs: number): Promise<void> {
  if (!signalGroup(pgid, "SIGTERM")) return;
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await sleep(Math.min(POLL_MS, Math.max(1, deadline - Date.now())));
    if (!signalGroup(pgid, 0)) return;
  }
  signalGroup(pgid, "SIGKILL");
}

export class ProcessGroups {
  private readonly live = new Set<number>();

  constructor(private readonly graceMs: number) {}

  add(pgid: number): void {
    this.live.add(pgid);
  }

  delete(pgid: number): void {
    this.live.delete(pgid);
  }

  get size(): number {
    return this.live.size;
  }

  kill(pgid: number): Promise<void> {
    return killGroup(pgid, this.graceMs);
  }

  /** Every live group, in parallel: at most one grace period. */
  async killAll(): Promise<void> {
    await Promise.all([...this.live].map((pgid) => killGroup(pgid, this.graceMs)));
  }

  /** For `process.on("exit")`, where nothing asynchronous runs any more. */
  killAllNow(): void {
    for (const pgid of this.live) signalGroup(pgid, "SIGKILL");
  }
}
