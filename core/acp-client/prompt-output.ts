// Owns what `tendril prompt` shows: the answer and tool activity (`text`), one result object (`json`),
// or one JSON line per session update plus a result line (`stream-json`); errors; the exit code.
// Text from the agent reaches a terminal without control sequences (terminal-controls.ts); JSON lines
// escape C1 controls. Does not touch the process: cli/ passes writers and whether each is a terminal.
import { stripTerminalControls, TerminalTextFilter } from "../terminal-controls.ts";
import type { RunOutcome, RunResult, SessionUpdate, ToolCallView } from "./client-runner.ts";

export type OutputFormat = "text" | "json" | "stream-json";
export const OUTPUT_FORMATS: readonly OutputFormat[] = ["text", "json", "stream-json"];

export interface OutputSink {
  out(text: string): void;
  err(text: string): void;
  /** A spinner is drawn only on a terminal stderr; on a terminal, text from the agent loses its
   *  control sequences (model text, tool titles, the agent's stderr and error messages). */
  errIsTty: boolean;
  outIsTty: boolean;
  /** Tool lines dimmed (SGR 2): only on a terminal stderr and without NO_COLOR; cli/ decides. */
  color?: boolean;
}

export interface PromptOutput {
  update(update: SessionUpdate, call: ToolCallView | undefined): void;
  permission(call: ToolCallView, allowed: boolean, reason: string): void;
  agentStderr(text: string): void;
  /** The answer missed --output-schema and the agent is asked once more: the next answer replaces it. */
  schemaRetry(problems: string[]): void;
  /** Prints the final answer/result and, on failure, one error line; returns the exit code. */
  finish(result: RunResult): number;
  /** The answer's text so far (what the agent said, without tool activity): what `-o FILE` keeps;
   *  with --output-schema, the document once there is one. */
  readonly answer: string;
}

export interface OutputContext {
  timeoutS?: number;
  /** --output-schema: `text` prints the document alone, not the answer as it streams. */
  schema?: boolean;
}

export const EXIT = { ok: 0, agentError: 1, usage: 2, otherStop: 3, schema: 4, maxTurns: 5, budget: 6, interrupted: 130, timeout: 124 } as const;

export function exitCodeFor(outcome: RunOutcome): number {
  switch (outcome.kind) {
    case "stopped":
      return outcome.stopReason === "end_turn" ? EXIT.ok : EXIT.otherStop;
    case "timeout":
      return EXIT.timeout;
    case "interrupted":
      return EXIT.interrupted;
    case "max-turns":
      return EXIT.maxTurns;
    case "budget":
      return EXIT.budget;
    case "budget-unknown":
    case "setting":
      return EXIT.usage;
    case "schema":
      return EXIT.schema;
    default:
      return EXIT.agentError;
  }
}

const HINTS: Record<string, string> = {
  initialize: "is --agent an ACP agent?",
  "session/new": "check --cwd and the --mcp servers",
  authenticate: "give the agent its key as it says, then run again",
  "session/prompt": "check the agent's LLM and MCP settings and its stderr above",
};

/** The one error line for a failed run (undefined for end_turn); stderr tails follow on their own lines. */
export function describeFailure(outcome: RunOutcome, ctx: OutputContext): string | undefined {
  switch (outcome.kind) {
    case "stopped":
      if (outcome.stopReason === "end_turn") return undefined;
      return `the turn stopped with ${outcome.stopReason} instead of end_turn; the answer may be incomplete`;
    case "timeout":
      return `timed out after ${ctx.timeoutS ?? "?"} s; the agent was cancelled and stopped (raise --timeout to wait longer)`;
    case "interrupted":
      return "interrupted; the agent was cancelled and stopped";
    case "max-turns":
      return `stopped at --max-turns ${outcome.limit}: the agent began another model turn, which was cancelled`;
    case "budget":
      return `spent $${outcome.spent.amount} in this run ($${outcome.session.amount} in the session so far, as the agent reported), which reaches --max-budget-usd ${outcome.limit}: the turn was cancelled`;
    case "budget-unknown":
      return `--max-budget-usd ${outcome.limit} cannot be kept: ${outcome.why}; the turn was cancelled`;
    case "setting":
    case "session":
      return outcome.message;
    case "schema":
      return `the answer does not satisfy --output-schema, asked twice:${outcome.problems.map((p) => `\n  ${p}`).join("")}`;
    case "agent-error": {
      const code = outcome.code !== undefined ? ` (code ${outcome.code})` : "";
      const hint = HINTS[outcome.step] ?? "see the agent's stderr above";
      return `the agent failed during ${outcome.step}: ${outcome.message}${code}; ${hint}`;
    }
    case "died": {
      const tail = outcome.stderrTail.map((l) => `\n  ${l}`).join("");
      return tail
        ? `${outcome.message}; its last stderr lines:${tail}`
        : `${outcome.message} and wrote nothing on stderr; run its command by hand to see why`;
    }
  }
}

