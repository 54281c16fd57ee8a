// Owns persisted sessions: one append-only JSONL file per session under the state dir (a header line,
// then one line per event: what the client saw, what the LLM history gained, mode changes), written
// at tool results and turn ends and fsync'd at turn end; reading one back tolerantly (a damaged or
// half-written line is skipped with a warning) and listing them. Does not run turns or speak ACP.
import { closeSync, existsSync, fstatSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, truncateSync, writeSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { Message } from "../llm/types.ts";
import { parseSessionUsage, type SessionUsage } from "../llm/prices.ts";
import { log } from "../log.ts";
import { openPrivateFile } from "../private-file.ts";
import { wellFormedDeep } from "../text-bounds.ts";

/** A surrogate as JSON writes it (`\ud83d`): only a file with one may need repairing. */
const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F]/;

export interface SessionHeader {
  type: "header";
  v: 1;
  id: string;
  cwd: string;
  created: string;
  title: string | null;
  model: string;
  mode: string;
  /** The session's additional workspace roots when it was created or forked (absent: none). */
  additionalDirectories?: string[];
}

export type SessionEvent =
  | { type: "update"; update: SessionUpdate }
  | { type: "history"; message: Message }
  | { type: "mode"; mode: string }
  | { type: "model"; model: string }
  /** A config option other than mode and model set to a value (`thought_level`, …). */
  | { type: "option"; id: string; value: string }
  | { type: "title"; title: string }
  /** A prompt begins; `retract` undoes everything since (a prompt that failed before any output). */
  | { type: "turn" }
  | { type: "retract" }
  /** Context handoff: the history from here on replaces everything before it. */
  | { type: "compact"; history: Message[] }
  /** The session's token and cost totals so far (the latest one counts). */
  | { type: "usage"; usage: SessionUsage };

export interface LoadedSession {
  header: SessionHeader;
  /** What the client saw, in order, ready to replay (tool calls left open are closed as failed). */
  updates: SessionUpdate[];
  /** The LLM history, made valid (a tool call without a result gets a failed one). */
  history: Message[];
  mode: string;
  /** The model the session switched to, if it did. */
  model?: string;
  /** Config options other than mode and model, by id: the latest value each was set to. */
  options: Record<string, string>;
  title: string | null;
  updatedAt: string;
  /** The session's totals as last saved; undefined when the file has none. */
  usage?: SessionUsage;
}

export interface SessionSummary {
  sessionId: string;
  cwd: string;
  /** Present when the session has additional workspace roots. */
  additionalDirectories?: string[];
  title: string | null;
  updatedAt: string;
}

const ID = /^[A-Za-z0-9_-]{1,128}$/;
const INTERRUPTED = "interrupted: the agent stopped before this tool call finished";

/** Session ids name files: only ids this agent could have made are looked up. */
export function isSessionId(id: string): boolean {
  return ID.test(id);
}

export class SessionStore {
  readonly dir: string;

  constructor(stateDir: string) {
    this.dir = join(stateDir, "sessions");
  }

  path(id: string): string {
    return join(this.dir, `${id}.jsonl`);
  }

  /** Starts a session's file. */
  create(header: Omit<SessionHeader, "type" | "v">): SessionFile {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const file = new SessionFile(this.path(header.id));
    // Written now, made durable with the first turn's fsync: an empty session is not worth a disk flush.
    file.append([{ type: "header", v: 1, ...header }]);
    return file;
  }

  /** Reopens a session's file for appending (after load); a torn last line is cut first. Only the
   *  file's tail is read: a whole file ends with a newline, and a torn line is searched for backwards. */
  reopen(id: string): SessionFile {
    const path = this.path(id);
    const end = endOfLastLine(path);
    if (end < statSync(path).size) truncateSync(path, end);
    return new SessionFile(path);
  }

  /** Whether a saved session has this id (ids outside the id format never name a file). */
  exists(id: string): boolean {
    return isSessionId(id) && existsSync(this.path(id));
  }

  /** Removes a saved session's file (session/delete); an id outside the id format removes nothing. */
  remove(id: string): void {
    if (isSessionId(id)) rmSync(this.path(id), { force: true });
  }

