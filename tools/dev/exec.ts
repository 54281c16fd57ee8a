// Owns the execution seam of the `shell` tool: one small interface (command, cwd, env, time limit,
// signal → outcome, or a running command's handle: its stdin, a stop, the launcher's check while it
// runs) and its process-group implementation, which runs what a launcher makes of the command (plain
// `bash -c`, or bash inside the sandbox of sandbox.ts). Timeouts, cancellation and the kill ladder
// are the same for every launcher. Does not format results or decide the environment.
import type { Readable, Writable } from "node:stream";
import { killGroup, spawnGroup } from "../../core/process-group.ts";

/** The exit code `timeout(1)` uses. */
export const TIMEOUT_EXIT_CODE = 124;
/** A process that escaped the group (setsid) may hold the pipes open; stop reading after this. */
const PIPE_DRAIN_MS = 1000;
/** setTimeout fires at once beyond this (a 32-bit millisecond count). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface ExecRequest {
  /** A bash command line. */
  command: string;
  cwd: string;
  /** The command's whole environment. */
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Output as it arrives: 0 stdout, 1 stderr. */
  onOutput: (stream: 0 | 1, chunk: Buffer) => void;
  /** The command reads a pipe the caller writes (Running.stdin); otherwise its stdin is closed. */
  stdin?: boolean;
}

/** A command that runs (Executor.start): its end, its input, how to end it, and what the launcher has
 *  to say while it runs. */
export interface Running {
  /** Settles once its whole group is gone. */
  done: Promise<ExecOutcome>;
  /** Its stdin, when the request asked for a pipe. */
  stdin?: Writable;
  /** Ends it now with the kill ladder; `done` then settles as cancelled. */
  stop(): void;
  /** The launcher's check while it runs (the sandbox's git check): a note when it found something. */
  check(): string | undefined;
}

export interface ExecOutcome {
  exitCode: number;
  /** The signal that ended the command (`SIGTERM`), when one did: its exit code is then 128 + its number. */
  signal?: string;
  timedOut: boolean;
  cancelled: boolean;
  /** What the launcher has to say about the run (a `.git` the command made), if anything. */
  note?: string;
  /** Set when the launcher knows its confinement stopped the command (bwrap could not set it up, the
   *  proxy refused a host): what stopped it. Never guessed from the command's output. */
  stopped?: string;
}

/** Runs commands; `shell` sees nothing else. */
export interface Executor {
  run(req: ExecRequest): Promise<ExecOutcome>;
  /** Starts a command and hands it over while it runs (throws when it cannot start at all). */
  start(req: ExecRequest): Promise<Running>;
  /** Kills every command still running. */
  stopAll(): Promise<void>;
  /** How many commands are running now. */
  readonly running: number;
}

/** The descriptor a launched program may report its status on (process-group.ts's gate is 3). */
export const STATUS_FD = 4;
/** The descriptor a launched program may read Launch.input from (the sandbox's seccomp filter). */
export const INPUT_FD = 5;

/** How a launched program's run ended, for its launcher's report. */
export interface RunEnd {
  exitCode: number;
  /** Killed by a timeout, a cancellation or stopAll. */
  killed: boolean;
}

/** What actually starts: the program, its arguments, its environment, and what to undo afterwards. */
export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Bytes the program reads on INPUT_FD, written (and the pipe closed) as it starts. */
  input?: Uint8Array;
  /** The program writes status to STATUS_FD: each chunk goes here as it arrives, then null at its end. */
  onStatus?: (chunk: Buffer | null) => void;
  /** Before the command's group is killed (timeout, cancellation, stopAll): kills what of the launch may
   *  have left the group (a sandbox's namespace), waiting (boundedly) until it knows what that is. */
  beforeKill?: () => Promise<void>;
  /** Read after the command ended: a note for its result, and whether the launcher stopped it. */
  report?: (end: RunEnd) => { note?: string; stopped?: string };
  /** Read while the command runs (a background command's output is read): a note, when there is one. */
  check?: () => string | undefined;
  cleanup?: () => Promise<void>;
}

/** Turns a request into a launch; throws (with a message for the model) when it cannot run at all. */
export type Launcher = (req: ExecRequest) => Promise<Launch>;

/**
 * How every shell command is run: `bash --norc -c COMMAND`. A non-interactive bash whose stdin is a
 * socket (the runtime's "pipe" for a background command's stdin is a socketpair) and whose SHLVL is
 * unset takes itself for a command run by sshd and sources ~/.bashrc first: the user's prompt set-up
 * (pyenv, nvm, conda: half a second and more) would run before each background command, and not before
 * a plain one. `--norc` turns that off and nothing else (BASH_ENV still applies).
 */
export function bashArgv(command: string): [string, ...string[]] {
  return ["bash", "--norc", "-c", command];
}

/** The command through bashArgv, unconfined. */
export const plainLauncher: Launcher = async (req) => {
  const [command, ...args] = bashArgv(req.command);
  return { command, args, env: req.env };
};