export function resultObject(result: RunResult, text: string, ctx: OutputContext): Record<string, unknown> {
  const o = result.outcome;
  const obj: Record<string, unknown> = {
    sessionId: result.sessionId ?? null,
    stopReason: o.kind === "stopped" ? o.stopReason : o.kind === "schema" ? "end_turn" : null,
    text,
    toolCalls: result.toolCalls.map((c) => {
      const call: Record<string, unknown> = { id: c.id, title: c.title, kind: c.kind, status: c.status };
      if (c.rawInput !== undefined) call.rawInput = c.rawInput;
      return call;
    }),
  };
  if (result.structured !== undefined) obj.structured = result.structured;
  obj.numTurns = result.numTurns ?? 0;
  obj.durationMs = result.durationMs ?? 0;
  obj.usage = ((o.kind === "stopped" || o.kind === "schema" || o.kind === "budget") && o.usage) || null;
  if (result.cost) obj.cost = result.cost;
  if (result.sessionCost) obj.sessionCost = result.sessionCost;
  if (o.kind !== "stopped") obj.error = describeFailure(o, ctx);
  return obj;
}

const FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";

/** A one-line activity indicator on a terminal stderr; cleared before anything else is written. */
class Spinner {
  private timer: ReturnType<typeof setInterval> | undefined;
  private frame = 0;
  private shown = false;
  activity = "working";

  /** `hold` says a half-written answer line sits on the same terminal: drawing would erase it. */
  constructor(
    private readonly sink: OutputSink,
    private readonly hold: () => boolean,
  ) {}

  start(): void {
    if (!this.sink.errIsTty || this.timer) return;
    this.timer = setInterval(() => this.draw(), 100);
    this.timer.unref?.();
  }

  draw(): void {
    if (!this.timer || this.hold()) return this.clear();
    this.frame = (this.frame + 1) % FRAMES.length;
    this.sink.err(`\r\x1b[2K${FRAMES[this.frame]} ${stripTerminalControls(this.activity).slice(0, 70)}`);
    this.shown = true;
  }

  clear(): void {
    if (this.shown) this.sink.err("\r\x1b[2K");
    this.shown = false;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
  }
}

/** `dev__shell: npm test`: the declared tool name (when the title does not already start with it) and the title. */
export function callLabel(call: ToolCallView): string {
  const title = call.title || call.id;
  return call.name && !title.startsWith(call.name) ? `${call.name}: ${title}` : title;
}

