// Owns one spawned ACP agent process: its own process group, stdio pipes, forwarded stderr with a
// bounded tail for error messages, and a shutdown that always ends with the whole group killed; and
// the AgentEnd shape that an agent run in the same process also takes.
// Does not speak ACP: the client runner wraps the byte streams in a protocol stream.
import type { ChildProcess } from "node:child_process";
import { killGroup, signalGroup, spawnGroup } from "../process-group.ts";
import { StderrTail } from "../stderr-tail.ts";
import { chunksOf } from "../wire/link.ts";
import { type ByteSink, nodeSink } from "../wire/writer.ts";

/** What the client runner needs of an agent: its byte streams, its end, and a way to end it. */
export interface AgentEnd {
  /** What the agent writes (its stdout). */
  readonly output: AsyncIterable<Uint8Array>;
  /** What the agent reads (its stdin). */
  readonly input: ByteSink;
  /** Resolves once the agent has ended and its output is drained. */
  readonly exited: Promise<AgentExit>;
  /** The last lines the agent wrote on stderr, for an error that names why it died. */
  stderrTail(): string[];
  /** Ends the agent: its input closed, `graceMs` to finish, then whatever is left killed. */
  shutdown(graceMs: number): Promise<void>;
}

export interface AgentSpawn {
  command: string;
  args: string[];
  /** The complete environment of the agent (the caller merges its own with leading NAME=value words). */
  env: Record<string, string>;
  cwd: string;
}

export interface AgentExit {
  code: number | null;
  signal: string | null;
  /** Set when the process could not be started at all. */
  error?: string;
}

const TAIL_LINES = 20;
const TAIL_BYTES = 4096;

/** What an agent wrote on stderr, kept for the error that says why it died: its last 20 lines / 4 KiB. */
export class AgentStderr {
  readonly #tail = new StderrTail(TAIL_BYTES, () => {});

  push(text: string): void {
    this.#tail.push(text);
  }

  lines(): string[] {
    return this.#tail.lines().filter((l) => l.trim() !== "").slice(-TAIL_LINES);
  }
}

export class AgentProcess implements AgentEnd {
  readonly child: ChildProcess;
  readonly output: AsyncIterable<Uint8Array>;
  readonly input: ByteSink;
  /** Resolves once the process has exited and its stdout is drained (or 300 ms passed). */
  readonly exited: Promise<AgentExit>;
  private readonly tail = new AgentStderr();
  private exit: AgentExit | undefined;

  constructor(spec: AgentSpawn, onStderr: (text: string) => void) {
    // The agent leads its own process group, so one kill reaches every child it started, and the
    // group's watchdog takes it down if we die without a chance to kill it.
    this.child = spawnGroup({ label: "the agent", command: spec.command, args: spec.args, env: spec.env, cwd: spec.cwd, stdin: "pipe" });
    this.child.stdin!.on("error", () => {}); // EPIPE after the agent died: reported through `exited`
    this.output = chunksOf(this.child.stdout!);
    this.input = nodeSink(this.child.stdin!);
    this.child.stderr!.setEncoding("utf8");
    this.child.stderr!.on("data", (text: string) => {
      this.tail.push(text);
      onStderr(text);
    });
    this.exited = new Promise((resolve) => {
      const done = (exit: AgentExit) => {
        if (this.exit) return;
        this.exit = exit;
        const stdout = this.child.stdout!;
        if (stdout.readableEnded || stdout.destroyed) return resolve(exit);
        const timer = setTimeout(() => resolve(exit), 300);
        stdout.once("close", () => (clearTimeout(timer), resolve(exit)));
      };
      this.child.once("exit", (code, signal) => done({ code, signal }));
      this.child.once("error", (err) => done({ code: null, signal: null, error: err.message }));
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get hasExited(): boolean {
    return this.exit !== undefined;
  }

  /** The last lines the agent wrote on stderr (at most 20 lines / 4 KiB). */
  stderrTail(): string[] {
    return this.tail.lines();
  }

  /** Signals the whole process group; a group already gone is fine. */
  signal(sig: NodeJS.Signals): void {
    if (this.child.pid !== undefined) signalGroup(this.child.pid, sig);
  }

  /**
   * Ends the agent: stdin EOF (an ACP agent cleans up and exits), then after `graceMs` the kill
   * ladder for the whole group; the ladder also sweeps anything the agent left behind.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.child.stdin!.end();
    if (!this.hasExited) await waitFor(this.exited, graceMs);
    if (this.child.pid !== undefined) await killGroup(this.child.pid);
    await waitFor(this.exited, 1000);
    this.child.stdout!.destroy();
    this.child.stderr!.destroy();
  }
}

export function waitFor<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** One line for an early exit: `exited with code 1` / `was killed by SIGKILL` / `could not start: …`. */
export function describeExit(exit: AgentExit): string {
  if (exit.error) return `could not start: ${exit.error}`;
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code ?? "?"}`;
}
