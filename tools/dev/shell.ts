// Owns the `shell` tool: `bash -c` in its own process group inside the workspace root, bounded in
// time and output, with the whole group killed on timeout, cancellation and when the command ends.
// Does not decide PATH or the environment (the caller passes them) and does not format limits text.
import { constants as osConstants } from "node:os";
import { stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import type { z } from "zod";
import { lazySchema, type SchemaOf } from "../../core/zod-issue.ts";
import { ArtifactStore, type CaptureLimits, type CaptureResult, OutputCapture } from "./shell-capture.ts";
import { killGroup, spawnGroup } from "../../core/process-group.ts";
import { formatBytes } from "../../core/text-bounds.ts";
import { PathError, resolveInside } from "./workspace-path.ts";

/** The exit code `timeout(1)` uses. */
export const TIMEOUT_EXIT_CODE = 124;
/** A process that escaped the group (setsid) may hold the pipes open; stop reading after this. */
const PIPE_DRAIN_MS = 1000;
/** setTimeout fires at once beyond this (a 32-bit millisecond count). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The input schema, built (and zod loaded) at the first call. */
export const shellInput = lazySchema((z) =>
  z.object({
    command: z.string().min(1).describe("bash command line, run with `bash -c`"),
    workdir: z.string().optional().describe("working directory, relative to the workspace root (default: the root)"),
    timeout_s: z.number().positive().optional().describe("seconds before the command is killed"),
  }),
);
export type ShellArgs = z.infer<SchemaOf<typeof shellInput>>;

export interface ShellOptions {
  /** Real path of the workspace root. */
  root: string;
  /** The full environment for commands (PATH already starts with the shim dir), or how to get it
   *  when the first command runs (the agent makes its shim folder only then). */
  env: Record<string, string> | (() => Promise<Record<string, string>>);
  artifactDir: string;
  limits: CaptureLimits & { defaultTimeoutS: number; maxTimeoutS: number; artifacts: number; maxRunning: number };
}

export interface ShellOutcome {
  exitCode: number;
  timedOut: boolean;
  cancelled: boolean;
  capture: CaptureResult;
}

export interface ShellReply {
  text: string;
  isError?: boolean;
  structured?: Record<string, unknown>;
}

function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const n = signal ? (osConstants.signals as Record<string, number>)[signal] : undefined;
  return 128 + (n ?? 0);
}

export class ShellTool {
  /** Groups of commands still running (the registry in core/process-group.ts has every group). */
  private readonly live = new Set<number>();
  private readonly store: ArtifactStore;

  constructor(private readonly opts: ShellOptions) {
    this.store = new ArtifactStore(opts.artifactDir, opts.limits.artifacts);
  }

  /** The MCP handler: never throws; bad input and failures are isError replies. */
  async call(args: ShellArgs, signal: AbortSignal): Promise<ShellReply> {
    try {
      const cwd = await this.workdir(args.workdir);
      if (this.live.size >= this.opts.limits.maxRunning) {
        return { text: `${this.live.size} shell commands are already running; wait for one to finish`, isError: true };
      }
      const requested = args.timeout_s ?? this.opts.limits.defaultTimeoutS;
      const timeoutS = Math.min(requested, this.opts.limits.maxTimeoutS);
      const env = typeof this.opts.env === "function" ? await this.opts.env() : this.opts.env;
      const outcome = await this.run(args.command, cwd, timeoutS * 1000, signal, env);
      return formatOutcome(outcome, timeoutS, requested > timeoutS, this.opts.limits);
    } catch (err) {
      return { text: (err as Error).message, isError: true };
    }
  }

  private async workdir(input: string | undefined): Promise<string> {
    if (input === undefined || input === "") return this.opts.root;
    const { real, exists } = await resolveInside(this.opts.root, input);
    const st = exists ? await stat(real).catch(() => undefined) : undefined;
    if (!st?.isDirectory()) {
      throw new PathError(`workdir ${input} is not a directory inside the workspace root ${this.opts.root}`);
    }
    return real;
  }

