// Owns a session's background shell commands (SPEC §3.3): the ones a `shell` call left running
// (`background: true`, or still running when its `yield_ms` ran out), each with an id, its unread
// output in a bounded ring (the tail kept, the cut marked: idle output never grows memory), its stdin,
// its end; and the model's reads, writes and kills of them, the launcher's check (the sandbox's git
// check) at each read. Does not start commands (shell.ts, through the executor) or format a call's
// first reply.
import type { Running } from "./exec.ts";
import { formatBytes } from "../../core/text-bounds.ts";
import type { Limits } from "../../core/limits.ts";

/** The background limits of a limits table (core/limits.ts). */
export function backgroundLimits(l: Pick<Limits, "MAX_BACKGROUND_COMMANDS" | "BACKGROUND_OUTPUT_BYTES" | "SHELL_READ_WAIT_MAX_MS">): BackgroundLimits {
  return { max: l.MAX_BACKGROUND_COMMANDS, outputBytes: l.BACKGROUND_OUTPUT_BYTES, readWaitMaxMs: l.SHELL_READ_WAIT_MAX_MS };
}

export interface BackgroundLimits {
  /** MAX_BACKGROUND_COMMANDS: running at once. */
  max: number;
  /** BACKGROUND_OUTPUT_BYTES: unread output kept per command. */
  outputBytes: number;
  /** SHELL_READ_WAIT_MAX_MS: the longest a read waits for new output. */
  readWaitMaxMs: number;
}

/** How a background command ended. */
export interface BackgroundEnd {
  exitCode: number;
  signal?: string;
  /** Ended by shell_kill, the session closing or a client's cancel. */
  killed: boolean;
}

/** Unread output: the newest `max` bytes, and how many older ones were dropped unread. */
export class OutputRing {
  #chunks: Buffer[] = [];
  #bytes = 0;
  #dropped = 0;
  #decoder = new TextDecoder();
  #listeners = new Set<() => void>();

  constructor(private readonly max: number) {}

