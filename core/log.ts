// Owns diagnostics: one key=value line per event, on stderr only (stdout is the protocol).
// Does not decide the level from the process: cli/ calls setLogLevel from config.

export type LogLevel = "error" | "warn" | "info" | "debug";
const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };
export const LOG_LEVELS = Object.keys(RANK) as LogLevel[];

let threshold = RANK.warn;
let scope = "tendril";
let sink: (line: string) => void = (line) => {
  try {
    process.stderr.write(line);
  } catch {
    // stderr closed: nothing sensible left to do with a log line
  }
};

export function setLogLevel(level: LogLevel): void {
  threshold = RANK[level];
}

/** Names the process in every line (e.g. `tendril agent`), so interleaved stderr stays readable. */
export function setLogScope(name: string): void {
  scope = name;
}

/** Redirects lines (tests capture them). Returns the previous sink. */
export function setLogSink(next: (line: string) => void): (line: string) => void {
  const prev = sink;
  sink = next;
  return prev;
}

export function isLogLevel(s: string): s is LogLevel {
  return Object.hasOwn(RANK, s);
}

function formatValue(v: unknown): string {
  if (v instanceof Error) v = v.message;
  const s = typeof v === "string" ? v : JSON.stringify(v) ?? String(v);
  return /^[^\s"=]+$/.test(s) ? s : JSON.stringify(s);
}

function emit(level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
  if (RANK[level] > threshold) return;
  let line = `${scope}: ${level}: ${msg}`;
  if (fields) for (const [k, v] of Object.entries(fields)) if (v !== undefined) line += ` ${k}=${formatValue(v)}`;
  sink(line + "\n");
}

export const log = {
  error: (msg: string, fields?: Record<string, unknown>) => emit("error", msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>) => emit("warn", msg, fields),
  info: (msg: string, fields?: Record<string, unknown>) => emit("info", msg, fields),
  debug: (msg: string, fields?: Record<string, unknown>) => emit("debug", msg, fields),
};

/**
 * A rejection handler for failures that must not stop anything (a notify to a gone client, a close
 * of an already dead server) but must not vanish either: logged at debug with what was being done.
 */
export function logFailure(what: string): (error: unknown) => void {
  return (error) => log.debug(`${what} failed (ignored)`, { error });
}
