// Owns what bwrap reports about a confined command on its `--json-status-fd` (exec.ts's STATUS_FD): the
// host pid of the sandbox's first process (its PID namespace's init), and whether the command ran to an
// exit of its own. From it come the kill of that process when a kill may have raced bwrap's set-up (it
// leaves our process group with --new-session), and the one sure sign that bwrap itself, not the command,
// failed: it exited without reporting the command's exit. The command cannot write here (bwrap closes
// the descriptor inside). Does not start bwrap.
import { readFileSync } from "node:fs";

/** bwrap writes two short JSON lines; anything past this is not bwrap's and is not kept. */
const MAX_STATUS_CHARS = 64 * 1024;
/** bwrap's exit status when it fails itself (its die()). */
const BWRAP_FAILED = 1;

export class BwrapStatus {
  private text = "";
  private childPid?: number;
  /** The child's start time (/proc/PID/stat), so a kill never reaches a later process given the same pid. */
  private childStart?: string;
  private exitReported = false;
  private settle!: () => void;
  /** Resolves once the child's pid is known or will never be (bwrap's report ended). */
  private readonly settled = new Promise<void>((resolve) => (this.settle = resolve));

  /** A chunk of bwrap's report, or null at its end (bwrap exited). */
  onData(chunk: Buffer | null): void {
    if (chunk === null) {
      this.settle();
      return;
    }
    if (this.text.length < MAX_STATUS_CHARS) this.text += chunk.toString("utf8");
    if (this.childPid === undefined) {
      const m = /"child-pid"\s*:\s*(\d+)/.exec(this.text);
      if (m) {
        this.childPid = Number(m[1]);
        this.childStart = startTime(this.childPid);
        this.settle();
      }
    }
    if (/"exit-code"\s*:/.test(this.text)) this.exitReported = true;
  }

  /**
   * The command is to be killed: first the sandbox's first process (its PID namespace, and so every
   * process inside, goes with it; with --new-session it is not in our process group). Until bwrap has
   * named it (at most `holdMs`; or its report ended) the kill waits: a group kill in the middle of
   * bwrap's set-up could leave it running, reparented to init.
   */
  async kill(holdMs: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, holdMs)))]);
    clearTimeout(timer);
    this.killChild();
  }

  /** bwrap failed before the command could run (a mount, the working directory, the filter …). */
  setupFailed(exitCode: number): boolean {
    return exitCode === BWRAP_FAILED && !this.exitReported;
  }

  private killChild(): void {
    const pid = this.childPid;
    if (pid === undefined || this.childStart === undefined || startTime(pid) !== this.childStart) return;
    try {
      process.kill(pid, "SIGKILL"); // the namespace's init: every process inside goes with it
    } catch {
      // gone already
    }
  }
}

/** Field 22 of /proc/PID/stat (after the command name, which may hold spaces and parentheses). */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}
