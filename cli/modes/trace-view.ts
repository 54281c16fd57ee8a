// Owns `tendril conductor trace FILE --html OUT` (one self-contained page, written private like the
// trace) and `--serve [--port N]` (the live page on 127.0.0.1 until SIGINT/SIGTERM): flags → values,
// errors → one line on stderr and the exit code (2 bad input or usage, 1 the page cannot be written).
// The page, the reader and the server live in core/conductor.
import { closeSync, writeSync } from "node:fs";
import { basename } from "node:path";
import { readWholeTrace, TraceLineError } from "../../core/conductor/trace-follow.ts";
import { PortInUseError, serveTrace } from "../../core/conductor/trace-serve.ts";
import { stepsOf } from "../../core/conductor/trace-steps.ts";
import { tracePage } from "../../core/conductor/trace-view.ts";
import { type Limits, LimitError, loadLimits } from "../../core/limits.ts";
import { openPrivateFile } from "../../core/private-file.ts";
import { signalExitCode, watchStopSignals } from "../process/stop-signals.ts";

export interface TraceViewFlags {
  html?: string;
  serve?: boolean;
  port?: string;
  color?: boolean;
  session?: string;
  method?: string;
}

const say = (line: string) => void process.stderr.write(`tendril conductor trace: ${line}\n`);

function fail(line: string, code = 2): number {
  say(line);
  return code;
}

/** `--html` or `--serve`; refuses the two together and `--port` without `--serve`. */
export async function runTraceView(file: string, flags: TraceViewFlags): Promise<number> {
  if (flags.html !== undefined && flags.serve) return fail("--html and --serve: choose one");
  if (flags.port !== undefined && !flags.serve) return fail("--port needs --serve");
  if (flags.color === false) return fail("--no-color is for the text diagram; the page has its own colours");
  const port = flags.port === undefined ? 0 : /^\d+$/.test(flags.port) ? Number(flags.port) : NaN;
  if (!(port >= 0 && port <= 65535)) return fail(`--port must be a port number (0-65535; 0 takes any free port), got ${JSON.stringify(flags.port)}`);
  let limits: Limits;
  try {
    limits = loadLimits(process.env);
  } catch (err) {
    if (err instanceof LimitError) return fail(err.message);
    throw err;
  }
  const filters = { session: flags.session, method: flags.method };
  let whole;
  try {
    // --serve reads it too: a file that is not a trace is refused before anything listens
    whole = await readWholeTrace(file, limits.MAX_TRACE_LINE_BYTES);
  } catch (err) {
    if (err instanceof TraceLineError) return fail(`${file} is not a trace: ${err.message}`);
    return fail(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message}`);
  }
  // a live trace's unfinished last line is followed until it ends
  if (flags.serve) return serve(file, port, filters, limits);
  const cut = whole.cutShort !== undefined ? `line ${whole.cutShort} is cut short (the trace was still being written?): skipped` : undefined;
  if (cut) say(`${file}: ${cut}`);

  const out = flags.html!;
  const steps = stepsOf(whole.records);
  const html = tracePage({ title: basename(file), components: whole.components, steps, filters, note: cut });
  try {
    writePrivate(out, html);
  } catch (err) {
    return fail(`cannot write ${out}: ${(err as Error).message}`, 1);
  }
  say(`wrote ${out} (${steps.length} messages)`);
  return 0;
}

/** The page holds the whole trace (tokens, conversations): private like the trace itself. */
function writePrivate(path: string, text: string): void {
  const fd = openPrivateFile(path, "w");
  try {
    const bytes = Buffer.from(text, "utf8");
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off);
  } finally {
    closeSync(fd);
  }
}

async function serve(file: string, port: number, filters: { session?: string; method?: string }, limits: Limits): Promise<number> {
  const signals = watchStopSignals();
  let server;
  try {
    server = await serveTrace({
      path: file,
      port,
      pollMs: limits.TRACE_POLL_MS,
      maxLineBytes: limits.MAX_TRACE_LINE_BYTES,
      maxConnections: limits.MAX_TRACE_CONNECTIONS,
      title: basename(file),
      filters,
      problem: (err: TraceLineError) => say(`${file}: ${err.message}`),
    });
  } catch (err) {
    signals.dispose();
    if (err instanceof PortInUseError) return fail(err.message);
    return fail(`cannot listen on 127.0.0.1:${port}: ${(err as Error).message}`);
  }
  process.stdout.write(`${server.url}\n`);
  say(`following ${file} at ${server.url} (Ctrl-C stops)`);
  const sig = await signals.stopped;
  await server.close();
  return signalExitCode(sig);
}