  /** Kills every command this tool still runs (a session closing, the agent stopping). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.live].map((pgid) => killGroup(pgid)));
  }

  /** How many commands are running now. */
  get running(): number {
    return this.live.size;
  }

  /**
   * Runs one command to completion (or its kill); resolves once its whole group is gone. The group
   * comes from core/process-group.ts, whose watchdog kills it even when this process is SIGKILLed.
   */
  run(command: string, cwd: string, timeoutMs: number, signal: AbortSignal | undefined, env: Record<string, string>): Promise<ShellOutcome> {
    const capture = new OutputCapture(this.opts.limits, this.store);
    const child = spawnGroup({ label: "shell command", command: "bash", args: ["-c", command], cwd, env, stdin: "ignore" });
    const pgid = child.pid;
    if (pgid === undefined) {
      return new Promise((_, reject) => child.once("error", (err) => reject(new Error(`cannot start bash: ${err.message}`))));
    }
    this.live.add(pgid);
    let timedOut = false;
    let cancelled = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void killGroup(pgid);
    }, Math.min(timeoutMs, MAX_TIMER_MS));
    const onAbort = () => {
      cancelled = true;
      void killGroup(pgid);
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout!.on("data", (b: Buffer) => capture.push(0, b));
    child.stderr!.on("data", (b: Buffer) => capture.push(1, b));
    const exited = new Promise<number>((resolve) => {
      child.once("exit", (code, sig) => resolve(exitCodeOf(code, sig)));
      child.once("error", () => resolve(127));
    });
    return (async () => {
      try {
        const code = await exited;
        // Background jobs must neither outlive the call nor keep the pipes (and this call) open.
        await killGroup(pgid);
        await drainPipes(child.stdout!, child.stderr!);
        return { exitCode: timedOut ? TIMEOUT_EXIT_CODE : code, timedOut, cancelled, capture: capture.finish() };
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.live.delete(pgid);
      }
    })();
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

function section(name: string, body: string): string {
  if (body === "") return `${name}: (empty)`;
  return `${name}:\n${body}${body.endsWith("\n") ? "" : "\n"}`;
}

export function formatOutcome(o: ShellOutcome, timeoutS: number, clamped: boolean, limits: CaptureLimits): ShellReply {
  const c = o.capture;
  const head = [`exit_code: ${o.exitCode}`, `timed_out: ${o.timedOut}`];
  if (o.timedOut) head.push(`(killed after ${timeoutS} s${clamped ? ", the largest timeout allowed" : ""})`);
  if (o.cancelled) head.push("(cancelled: the command was killed)");
  if (c.truncated) {
    const cap = `${formatBytes(limits.inlineBytes)} / ${limits.inlineLines} lines`;
    let note = `[output was ${c.totalBytes} bytes / ${c.totalLines} lines, over the ${cap} cap: showing the last ${formatBytes(limits.tailBytes)} of stdout and of stderr.`;
    if (c.artifact) {
      const cut = c.artifactCut ? `, cut at ${formatBytes(limits.captureBytes)}` : "";
      note += ` The full output (stdout and stderr interleaved${cut}) is saved in ${c.artifact}: page it with \`sed -n 'A,Bp'\`, \`tail\` or \`rg\`.]`;
    } else {
      note += ` The full output could not be saved (${c.artifactError ?? "unknown error"}).]`;
    }
    head.push(note);
  }
  const text = [...head, section("stdout", c.stdout), section("stderr", c.stderr)].join("\n");
  const structured: Record<string, unknown> = {
    exit_code: o.exitCode,
    stdout: c.stdout,
    stderr: c.stderr,
    timed_out: o.timedOut,
  };
  if (o.cancelled) structured.cancelled = true;
  if (c.truncated) {
    structured.truncated = true;
    if (c.artifact) structured.artifact = c.artifact;
  }
  return { text, structured };
}