/** node:os (~0.3 ms to load) only for a command a signal ended: every session loads this module. */
function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const n = signal ? (process.getBuiltinModule("node:os").constants.signals as Record<string, number>)[signal] : undefined;
  return 128 + (n ?? 0);
}

/**
 * Each command is the leader of a new process group from core/process-group.ts (whose watchdog
 * kills it even when this process is SIGKILLed); a call resolves once the whole group is gone.
 */
export class GroupExecutor implements Executor {
  /** Running groups and their launches. */
  private readonly live = new Map<number, Launch>();

  constructor(private readonly launcher: Launcher = plainLauncher) {}

  get running(): number {
    return this.live.size;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.live].map(async ([pgid, launch]) => {
      await launch.beforeKill?.();
      await killGroup(pgid);
    }));
  }

  async run(req: ExecRequest): Promise<ExecOutcome> {
    return (await this.start(req)).done;
  }

  async start(req: ExecRequest): Promise<Running> {
    const launch = await this.launcher(req);
    let running: Omit<Running, "check">;
    try {
      running = this.runLaunch(req, launch);
    } catch (err) {
      await launch.cleanup?.();
      throw err;
    }
    const done = (async () => {
      try {
        const outcome = await running.done;
        const said = launch.report?.({ exitCode: outcome.exitCode, killed: outcome.timedOut || outcome.cancelled });
        return { ...outcome, ...(said?.note !== undefined && { note: said.note }), ...(said?.stopped !== undefined && { stopped: said.stopped }) };
      } finally {
        await launch.cleanup?.();
      }
    })();
    return { ...running, done, check: () => launch.check?.() };
  }

  private runLaunch(req: ExecRequest, launch: Launch): Omit<Running, "check"> {
    const { signal } = req;
    const child = spawnGroup({ label: "shell command", command: launch.command, args: launch.args, cwd: req.cwd, env: launch.env, stdin: req.stdin ? "pipe" : "ignore", extraPipes: launch.onStatus || launch.input ? 2 : 0 });
    const pgid = child.pid;
    if (pgid === undefined) {
      const failed = new Promise<never>((_, reject) => child.once("error", (err) => reject(new Error(`cannot start ${launch.command}: ${err.message}`))));
      return { done: failed, stop: () => {} };
    }
    this.live.set(pgid, launch);
    if (launch.input) {
      // node types `stdio` as a fixed tuple of the first three fds; the extra input pipe is past them
      const input = (child.stdio as unknown as (Writable | null)[])[INPUT_FD];
      input?.on("error", () => {}); // the program exited without reading it: its outcome says why
      input?.end(launch.input);
    }
    const status = launch.onStatus ? (child.stdio[STATUS_FD] as Readable | null) : null;
    status?.on("data", (b: Buffer) => launch.onStatus!(b));
    status?.once("close", () => launch.onStatus!(null));
    status?.on("error", () => {});
    let timedOut = false;
    let cancelled = false;
    const kill = () => void (launch.beforeKill?.() ?? Promise.resolve()).then(() => killGroup(pgid));
    // One ending: a command cancelled (or stopped) is not also timed out while its kill takes long
    // (a busy machine), nor cancelled once its timeout is ending it.
    const timer = setTimeout(() => {
      if (cancelled) return;
      timedOut = true;
      kill();
    }, Math.min(req.timeoutMs, MAX_TIMER_MS));
    const onAbort = () => {
      if (timedOut || cancelled) return;
      cancelled = true;
      clearTimeout(timer);
      kill();
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout!.on("data", (b: Buffer) => req.onOutput(0, b));
    child.stderr!.on("data", (b: Buffer) => req.onOutput(1, b));
    let endedBy: string | undefined;
    const exited = new Promise<number>((resolve) => {
      child.once("exit", (code, sig) => {
        if (code === null && sig) endedBy = sig;
        resolve(exitCodeOf(code, sig));
      });
      child.once("error", () => resolve(127));
    });
    const stdin = req.stdin ? (child.stdin ?? undefined) : undefined;
    // A program that exits without reading what it was sent: its outcome says why, not this pipe.
    stdin?.on("error", () => {});
    const done = (async () => {
      try {
        const code = await exited;
        // Background jobs must neither outlive the call nor keep the pipes (and this call) open.
        await killGroup(pgid);
        await drainPipes(child.stdout!, child.stderr!, ...(status ? [status] : []));
        return { exitCode: timedOut ? TIMEOUT_EXIT_CODE : code, timedOut, cancelled, ...(endedBy && !timedOut ? { signal: endedBy } : {}) };
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        stdin?.destroy();
        this.live.delete(pgid);
      }
    })();
    return { done, ...(stdin ? { stdin } : {}), stop: onAbort };
  }
}

async function drainPipes(...pipes: Readable[]): Promise<void> {
  const closed = pipes.map((p) => (p.closed ? Promise.resolve() : new Promise<void>((r) => p.once("close", r))));
  const waited = await Promise.race([
    Promise.all(closed).then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), PIPE_DRAIN_MS).unref()),
  ]);
  if (!waited) for (const p of pipes) p.destroy();
}