function oneLine(s: string, max = 160): string {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** One JSON line; C1 controls (which JSON.stringify leaves raw) escaped too: the same document, and
 *  nothing a terminal would act on. */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`) + "\n";
}

/** The writers untrusted text goes through: filtered where they are terminals, exact elsewhere. */
function shownSink(sink: OutputSink): { out(text: string): void; err(text: string): void } {
  const filtered = (write: (s: string) => void, tty: boolean) => {
    if (!tty) return write;
    const filter = new TerminalTextFilter();
    return (s: string) => {
      const safe = filter.push(s);
      if (safe !== "") write(safe);
    };
  };
  return { out: filtered(sink.out, sink.outIsTty), err: filtered(sink.err, sink.errIsTty) };
}

export function createPromptOutput(format: OutputFormat, sink: OutputSink, ctx: OutputContext = {}): PromptOutput {
  return new PromptOutputWriter(format, sink, ctx);
}

/** One run's output in one format: the answer's text as it streams, tool lines, permission answers,
 *  the spinner on a terminal, and the result at the end. */
class PromptOutputWriter implements PromptOutput {
  readonly #shown: { out(text: string): void; err(text: string): void };
  #text = "";
  /** --output-schema's document, compact JSON, once the run has one. */
  #document: string | undefined;
  /** The last text printed (its last char matters: a tool call between chunks starts a new paragraph). */
  #printedText = "";
  #toolSinceText = false;
  readonly #reported = new Set<string>();
  readonly #denials = new Map<string, string>();
  readonly #spinner: Spinner;

  constructor(
    readonly format: OutputFormat,
    readonly sink: OutputSink,
    readonly ctx: OutputContext,
  ) {
    this.#shown = shownSink(sink);
    this.#spinner = new Spinner(sink, () => sink.outIsTty && this.#printedText !== "" && !this.#printedText.endsWith("\n"));
    if (format === "text") this.#spinner.start();
  }

  #err(line: string): void {
    this.#spinner.clear();
    this.#shown.err(line);
  }

  #toolLine(call: ToolCallView): void {
    if (this.#reported.has(call.id)) return;
    this.#reported.add(call.id);
    const denied = this.#denials.get(call.id);
    const line = `tool ${oneLine(callLabel(call))} … ${call.status}${denied ? ` (${denied})` : ""}`;
    // A tool line starts a line of its own: close a half-written answer line first (the same
    // paragraph break the next answer chunk would get), so stdout and stderr never run together.
    if (this.#printedText !== "" && !this.#printedText.endsWith("\n")) {
      this.sink.out("\n");
      this.#printedText = "\n";
    }
    if (this.sink.color) {
      this.#spinner.clear();
      this.sink.err(`\x1b[2m${stripTerminalControls(line)}\x1b[22m\n`);
    } else this.#err(`${line}\n`);
  }

  #showText(chunk: string): void {
    if (this.format !== "text" || this.ctx.schema || chunk === "") return;
    this.#spinner.clear();
    if (this.#toolSinceText && this.#printedText !== "" && !this.#printedText.endsWith("\n")) this.sink.out("\n");
    this.#toolSinceText = false;
    this.#shown.out(chunk);
    this.#printedText = chunk;
  }

  update(u: SessionUpdate, call: ToolCallView | undefined): void {
    if (this.format === "stream-json") this.sink.out(jsonLine({ type: "session_update", update: u }));
    // What the agent's git check moved aside is said on stderr too, whatever the format.
    const raw = u.sessionUpdate === "tool_call_update" ? (u.rawOutput as { user_notice?: unknown } | null | undefined) : undefined;
    if (raw && typeof raw === "object" && typeof raw.user_notice === "string") this.#err(`tendril prompt: ${raw.user_notice}\n`);
    if (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text") {
      this.#text += u.content.text;
      this.#showText(u.content.text);
    } else if (call && this.format === "text") {
      this.#toolSinceText = true;
      this.#spinner.activity = oneLine(callLabel(call), 70);
      if (call.status === "completed" || call.status === "failed") this.#toolLine(call);
    }
    this.#spinner.draw();
  }

  permission(call: ToolCallView, allowed: boolean, reason: string): void {
    if (!allowed) this.#denials.set(call.id, reason);
    if (this.format === "stream-json") {
      this.sink.out(jsonLine({ type: "permission", toolCallId: call.id, title: call.title, allowed, reason }));
    }
  }

  agentStderr(chunk: string): void {
    this.#err(chunk);
  }

  schemaRetry(problems: string[]): void {
    this.#text = "";
    if (this.format === "stream-json") this.sink.out(jsonLine({ type: "schema_retry", problems }));
    else if (this.format === "text") this.#err(`tendril prompt: the answer does not satisfy --output-schema; asking once more:${problems.map((p) => `\n  ${p}`).join("")}\n`);
  }

  get answer(): string {
    return this.ctx.schema ? (this.#document ?? "") : this.#text;
  }

  finish(result: RunResult): number {
    this.#spinner.stop();
    if (result.structured !== undefined) this.#document = jsonLine(result.structured).slice(0, -1);
    if (this.format === "text") {
      for (const call of result.toolCalls) this.#toolLine(call);
      if (this.#printedText !== "" && !this.#printedText.endsWith("\n")) this.sink.out("\n");
      if (this.#document !== undefined) this.sink.out(`${this.#document}\n`);
    } else {
      const obj = resultObject(result, this.#text, this.ctx);
      this.sink.out(jsonLine(this.format === "stream-json" ? { type: "result", ...obj } : obj));
    }
    const failure = describeFailure(result.outcome, this.ctx);
    if (failure) this.#shown.err(`tendril prompt: ${failure}\n`);
    return exitCodeFor(result.outcome);
  }
}