  /**
   * session/fork: a copy of session `from`'s file as session `to` in `cwd` (its header says so; every
   * other line is the same), written privately and made durable. The original is only read.
   */
  fork(from: string, to: string, cwd: string, additionalDirectories: readonly string[] = []): void {
    if (!isSessionId(from) || !isSessionId(to)) throw new Error(`not a session id: ${isSessionId(from) ? to : from}`);
    const text = readFileSync(this.path(from), "utf8");
    const nl = text.indexOf("\n");
    const header = JSON.parse(nl < 0 ? text : text.slice(0, nl)) as SessionHeader;
    const { additionalDirectories: _theirs, ...rest } = header;
    const dirs = additionalDirectories.length > 0 ? { additionalDirectories: [...additionalDirectories] } : {};
    const copy = JSON.stringify({ ...rest, id: to, cwd, ...dirs, created: new Date().toISOString() }) + (nl < 0 ? "\n" : text.slice(nl));
    const fd = openPrivateFile(this.path(to), "w");
    try {
      writeSync(fd, copy);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Reads a session back; undefined when there is none. Damaged lines are skipped with a warning. */
  load(id: string): LoadedSession | undefined {
    if (!isSessionId(id)) return undefined;
    let text: string;
    let mtime: Date;
    try {
      text = readFileSync(this.path(id), "utf8");
      mtime = statSync(this.path(id)).mtime;
    } catch {
      return undefined;
    }
    const lines = parseLines(text, this.path(id));
    const header = lines[0];
    if (!header || header.type !== "header") {
      log.warn("session file has no header; ignoring it", { file: this.path(id) });
      return undefined;
    }
    // A file written before text was made well-formed where it enters may hold a lone surrogate (JSON
    // keeps it as an escape): repaired here, or every request of the session would fail at the provider.
    const loaded = fold(header, lines as SessionEvent[], mtime.toISOString());
    return ESCAPED_SURROGATE.test(text) ? wellFormedDeep(loaded) : loaded;
  }

  /** Every session (newest first), optionally only those of `cwd`. Reads each file's first line only. */
  list(cwd?: string): SessionSummary[] {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((n) => n.endsWith(".jsonl"));
    } catch {
      return [];
    }
    const out: (SessionSummary & { t: number })[] = [];
    for (const name of names) {
      const path = join(this.dir, name);
      const head = readHeader(path);
      if (!head || (cwd !== undefined && head.cwd !== cwd)) continue;
      const t = statSync(path).mtimeMs;
      // a header written by hand or by another version may hold anything: only absolute path strings are reported
      const listed = Array.isArray(head.additionalDirectories) ? head.additionalDirectories.filter((d): d is string => typeof d === "string" && isAbsolute(d)) : [];
      const dirs = listed.length > 0 ? { additionalDirectories: listed } : {};
      out.push({ sessionId: head.id, cwd: head.cwd, ...dirs, title: head.title, updatedAt: new Date(t).toISOString(), t });
    }
    out.sort((a, b) => b.t - a.t || a.sessionId.localeCompare(b.sessionId));
    return out.map(({ t: _t, ...s }) => s);
  }
}

/** Bytes read per step when looking backwards for a session file's last newline. */
const TAIL_CHUNK = 64 * 1024;

/** The byte offset just past the file's last newline (0 when it has none): where whole lines end. */
function endOfLastLine(path: string): number {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(TAIL_CHUNK);
    let pos = fstatSync(fd).size;
    while (pos > 0) {
      const len = Math.min(TAIL_CHUNK, pos);
      pos -= len;
      const got = readSync(fd, buf, 0, len, pos);
      const nl = buf.subarray(0, got).lastIndexOf(0x0a);
      if (nl >= 0) return pos + nl + 1;
    }
    return 0;
  } finally {
    closeSync(fd);
  }
}

/** One session's file, open for appending. Writes are whole lines; sync() is the turn-end fsync. */
export class SessionFile {
  #fd: number | undefined;
  /** Closed, yet a turn that was cancelled by the close may still owe its last events. */
  #closed = false;
  /** Lines written since the last fsync (a close right after a turn's fsync needs none). */
  #unsynced = false;

  constructor(readonly path: string) {}

