// Owns the `shell` tool: `bash -c` inside the workspace root through the execution seam (exec.ts:
// plain process groups, or the sandbox of sandbox.ts), bounded in time and output, with the whole
// group killed on timeout, cancellation and when the command ends; or left running in the background
// (`background`, `yield_ms`) and then read, written and ended through `shell_read`, `shell_write` and
// `shell_kill` (background.ts keeps them). Does not decide PATH or the environment (the caller passes
// them) and does not format limits text.
import { stat } from "node:fs/promises";
import type { z } from "zod";
import { lazySchema, type SchemaOf } from "../../core/zod-issue.ts";
import { ArtifactStore, type CaptureLimits, type CaptureResult, OutputCapture } from "./shell-capture.ts";
import { type Executor, GroupExecutor, type Running } from "./exec.ts";
import { BackgroundCommands, type BackgroundLimits, backgroundLimits, readText } from "./background.ts";
import { readsAFile } from "./output-digest.ts";
import { DEFAULT_LIMITS } from "../../core/limits.ts";
import { log } from "../../core/log.ts";
import { cutChars, formatBytes } from "../../core/text-bounds.ts";
import { PathError, resolveInside } from "./workspace-path.ts";

export { TIMEOUT_EXIT_CODE } from "./exec.ts";

/** The input schema, built (and zod loaded) at the first call. */
export const shellInput = lazySchema((z) =>
  z.object({
    command: z.string().min(1).describe("bash command line, run with `bash -c`"),
    workdir: z.string().optional().describe("working directory, relative to the workspace root (default: the root)"),
    timeout_s: z.number().positive().optional().describe("seconds before the command is killed (a background command: none unless given)"),
    background: z.boolean().optional().describe("start it and return at once with an id: for servers, watchers and programs you talk to (shell_read, shell_write, shell_kill)"),
    yield_ms: z.number().int().min(0).optional().describe("return after at most this many ms with the output so far; a command still running then goes on in the background under an id"),
  }),
);
export type ShellArgs = z.infer<SchemaOf<typeof shellInput>>;

export const shellReadInput = lazySchema((z) =>
  z.object({
    id: z.string().min(1).describe("the background command's id (bg1, …)"),
    wait_ms: z.number().int().min(0).optional().describe("when there is no new output yet, wait up to this many ms for some (or for its end)"),
  }),
);
export const shellWriteInput = lazySchema((z) =>
  z.object({
    id: z.string().min(1).describe("the background command's id (bg1, …)"),
    text: z.string().optional().describe("written to its stdin as is: end a line with \\n"),
    eof: z.boolean().optional().describe("close its stdin after the text (end of input)"),
  }),
);
export const shellKillInput = lazySchema((z) => z.object({ id: z.string().min(1).describe("the background command's id (bg1, …)") }));

export interface ShellOptions {
  /** Real path of the workspace root. */
  root: string;
  /** The full environment for commands (PATH already starts with the shim dir), or how to get it
   *  when the first command runs (the agent makes its shim folder only then). */
  env: Record<string, string> | (() => Promise<Record<string, string>>);
  artifactDir: string;
  /** `background`: the defaults of core/limits.ts when not given. */
  limits: CaptureLimits & { defaultTimeoutS: number; maxTimeoutS: number; artifacts: number; maxRunning: number; background?: BackgroundLimits };
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
  /** The commands this tool left running in the background. */
  readonly background: BackgroundCommands;

  constructor(private readonly opts: ShellOptions) {
    this.store = new ArtifactStore(opts.artifactDir, opts.limits.artifacts);
    this.executor = opts.executor ?? new GroupExecutor();
    this.background = new BackgroundCommands(opts.limits.background ?? backgroundLimits(DEFAULT_LIMITS));
  }

