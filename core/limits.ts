// Owns every bound Tendril enforces: its default, why it exists, and its `TENDRIL_<NAME>` override.
// Does not read process.env itself: callers pass an env map (cli/ owns the process).
import { formatBytes } from "./text-bounds.ts";

export interface LimitSpec {
  readonly value: number;
  readonly unit: "bytes" | "count" | "s" | "ms" | "ratio" | "chars";
  readonly why: string;
  /** 0 is a meaningful value (no retries), not a mistake. */
  readonly zeroOk?: true;
}

const KiB = 1024;
const MiB = 1024 * KiB;

export const LIMIT_SPECS = {
  MAX_LINE_BYTES: { value: 4 * MiB, unit: "bytes", why: "one JSON-RPC line; longer ends the connection" },
  MAX_PROMPT_BYTES: { value: 1 * MiB, unit: "bytes", why: "one session/prompt's content" },
  MAX_TOOL_CALLS_PER_TURN: { value: 64, unit: "count", why: "runaway tool loops stop here" },
  MAX_PARALLEL_TOOLS: { value: 8, unit: "count", why: "tool calls of one LLM response run at once" },
  MAX_TOOL_RESULT_BYTES: { value: 50 * KiB, unit: "bytes", why: "tool result text the LLM sees (middle trimmed)" },
  TOOL_TIMEOUT_S: { value: 660, unit: "s", why: "one MCP tools/call (above the shell's own 600 s max)" },
  MAX_MCP_SERVERS: { value: 16, unit: "count", why: "MCP servers per session" },
  MAX_TOOLS: { value: 128, unit: "count", why: "tools offered to the LLM per session" },
  MAX_TOOL_DESCRIPTION_BYTES: { value: 1 * KiB, unit: "bytes", why: "one tool description (clamped)" },
  MAX_TOOL_SCHEMA_BYTES: { value: 4 * KiB, unit: "bytes", why: "one tool input schema (larger tools dropped)" },
  MAX_SERVER_INSTRUCTIONS_BYTES: { value: 8 * KiB, unit: "bytes", why: "one MCP server's instructions in the system prompt" },
  MAX_AGENTS_MD_BYTES: { value: 64 * KiB, unit: "bytes", why: "AGENTS.md text in the system prompt, all files together" },
  MAX_API_KEY_BYTES: { value: 16 * KiB, unit: "bytes", why: "one API key `tendril agent login` reads (terminal or stdin)" },
  MCP_INIT_TIMEOUT_S: { value: 30, unit: "s", why: "MCP initialize and tools/list" },
  MCP_CONNECT_TIMEOUT_S: { value: 10, unit: "s", why: "the conductor's MCP bridge waits this long for `mcp/connect`, then speaks the stateless dialect" },
  MCP_IDLE_S: { value: 1800, unit: "s", why: "an unused shared MCP server is stopped" },
  MAX_LLM_RESPONSE_BYTES: { value: 16 * MiB, unit: "bytes", why: "one streamed LLM response" },
  LLM_TIMEOUT_S: { value: 600, unit: "s", why: "one LLM request, retries included" },
  HANDOFF_RATIO: { value: 0.9, unit: "ratio", why: "context use that triggers a summary handoff" },
  MAX_HANDOFFS: { value: 10, unit: "count", why: "summaries per session before oldest turns drop" },
  HOOK_TIMEOUT_MS: { value: 2500, unit: "ms", why: "a lifecycle hook call; fails open" },
  STOP_MAX_REJECTIONS: { value: 3, unit: "count", why: "_Stop objections per session" },
  SHELL_TIMEOUT_S: { value: 120, unit: "s", why: "default shell command timeout" },
  SHELL_MAX_TIMEOUT_S: { value: 600, unit: "s", why: "largest timeout_s a shell call may ask for" },
  SHELL_TAIL_BYTES: { value: 8 * KiB, unit: "bytes", why: "tail of an over-cap shell output kept inline" },
  SHELL_CAPTURE_BYTES: { value: 10 * MiB, unit: "bytes", why: "full shell capture saved to an artifact" },
  SHELL_ARTIFACTS: { value: 8, unit: "count", why: "artifact files kept per session" },
  SHELL_DIGEST_ABOVE_BYTES: { value: 8 * KiB, unit: "bytes", why: "a shell output larger than this reaches the model digested (saved whole); `shell_output = \"raw\"` never" },
  MAX_BACKGROUND_COMMANDS: { value: 8, unit: "count", why: "shell commands running in the background per session" },
  BACKGROUND_OUTPUT_BYTES: { value: 256 * KiB, unit: "bytes", why: "unread output kept per background command (the tail; the cut is marked)" },
  SHELL_READ_WAIT_MAX_MS: { value: 30_000, unit: "ms", why: "longest shell_read may wait for new output" },
  MAX_EDIT_FILE_BYTES: { value: 10 * MiB, unit: "bytes", why: "largest file str_replace edits" },
  TODO_ITEMS: { value: 50, unit: "count", why: "todo list length" },
  TODO_ITEM_CHARS: { value: 200, unit: "chars", why: "one todo item's text" },
  SHIM_OUTPUT_BYTES: { value: 50 * KiB, unit: "bytes", why: "rg/tree output before the cap marker" },
  SHIM_OUTPUT_LINES: { value: 2000, unit: "count", why: "rg/tree output lines before the cap marker" },
  RESEARCH_TIMEOUT_S: { value: 300, unit: "s", why: "a crate research sub-agent query" },
  MAX_SUBAGENT_DEPTH: { value: 1, unit: "count", zeroOk: true, why: "nesting of `agent__task` subagents (0: no task tool)" },
  MAX_SUBAGENTS_PER_TURN: { value: 8, unit: "count", why: "`agent__task` subagents one turn may start; more get an error result" },
  MAX_PENDING_STEERING: { value: 16, unit: "count", why: "`_session/steering` messages waiting for a turn's next LLM request" },
  KILL_GRACE_MS: { value: 200, unit: "ms", why: "SIGTERM to SIGKILL when a process group is killed" },
  STRAY_KILL_ROUNDS: { value: 20, unit: "count", why: "rounds of finding and SIGKILLing a command's processes that left its group (each round takes what forked during the last)" },
  SHUTDOWN_DEADLINE_S: { value: 3, unit: "s", why: "an agent's cleanup on exit; its client waits this long" },
  CANCEL_WAIT_S: { value: 2, unit: "s", why: "tendril prompt waits for a cancelled turn before killing the agent" },
  INTERRUPT_WAIT_S: { value: 0.5, unit: "s", why: "the same wait after Ctrl-C" },
  LLM_MAX_RETRIES: { value: 3, unit: "count", zeroOk: true, why: "retries of one LLM request on 429/5xx/transport errors" },
  MCP_RESTART_TRIES: { value: 3, unit: "count", zeroOk: true, why: "restarts of a dead MCP server before its tools are withdrawn" },
  MCP_BACKOFF_FIRST_S: { value: 0.5, unit: "s", why: "first wait before restarting a dead MCP server (doubles, ±20%)" },
  MCP_BACKOFF_MAX_S: { value: 30, unit: "s", why: "longest wait between MCP server restarts" },
  MCP_LIST_PAGES: { value: 64, unit: "count", why: "pages of one MCP tools/list or prompts/list" },
  MAX_OPEN_URL_ELICITATIONS: { value: 64, unit: "count", why: "accepted MCP URL questions per server awaiting completion; past it the oldest is forgotten" },
  MAX_SESSION_STARTS: { value: 4, unit: "count", why: "session/new calls starting servers at once; more wait in line" },
  SESSION_START_TIMEOUT_S: { value: 60, unit: "s", why: "one session/new, waiting in line included" },
  TREE_MAX_ENTRIES: { value: 100_000, unit: "count", why: "entries tree walks before it stops" },
  TREE_TIME_S: { value: 1.2, unit: "s", why: "time tree walks before it stops" },
  TREE_PARALLEL_MIN_FILES: { value: 2000, unit: "count", why: "files tree counts on one thread before it shares the rest with worker threads" },
  TREE_WORKER_PRELOAD: { value: 0, unit: "count", zeroOk: true, why: "batches sent to a tree worker before it has started (0: none, so a walk that ends during its start-up never waits for it)" },
  EDIT_TEMP_STALE_S: { value: 60, unit: "s", why: "age after which an interrupted edit's temp file is swept" },
  MAX_TOOL_IMAGE_BYTES: { value: 5 * MiB, unit: "bytes", why: "images (base64) one tool result passes to the model" },
  MAX_PROGRESS_UPDATES_PER_S: { value: 10, unit: "count", why: "MCP progress shown to the client per tool call and second" },
  TERMINAL_FLUSH_MS: { value: 100, unit: "ms", why: "a shell call's live output goes to a terminal-showing client at most once per this" },
  TERMINAL_OUTPUT_BYTES: { value: 16 * KiB, unit: "bytes", why: "live shell output in one update; a flood keeps its tail" },
  INTERRUPT_REPEAT_S: { value: 2, unit: "s", why: "a second Ctrl-C within this stops the agent (the first cancels turns)" },
  MODEL_LIST_TIMEOUT_S: { value: 2, unit: "s", why: "asking the provider which models it offers (once per agent)" },
  ARTIFACTS_STALE_S: { value: 86_400, unit: "s", why: "age after which another session's shell artifacts are deleted" },
  MAX_CRATE_BYTES: { value: 64 * MiB, unit: "bytes", why: "one downloaded .crate file (crates.io accepts 10 MiB)" },
  MAX_CRATE_UNPACKED_BYTES: { value: 512 * MiB, unit: "bytes", why: "a crate's extracted files together (cargo's own cap)" },
  MAX_CRATE_FILES: { value: 100_000, unit: "count", why: "entries in one crate archive" },
  MAX_CRATE_INDEX_BYTES: { value: 32 * MiB, unit: "bytes", why: "one sparse-index file (every version of one crate)" },
  CRATES_HTTP_TIMEOUT_S: { value: 30, unit: "s", why: "a registry request receiving nothing (idle, like cargo's low-speed limit)" },
  CRATES_HTTP_RETRIES: { value: 3, unit: "count", zeroOk: true, why: "retries of a registry request answered 429/5xx or cut off" },
  CRATES_RETRY_BACKOFF_S: { value: 0.5, unit: "s", why: "first retry delay, doubled each retry (a Retry-After wins)" },
  CRATE_LOCK_STALE_S: { value: 30, unit: "s", why: "a download lock untouched this long is taken over (holders refresh it)" },
  CRATE_TEMP_STALE_S: { value: 86_400, unit: "s", why: "age after which another host's crate temp folder is swept (its pid cannot be checked here)" },
  MAX_PARALLEL_CRATES: { value: 16, unit: "count", why: "crates of one call fetched at once" },
  COMPONENT_STDERR_TAIL_BYTES: { value: 4 * KiB, unit: "bytes", why: "a chain component's last stderr kept for the error that names it" },
  MAX_HOP_QUEUE_BYTES: { value: 64 * MiB, unit: "bytes", why: "output waiting for one hop of a chain that stopped reading; more ends the chain" },
  MAX_TRACE_LINE_BYTES: { value: 8 * MiB, unit: "bytes", why: "one line of a trace file `conductor trace --html/--serve` reads (a message and its record)" },
  MAX_TRACE_CONNECTIONS: { value: 16, unit: "count", why: "connections `conductor trace --serve` keeps open at once (each page follows the trace)" },
  TRACE_POLL_MS: { value: 100, unit: "ms", why: "how often `conductor trace --serve` looks for lines appended to the trace" },
  MAX_OUTPUT_DOCUMENT_BYTES: { value: 1 * MiB, unit: "bytes", why: "an answer `tendril prompt --output-schema` takes a JSON document from and validates" },
  MAX_OUTPUT_DOCUMENT_DEPTH: { value: 128, unit: "count", why: "nesting of that document (validation recurses per level)" },
  MAX_OUTPUT_UNIQUE_ITEMS: { value: 2000, unit: "count", why: "array items of that document in all when its schema has uniqueItems (compared pairwise)" },
  RESEARCH_CACHE_ENTRIES: { value: 64, unit: "count", zeroOk: true, why: "crate research answers kept for identical queries (0: no cache)" },
  RESEARCH_CACHE_S: { value: 900, unit: "s", why: "how long a crate research answer is reused for an identical query" },
  RESEARCH_READ_FILE_BYTES: { value: 10 * MiB, unit: "bytes", why: "one crate file a research session's read_crate_file reads" },
  RG_MAX_FILE_BYTES: { value: 512 * MiB, unit: "bytes", why: "one file (or stdin) the built-in rg reads whole; larger files are skipped with a message" },
  RG_PARALLEL_MIN_FILES: { value: 2000, unit: "count", why: "files a built-in rg walk finds before it searches them on worker threads" },
  RG_MAX_WORKERS: { value: 8, unit: "count", why: "worker threads of one built-in rg search (-j N asks for fewer) or tree" },
  RG_BATCH_FILES: { value: 128, unit: "count", why: "files sent to a built-in rg (or tree) worker at a time" },
  RG_WORKER_QUEUE: { value: 2, unit: "count", why: "batches a built-in rg (or tree) worker holds at once: one it searches, the rest waiting" },
  SANDBOX_KILL_HOLD_MS: { value: 1000, unit: "ms", why: "a kill of a confined command waits at most this for bwrap to name the sandbox's first process, killed with it" },
  SANDBOX_PROXY_HEAD_BYTES: { value: 64 * KiB, unit: "bytes", why: "a request head or TLS hello the allow-domains proxy reads before it decides, or one size or trailer line of a chunked body; larger is refused" },
  SANDBOX_PROXY_HEAD_TIMEOUT_S: { value: 30, unit: "s", why: "a client of the allow-domains proxy that sends no whole request head (or TLS hello) in this is dropped" },
  SANDBOX_GIT_WALK_DIRS: { value: 10_000, unit: "count", why: "folders of the writable roots walked for git directories (by shape) before and after each confined command; past it the check fails closed (~15 µs each)" },
} as const satisfies Record<string, LimitSpec>;