  push(b: Buffer): void {
    this.#chunks.push(b);
    this.#bytes += b.length;
    while (this.#bytes > this.max) {
      const over = this.#bytes - this.max;
      const first = this.#chunks[0]!;
      if (first.length <= over) {
        this.#chunks.shift();
        this.#bytes -= first.length;
        this.#dropped += first.length;
      } else {
        this.#chunks[0] = first.subarray(over);
        this.#bytes -= over;
        this.#dropped += over;
      }
    }
    for (const l of this.#listeners) l();
  }

  get unread(): number {
    return this.#bytes;
  }

  /** Resolves when output arrives or `ms` pass (whichever first). */
  arrival(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#listeners.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#listeners.add(done);
    });
  }

  /** Takes what is unread as text (a character cut by the ring's start is dropped whole), and how many bytes went unread. */
  take(): { text: string; dropped: number } {
    let bytes = Buffer.concat(this.#chunks);
    const dropped = this.#dropped;
    if (dropped > 0) {
      // What was dropped may have ended mid-character: start at the next whole one.
      let i = 0;
      while (i < bytes.length && (bytes[i]! & 0xc0) === 0x80) i++;
      bytes = bytes.subarray(i);
      this.#decoder = new TextDecoder();
    }
    this.#chunks = [];
    this.#bytes = 0;
    this.#dropped = 0;
    return { text: this.#decoder.decode(bytes, { stream: true }), dropped };
  }

  /** Wakes every waiting read (the command ended). */
  wake(): void {
    for (const l of this.#listeners) l();
  }
}

interface Entry {
  id: string;
  command: string;
  running: Running;
  ring: OutputRing;
  end?: BackgroundEnd;
  /** What the launcher said (the git check) not yet read. */
  notes: string[];
  killed: boolean;
}

/** What one read gives the model. */
export interface BackgroundRead {
  id: string;
  command: string;
  output: string;
  /** Bytes of output dropped unread since the last read (the ring kept the newest). */
  dropped: number;
  /** Set once it ended; the command is then forgotten. */
  end?: BackgroundEnd;
  notes: string[];
}

export class BackgroundError extends Error {
  override name = "BackgroundError";
}

export class BackgroundCommands {
  readonly #entries = new Map<string, Entry>();
  #next = 1;
  /** Hears each command end (the editor's terminal ends with it). */
  onEnd?: (id: string, end: BackgroundEnd) => void;

  constructor(readonly limits: BackgroundLimits) {}

  /** Running now (ended ones whose end was not read yet are not counted). */
  get running(): number {
    let n = 0;
    for (const e of this.#entries.values()) if (!e.end) n++;
    return n;
  }

  /** Throws when one more may not start (MAX_BACKGROUND_COMMANDS); call before starting it. */
  checkRoom(): void {
    if (this.running >= this.limits.max) {
      const ids = [...this.#entries.values()].filter((e) => !e.end).map((e) => `${e.id} (${e.command})`);
      throw new BackgroundError(`${this.running} commands already run in the background (MAX_BACKGROUND_COMMANDS = ${this.limits.max}): ${ids.join(", ")}. End one with shell_kill, or wait for one to finish, then start this one`);
    }
  }

  /** A fresh ring for a command about to start (its output goes there from the first byte). */
  ring(): OutputRing {
    return new OutputRing(this.limits.outputBytes);
  }

  /** Keeps a started command (its output already flows into `ring`); its id. */
  add(command: string, running: Running, ring: OutputRing): string {
    const id = `bg${this.#next++}`;
    const entry: Entry = { id, command, running, ring, notes: [], killed: false };
    this.#entries.set(id, entry);
    void running.done.then(
      (o) => {
        entry.end = { exitCode: o.exitCode, ...(o.signal ? { signal: o.signal } : {}), killed: entry.killed || o.cancelled };
        if (o.note) entry.notes.push(o.note);
        ring.wake();
        this.onEnd?.(id, entry.end);
      },
      (err: unknown) => {
        entry.end = { exitCode: 127, killed: entry.killed };
        entry.notes.push(`the command failed: ${err instanceof Error ? err.message : String(err)}`);
        ring.wake();
        this.onEnd?.(id, entry.end);
      },
    );
    return id;
  }

  #get(id: string): Entry {
    const e = this.#entries.get(id);
    if (!e) {
      const known = [...this.#entries.keys()];
      throw new BackgroundError(`no background command ${JSON.stringify(id)}${known.length ? `: the ones this session has are ${known.join(", ")}` : ": this session has none (a shell call with background: true starts one)"}`);
    }
    return e;
  }

  /** New output since the last read (waiting up to `waitMs` for some when there is none), the
   *  launcher's check, and its end once it ended (then it is forgotten). */
  async read(id: string, waitMs = 0): Promise<BackgroundRead> {
    const e = this.#get(id);
    const wait = Math.min(Math.max(0, waitMs), this.limits.readWaitMaxMs);
    if (e.ring.unread === 0 && !e.end && wait > 0) await e.ring.arrival(wait);
    if (!e.end) {
      const note = e.running.check();
      if (note) e.notes.push(note);
    }
    const { text, dropped } = e.ring.take();
    const notes = e.notes.splice(0);
    if (e.end) this.#entries.delete(id);
    return { id, command: e.command, output: text, dropped, notes, ...(e.end ? { end: e.end } : {}) };
  }

  /** Writes to its stdin; `eof` closes it after. */
  async write(id: string, text: string | undefined, eof: boolean): Promise<void> {
    const e = this.#get(id);
    if (e.end) throw new BackgroundError(`${id} has already ended (exit code ${e.end.exitCode}); read its last output with shell_read`);
    const stdin = e.running.stdin;
    if (!stdin || stdin.writableEnded || stdin.destroyed) throw new BackgroundError(`${id}'s input is closed${stdin?.writableEnded ? " (an earlier write ended it)" : ""}`);
    if (text !== undefined && text !== "") {
      await new Promise<void>((resolve, reject) => stdin.write(text, (err) => (err ? reject(new BackgroundError(`${id} did not take the input: ${err.message}`)) : resolve())));
    }
    if (eof) stdin.end();
  }

  /** Ends it with the kill ladder; its last output and end. */
  async kill(id: string): Promise<BackgroundRead> {
    const e = this.#get(id);
    if (!e.end) {
      e.killed = true;
      e.running.stop();
      await e.running.done.catch(() => undefined);
      // `add`'s handler has run by now (it was attached first).
    }
    return this.read(id);
  }

  /** Whether `id` is a command this session runs now. */
  isRunning(id: string): boolean {
    const e = this.#entries.get(id);
    return e !== undefined && !e.end;
  }

  /** Ends every one (the session closes, the run ends); the ones that were running. */
  async stopAll(): Promise<{ id: string; command: string }[]> {
    const live = [...this.#entries.values()].filter((e) => !e.end);
    await Promise.all(live.map(async (e) => {
      e.killed = true;
      e.running.stop();
      await e.running.done.catch(() => undefined);
    }));
    this.#entries.clear();
    return live.map((e) => ({ id: e.id, command: e.command }));
  }
}

/** A read as the model reads it: the output since the last read, the cut, the notes, the end. */
export function readText(r: BackgroundRead): string {
  const lines: string[] = [];
  if (r.end) lines.push(`${r.id} ended: exit_code: ${r.end.exitCode}${r.end.signal ? ` (ended by ${r.end.signal})` : ""}${r.end.killed ? " (killed)" : ""}`);
  else lines.push(`${r.id} is running: ${r.command}`);
  if (r.dropped > 0) lines.push(`[${formatBytes(r.dropped)} of output dropped unread: only the newest is kept between reads]`);
  lines.push(r.output === "" ? "new output: (none)" : `new output:\n${r.output}${r.output.endsWith("\n") ? "" : "\n"}`);
  for (const n of r.notes) lines.push(n);
  return lines.join("\n");
}
