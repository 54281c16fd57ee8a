// Owns the `shell` tool: `bash -c` inside the workspace root through the execution seam (exec.ts:
// plain process groups, or the sandbox of sandbox.ts), bounded in time and output, with the whole
// group killed on timeout, cancellation and when the command ends. Does not decide PATH or the
// environment (the caller passes them) and does not format limits text.
import { stat } from "node:fs/promises";
import type { z } from "zod";
import { lazySchema, type SchemaOf } from "../../core/zod-issue.ts";
import { ArtifactStore, type CaptureLimits, type CaptureResult, OutputCapture } from "./shell-capture.ts";
import { type Executor, GroupExecutor } from "./exec.ts";
import { formatBytes } from "../../core/text-bounds.ts";
import { PathError, resolveInside } from "./workspace-path.ts";

export { TIMEOUT_EXIT_CODE } from "./exec.ts";

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
  /** How commands run (default: plain process groups). */
  executor?: Executor;
}

export interface ShellOutcome {
  exitCode: number;
  /** The signal that ended the command, when one did (exec.ts). */
  signal?: string;
  timedOut: boolean;
  cancelled: boolean;
  /** The executor's line about the run (a `.git` the command made). */
  note?: string;
  /** What stopped the command, when the executor knows its confinement did (exec.ts). */
  stopped?: string;
  capture: CaptureResult;
}

export interface ShellReply {
  text: string;
  isError?: boolean;
  structured?: Record<string, unknown>;
}

export class ShellTool {
  private readonly store: ArtifactStore;
  private readonly executor: Executor;
  /** Plain process groups, for a command the user let run unsandboxed (made when first needed). */
  private plain?: Executor;

  constructor(private readonly opts: ShellOptions) {
    this.store = new ArtifactStore(opts.artifactDir, opts.limits.artifacts);
    this.executor = opts.executor ?? new GroupExecutor();
  }

  /** The MCP handler: never throws; bad input and failures are isError replies. `unconfined`: run
   *  with plain process groups whatever the executor (the user allowed this one command). `onOutput`:
   *  gets stdout and stderr as they arrive (a client shows them live), besides the capture. */
  async call(args: ShellArgs, signal: AbortSignal, unconfined = false, onOutput?: (chunk: Uint8Array) => void): Promise<ShellReply> {
    try {
      const cwd = await this.workdir(args.workdir);
      if (this.running >= this.opts.limits.maxRunning) {
        return { text: `${this.running} shell commands are already running; wait for one to finish`, isError: true };
      }
      const requested = args.timeout_s ?? this.opts.limits.defaultTimeoutS;
      const timeoutS = Math.min(requested, this.opts.limits.maxTimeoutS);
      const env = typeof this.opts.env === "function" ? await this.opts.env() : this.opts.env;
      const executor = unconfined && this.opts.executor ? (this.plain ??= new GroupExecutor()) : this.executor;
      const outcome = await this.run(args.command, cwd, timeoutS * 1000, signal, env, executor, onOutput);
      const reply = formatOutcome(outcome, timeoutS, requested > timeoutS, this.opts.limits);
      // `sandbox_note` (the agent offers an unsandboxed retry on it) only when the executor knows its
      // confinement stopped the command; other notes are said in the text alone.
      for (const line of [outcome.stopped, outcome.note]) if (line !== undefined) reply.text += `${line}\n`;
      if (outcome.stopped !== undefined) reply.structured!.sandbox_note = outcome.stopped;
      // The git check moved something aside: the user hears it too (a notice; a stderr line in `tendril prompt`).
      if (outcome.note?.includes("moved aside")) reply.structured!.user_notice = outcome.note;
      return reply;
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
    await Promise.all([this.executor.stopAll(), this.plain?.stopAll()]);
  }

  /** How many commands are running now. */
  get running(): number {
    return this.executor.running + (this.plain?.running ?? 0);
  }

  /** Runs one command to completion (or its kill); resolves once its whole group is gone. */
  async run(command: string, cwd: string, timeoutMs: number, signal: AbortSignal | undefined, env: Record<string, string>, executor = this.executor, onOutput?: (chunk: Uint8Array) => void): Promise<ShellOutcome> {
    const capture = new OutputCapture(this.opts.limits, this.store);
    const push = onOutput
      ? (stream: 0 | 1, b: Buffer) => {
          capture.push(stream, b);
          onOutput(b);
        }
      : (stream: 0 | 1, b: Buffer) => capture.push(stream, b);
    const o = await executor.run({ command, cwd, env, timeoutMs, signal, onOutput: push });
    return { ...o, capture: capture.finish() };
  }
}

function section(name: string, body: string): string {
  if (body === "") return `${name}: (empty)`;
  return `${name}:\n${body}${body.endsWith("\n") ? "" : "\n"}`;
}

export function formatOutcome(o: ShellOutcome, timeoutS: number, clamped: boolean, limits: CaptureLimits): ShellReply {
  const c = o.capture;
  const head = [`exit_code: ${o.exitCode}${o.signal ? ` (ended by ${o.signal})` : ""}`, `timed_out: ${o.timedOut}`];
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
    ...(o.signal ? { signal: o.signal } : {}),
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