export type LimitName = keyof typeof LIMIT_SPECS;

/**
 * Limits of features not built yet (none today): an override is refused, never accepted and ignored.
 * Each says what is missing.
 */
export const NOT_YET_IN_FORCE: Partial<Record<LimitName, string>> = {};
export type Limits = { readonly [K in LimitName]: number };

export class LimitError extends Error {
  override name = "LimitError";
}

/** Every limit's default. A plain loop: this runs at every start, the shims' included, where the first
 *  call of each array method costs more than the loop. */
export const DEFAULT_LIMITS: Limits = (() => {
  const out: Record<string, number> = {};
  for (const k in LIMIT_SPECS) out[k] = LIMIT_SPECS[k as LimitName].value;
  return out as Limits;
})();

const SUFFIX: Record<string, number> = { "": 1, k: KiB, kib: KiB, m: MiB, mib: MiB, g: 1024 * MiB, gib: 1024 * MiB };

/** Parses one override; returns a number or throws a LimitError that names the variable and the rule. */
export function parseLimit(name: LimitName, raw: string): number {
  const spec: LimitSpec = LIMIT_SPECS[name];
  const text = raw.trim().replaceAll("_", "");
  const variable = `TENDRIL_${name}`;
  if (spec.unit === "ratio" || spec.unit === "s" || spec.unit === "ms") {
    // Times take fractions, so a test can set a limit to 0.05 s instead of waiting for the real one.
    const n = /^\d*\.?\d+$/.test(text) ? Number(text) : NaN;
    const max = spec.unit === "ratio" ? 1 : Number.MAX_SAFE_INTEGER;
    if (!Number.isFinite(n) || n <= 0 || n > max) {
      const rule = spec.unit === "ratio" ? "a number in (0, 1]" : `a positive number of ${spec.unit === "s" ? "seconds" : "milliseconds"}`;
      throw new LimitError(`${variable} must be ${rule}, got ${JSON.stringify(raw)}`);
    }
    return n;
  }
  const m = /^(\d+)\s*([a-zA-Z]*)$/.exec(text);
  const mult = m ? SUFFIX[(m[2] ?? "").toLowerCase()] : undefined;
  if (!m || mult === undefined || (spec.unit !== "bytes" && m[2] !== "")) {
    const hint = spec.unit === "bytes" ? " (a byte count, optionally with KiB/MiB)" : "";
    throw new LimitError(`${variable} must be a positive integer${hint}, got ${JSON.stringify(raw)}`);
  }
  const n = Number(m[1]) * mult;
  if (!Number.isSafeInteger(n) || n < 0 || (n === 0 && !spec.zeroOk)) {
    const rule = spec.zeroOk ? "a whole number (0 or more)" : "a positive integer";
    throw new LimitError(`${variable} must be ${rule}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** The limits in force: defaults overridden by `TENDRIL_<NAME>` entries of env. Throws LimitError. */
export function loadLimits(env: Readonly<Record<string, string | undefined>>): Limits {
  const out: Record<string, number> = { ...DEFAULT_LIMITS };
  for (const name of Object.keys(LIMIT_SPECS) as LimitName[]) {
    const raw = env[`TENDRIL_${name}`];
    if (raw === undefined || raw === "") continue;
    const missing = NOT_YET_IN_FORCE[name];
    if (missing) throw new LimitError(`TENDRIL_${name} has no effect: ${missing}; unset it`);
    out[name] = parseLimit(name, raw);
  }
  if (out.SHELL_TIMEOUT_S! > out.SHELL_MAX_TIMEOUT_S!) {
    throw new LimitError(
      `TENDRIL_SHELL_TIMEOUT_S (${out.SHELL_TIMEOUT_S}) must not exceed TENDRIL_SHELL_MAX_TIMEOUT_S (${out.SHELL_MAX_TIMEOUT_S})`,
    );
  }
  return out as Limits;
}

/** Human form of a limit's value, as the limits table in docs/configuration.md shows it. */
export function formatLimit(name: LimitName, value: number = DEFAULT_LIMITS[name]): string {
  const unit = LIMIT_SPECS[name].unit;
  if (unit === "bytes") return formatBytes(value);
  return unit === "count" || unit === "ratio" ? String(value) : `${value} ${unit}`;
}