  /** The MCP handler: never throws; bad input and failures are isError replies. `unconfined`: run
   *  with plain process groups whatever the executor (the user allowed this one command). `onOutput`:
   *  gets stdout and stderr as they arrive (a client shows them live), besides the capture. */
  async call(args: ShellArgs, signal: AbortSignal, unconfined = false, onOutput?: (chunk: Uint8Array) => void, onEnd?: (exit: { code: number; signal: string | null }) => void): Promise<ShellReply> {
    try {
      const cwd = await this.workdir(args.workdir);
      if (this.running >= this.opts.limits.maxRunning) {
        return { text: `${this.running} shell commands are already running; wait for one to finish`, isError: true };
      }
      const requested = args.timeout_s ?? this.opts.limits.defaultTimeoutS;
      const timeoutS = Math.min(requested, this.opts.limits.maxTimeoutS);
      const env = typeof this.opts.env === "function" ? await this.opts.env() : this.opts.env;
      const executor = unconfined && this.opts.executor ? (this.plain ??= new GroupExecutor()) : this.executor;
      if (args.background || args.yield_ms !== undefined) {
        const timeoutMs = args.timeout_s !== undefined ? timeoutS * 1000 : Infinity;
        return await this.startKept(args, cwd, timeoutMs, signal, env, executor, onOutput, onEnd);
      }
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

  /**
   * A command that may go on in the background: started with a stdin pipe, its output into a ring
   * (and the live view) from the first byte. `background`: it is handed over at once; `yield_ms`: the
   * call waits up to that long and, when it ended by then, answers as a plain call does. The call's
   * own cancel ends it only while the call waits.
   */
  private async startKept(args: ShellArgs, cwd: string, timeoutMs: number, signal: AbortSignal, env: Record<string, string>, executor: Executor, onOutput?: (chunk: Uint8Array) => void, onEnd?: (exit: { code: number; signal: string | null }) => void): Promise<ShellReply> {
    this.background.checkRoom();
    const ring = this.background.ring();
    const capture = new OutputCapture(this.opts.limits, this.store);
    let kept = false;
    const running: Running = await executor.start({
      command: args.command,
      cwd,
      env,
      timeoutMs,
      stdin: true,
      onOutput: (stream, b) => {
        ring.push(b);
        if (!kept) capture.push(stream, b);
        onOutput?.(b);
      },
    });
    const yieldMs = args.background ? 0 : Math.min(args.yield_ms ?? 0, this.opts.limits.maxTimeoutS * 1000);
    const onAbort = () => running.stop();
    signal.addEventListener("abort", onAbort, { once: true });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ended = await Promise.race([
      running.done.then(() => true, () => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), yieldMs))),
    ]);
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
    if (ended) {
      const o = await running.done;
      const reply = formatOutcome({ ...o, capture: capture.finish(!readsAFile(args.command)) }, timeoutMs / 1000, false, this.opts.limits);
      for (const line of [o.stopped, o.note]) if (line !== undefined) reply.text += `${line}\n`;
      return reply;
    }
    kept = true;
    void capture.finish();
    const id = this.background.add(args.command, running, ring);
    // The live view (an editor's terminal) ends with the command, not with this call.
    void running.done.then(
      (o) => onEnd?.({ code: o.exitCode, signal: o.signal ?? null }),
      () => onEnd?.({ code: 127, signal: null }),
    );
    const first = await this.background.read(id);
    const how = `Read its new output with shell_read {"id": "${id}"} (wait_ms to wait for some), write to its stdin with shell_write, end it with shell_kill. It ends with the session at the latest.`;
    return {
      text: `${readText(first)}\n${how}\n`,
      structured: { background_id: id, running: first.end === undefined, output: first.output, ...(first.end ? { exit_code: first.end.exitCode } : {}) },
    };
  }

  /** shell_read: a background command's new output, its end once it ended. */
  async read(args: { id: string; wait_ms?: number }): Promise<ShellReply> {
    return this.backgroundReply(() => this.background.read(args.id, args.wait_ms ?? 0));
  }

  /** shell_write: text to a background command's stdin, and/or its end. */
  async write(args: { id: string; text?: string; eof?: boolean }): Promise<ShellReply> {
    try {
      if ((args.text === undefined || args.text === "") && !args.eof) return { text: "nothing to write: give text, eof: true, or both", isError: true };
      await this.background.write(args.id, args.text, args.eof === true);
      const what = [args.text ? `${Buffer.byteLength(args.text)} bytes written` : "", args.eof ? "its input closed" : ""].filter((s) => s !== "").join("; ");
      return { text: `${args.id}: ${what}. Read what it answers with shell_read (wait_ms to wait for it).`, structured: { background_id: args.id } };
    } catch (err) {
      return { text: (err as Error).message, isError: true };
    }
  }

  /** shell_kill: ends a background command (the kill ladder); its last output. */
  async kill(args: { id: string }): Promise<ShellReply> {
    return this.backgroundReply(() => this.background.kill(args.id));
  }

  private async backgroundReply(get: () => ReturnType<BackgroundCommands["read"]>): Promise<ShellReply> {
    try {
      const r = await get();
      const reply: ShellReply = {
        text: readText(r),
        structured: { background_id: r.id, running: r.end === undefined, output: r.output, ...(r.dropped > 0 ? { dropped_bytes: r.dropped } : {}), ...(r.end ? { exit_code: r.end.exitCode, ...(r.end.signal ? { signal: r.end.signal } : {}) } : {}) },
      };
      const moved = r.notes.find((n) => n.includes("moved aside"));
      if (moved) reply.structured!.user_notice = moved;
      return reply;
    } catch (err) {
      return { text: (err as Error).message, isError: true };
    }
  }

  /** Kills every command this tool still runs, in the background too (a session closing, the agent stopping). */
  async stopAll(): Promise<void> {
    const [ended] = await Promise.all([this.background.stopAll(), this.executor.stopAll(), this.plain?.stopAll()]);
    // Said where the user reads it (`tendril prompt`: its stderr; an editor: the agent's log).
    if (ended.length > 0) {
      const list = ended.map((e) => `${e.id} (${cutChars(e.command, 60)})`).join(", ");
      log.warn(`the session closed with ${ended.length} background command${ended.length === 1 ? "" : "s"} still running; ended: ${list}`);
    }
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
    // A file the model asked to read reaches it as printed (up to the inline cap, as ever).
    return { ...o, capture: capture.finish(!readsAFile(command)) };
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
  if (c.digest) {
    const where = c.artifact
      ? `the whole output as printed (stdout and stderr interleaved${c.artifactCut ? `, cut at ${formatBytes(limits.captureBytes)}` : ""}) is in ${c.artifact}: page it with \`sed -n 'A,Bp'\`, search it with \`rg\``
      : `the whole output could not be saved (${c.artifactError ?? "unknown error"})`;
    head.push(`[output digested: ${c.digest.lines} lines (${formatBytes(c.totalBytes)}), ${c.digest.shown} shown whole, every error, failure and summary line among them; the rest folded as said. ${where}]`);
    const text = [...head, section("output (stdout and stderr interleaved, escapes removed, redraws resolved)", c.digest.text)].join("\n");
    const structured: Record<string, unknown> = { exit_code: o.exitCode, ...(o.signal ? { signal: o.signal } : {}), stdout: c.stdout, stderr: c.stderr, timed_out: o.timedOut, digested: true };
    if (o.cancelled) structured.cancelled = true;
    if (c.truncated) structured.truncated = true;
    if (c.artifact) structured.artifact = c.artifact;
    return { text, structured };
  }
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