  /** Appends events as lines; a string is an event its caller already serialized (one line). */
  append(events: (SessionEvent | SessionHeader | string)[]): void {
    if (events.length === 0) return;
    const text = events.map((e) => (typeof e === "string" ? e : JSON.stringify(e))).join("\n") + "\n";
    try {
      this.#fd ??= openPrivateFile(this.path, "a");
      writeSync(this.#fd, text);
      this.#unsynced = true;
      if (this.#closed) this.close();
    } catch (err) {
      // Losing persistence must not lose the turn: say so and keep serving.
      log.warn("could not write the session file; this session may not load completely", { file: this.path, error: err });
    }
  }

  sync(): void {
    if (this.#fd === undefined || !this.#unsynced) return;
    try {
      fsyncSync(this.#fd);
      this.#unsynced = false;
    } catch (err) {
      log.warn("could not fsync the session file", { file: this.path, error: err });
    }
  }

  close(): void {
    this.#closed = true;
    if (this.#fd === undefined) return;
    this.sync();
    closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/** The lines of a session file: each an object with a string `type` is taken as one this store wrote
 *  (fold skips a type it does not know); anything else is reported and skipped (a blank line silently). */
function parseLines(text: string, file: string): (SessionHeader | SessionEvent)[] {
  const out: (SessionHeader | SessionEvent)[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    let v;
    try {
      v = JSON.parse(line);
    } catch {
      // A blank line is not JSON either; it is not damage.
      if (line.trim() === "") continue;
    }
    if (v && typeof v === "object" && typeof v.type === "string") {
      out.push(v);
      continue;
    }
    const torn = i === lines.length - 1 ? " (a half-written last line: the agent stopped mid-write)" : "";
    log.warn(`skipping a damaged line of a session file${torn}`, { file, line: i + 1 });
  }
  return out;
}

const HEAD_BYTES = 64 * 1024;

/** The start of a file: enough for the header and, in practice, the title event after the first prompt. */
function readHead(path: string): string {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    return buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** The header, with the title the first prompt gave (a `title` event early in the file). */
function readHeader(path: string): SessionHeader | undefined {
  try {
    const head = readHead(path);
    const lines = head.split("\n");
    const v = JSON.parse(lines[0]!);
    if (v?.type !== "header" || typeof v.id !== "string" || typeof v.cwd !== "string") return undefined;
    const titled = lines.slice(1, -1).find((l) => l.startsWith('{"type":"title"'));
    if (titled && v.title === null) v.title = JSON.parse(titled).title;
    return v;
  } catch {
    return undefined;
  }
}

/** Folds the events (those after the header, `events[0]`) into what a load needs: updates to replay,
 *  a valid history, the latest mode. */
function fold(header: SessionHeader, events: SessionEvent[], updatedAt: string): LoadedSession {
  const updates: SessionUpdate[] = [];
  let history: Message[] = [];
  let mode = header.mode;
  let model: string | undefined;
  const options: Record<string, string> = {};
  let title = header.title;
  let usage: SessionUsage | undefined;
  let mark = { updates: 0, history: 0, title };
  for (let i = 1; i < events.length; i++) {
    const e = events[i]!;
    if (e.type === "turn") mark = { updates: updates.length, history: history.length, title };
    else if (e.type === "retract") {
      updates.length = Math.min(updates.length, mark.updates);
      history.length = Math.min(history.length, mark.history);
      title = mark.title;
    } else if (e.type === "update" && e.update && typeof e.update === "object") updates.push(e.update);
    else if (e.type === "history" && e.message) history.push(e.message);
    else if (e.type === "mode" && typeof e.mode === "string") mode = e.mode;
    else if (e.type === "model" && typeof e.model === "string") model = e.model;
    else if (e.type === "option" && typeof e.id === "string" && typeof e.value === "string") options[e.id] = e.value;
    else if (e.type === "title" && typeof e.title === "string") title = e.title;
    else if (e.type === "compact" && Array.isArray(e.history)) history = [...e.history];
    else if (e.type === "usage") usage = parseSessionUsage(e.usage) ?? usage;
  }
  closeOpenToolCalls(updates);
  return { header, updates, history: repairHistory(history), mode, model, options, title, updatedAt, ...(usage ? { usage } : {}) };
}

/** A tool call the client saw start but never end (the agent died mid-call) replays as failed: its
 *  closing update is appended to `updates`. */
function closeOpenToolCalls(updates: SessionUpdate[]): void {
  const open = new Set<string>();
  for (const u of updates) {
    if (u.sessionUpdate === "tool_call") open.add(u.toolCallId);
    if (u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed")) open.delete(u.toolCallId);
  }
  for (const toolCallId of open) {
    updates.push({ sessionUpdate: "tool_call_update", toolCallId, status: "failed", content: [{ type: "content", content: { type: "text", text: INTERRUPTED } }] });
  }
}

/** Every assistant tool call gets a result, so the next LLM request is valid. */
function repairHistory(history: Message[]): Message[] {
  const out = [...history];
  const last = out.at(-1);
  if (last?.role === "assistant" && last.toolCalls.length > 0) {
    out.push({ role: "tool", results: last.toolCalls.map((c) => ({ callId: c.id, content: INTERRUPTED, isError: true })) });
  }
  return out;
}
