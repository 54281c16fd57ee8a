// Owns a shell call's live terminal as a terminal-showing client sees it (SPEC §3.3): its id, the live
// forms of the call's updates (`_meta.terminal_info`, `terminal_output` or `terminal_output_delta`,
// `terminal_exit`, `{type: "terminal"}` content) and the coalescing of its output: one update per
// flush interval at most, a bounded number of bytes in each, the tail kept when a command floods.
// Each update carries the bytes since the previous one, under either key: the client appends them
// (Zed writes `terminal_output` data to its display terminal as it comes).
// The recorded form of a call (what a reload replays) stays the text one: tool-calls.ts sends both.
// A call whose command goes on in the background keeps its terminal (`keep`): its output goes on
// streaming past the call and the turn, through the session's channel, until `end` sends its exit.
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { randomId } from "../ids.ts";
import { screenSafe } from "../terminal-controls.ts";

/** The `_meta` key the client asked for (`clientCapabilities._meta.terminal_output` or `…_delta`). */
export type TerminalKey = "terminal_output" | "terminal_output_delta";

/** How a session shows live terminals (undefined in ToolRunContext: it does not). */
export interface TerminalShow {
  key: TerminalKey;
  /** TERMINAL_FLUSH_MS. */
  flushMs: number;
  /** TERMINAL_OUTPUT_BYTES: output bytes in one update (a marker line names what was left out). */
  maxBytes: number;
  /** Sends a live update to the client, not recorded. */
  send(u: SessionUpdate): void;
  /** Records an update (the text form a reload replays) without sending it. */
  record(u: SessionUpdate): void;
  /** Sends a kept terminal's updates once its call returned (not tied to the turn: the session's channel). */
  sendLater?(u: SessionUpdate): void;
  /** A kept terminal the client may cancel (`cancel` ends its command), until `released`. */
  kept?(terminalId: string, cancel: () => void): void;
  released?(terminalId: string): void;
}

type Update = SessionUpdate & { _meta?: Record<string, unknown> | null };

/** The last `max` bytes pushed, without copying on every push; counts what fell off the front. */
class Tail {
  #chunks: Uint8Array[] = [];
  #size = 0;
  /** Bytes pushed and no longer kept. */
  dropped = 0;

  constructor(private readonly max: number) {}

  get size(): number {
    return this.#size;
  }

  push(chunk: Uint8Array): void {
    if (chunk.length >= this.max) {
      this.dropped += this.#size + chunk.length - this.max;
      this.#chunks = [chunk.subarray(chunk.length - this.max)];
      this.#size = this.max;
      return;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    while (this.#size - this.#chunks[0]!.length >= this.max) {
      const first = this.#chunks.shift()!;
      this.#size -= first.length;
      this.dropped += first.length;
    }
  }

  /** The kept bytes, at most `max` (the front of the oldest chunk cut). */
  take(): Buffer {
    const all = Buffer.concat(this.#chunks);
    const over = all.length - this.max;
    if (over > 0) {
      this.dropped += over;
      this.#chunks = [all.subarray(over)];
      this.#size = this.max;
      return all.subarray(over);
    }
    return all;
  }

  clear(): void {
    this.#chunks = [];
    this.#size = 0;
    this.dropped = 0;
  }
}

const marker = (n: number) => `[… ${n} bytes of output not shown …]\r\n`;
/** Room kept for the marker inside maxBytes. */
const MARKER_ROOM = 64;

/** Skips the UTF-8 continuation bytes a cut left at the front. */
function fromCharStart(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length && i < 4 && (b[i]! & 0xc0) === 0x80) i++;
  return b.subarray(i);
}

/** UTF-8 across chunks (a character split between two is held until whole); a BOM is output, not
 *  eaten. The Web decoder, not node:string_decoder: loading that module cost ~0.3 ms of every start. */
const streamDecoder = () => new TextDecoder("utf-8", { ignoreBOM: true });

/** One shell call's terminal. */
export class LiveTerminal {
  readonly id = `term-${randomId()}`;
  readonly #pending: Tail;
  #decoder = streamDecoder();
  /** What reaches the editor's terminal: colours and cursor moves, never a clipboard write, link or title. */
  #screen = screenSafe();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #last = -Infinity;
  #fresh = false;
  #closed = false;
  /** The call returned with its command still running: updates go through `sendLater`. */
  #kept = false;
  /** The command's end, when it came before the call's result was handled. */
  #ended: { code: number; signal: string | null } | undefined;

  constructor(
    private readonly toolCallId: string,
    private readonly show: TerminalShow,
    private readonly cwd: string,
  ) {
    const room = Math.max(1, show.maxBytes - MARKER_ROOM);
    this.#pending = new Tail(room);
  }

  /** The call's live `tool_call`: the terminal announced and shown as its content. */
  start(plain: SessionUpdate): SessionUpdate {
    const u = plain as Update;
    return { ...u, content: [{ type: "terminal", terminalId: this.id }], _meta: { ...u._meta, terminal_info: { terminal_id: this.id, cwd: this.cwd } } } as SessionUpdate;
  }

  /** Output as it arrives (McpCallOptions.onOutput). */
  readonly push = (chunk: Uint8Array): void => {
    if (this.#closed || chunk.length === 0) return;
    this.#pending.push(chunk);
    this.#fresh = true;
    if (this.#timer === undefined) this.#timer = setTimeout(this.#flush, Math.max(0, this.#last + this.show.flushMs - Date.now()));
  };

  readonly #flush = (): void => {
    this.#timer = undefined;
    if (!this.#fresh || this.#closed) return;
    this.#fresh = false;
    this.#last = Date.now();
    this.#send({ sessionUpdate: "tool_call_update", toolCallId: this.toolCallId, _meta: { [this.show.key]: { terminal_id: this.id, data: this.#data() } } });
  };

  #send(u: SessionUpdate): void {
    if (this.#kept && this.show.sendLater) this.show.sendLater(u);
    else this.show.send(u);
  }

  /** Whether the session can keep a terminal past its call (a background command's). */
  get keepable(): boolean {
    return this.show.sendLater !== undefined;
  }

  /**
   * The call returned with its command running on (a background command): its live last update says
   * so (`_meta.terminal_background`) and its output goes on streaming until `end`. `cancel` ends the
   * command (a client's terminal cancel). A command that already ended is finished at once instead.
   */
  keep(plain: SessionUpdate, cancel: () => void): SessionUpdate {
    if (this.#ended) return this.finish(plain, this.#ended);
    this.#kept = true;
    this.show.kept?.(this.id, cancel);
    const u = plain as Update;
    return { ...u, content: [{ type: "terminal", terminalId: this.id }], _meta: { ...u._meta, terminal_background: { terminal_id: this.id } } } as SessionUpdate;
  }

  /** A kept command ended: its last output, then its exit, through the session's channel. */
  readonly end = (exit: { code: number; signal: string | null }): void => {
    if (!this.#kept) {
      this.#ended = exit;
      return;
    }
    if (this.#closed) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#flush();
    this.#closed = true;
    this.show.released?.(this.id);
    this.#send({ sessionUpdate: "tool_call_update", toolCallId: this.toolCallId, _meta: { terminal_exit: { terminal_id: this.id, exit_code: exit.code, signal: exit.signal } } } as SessionUpdate);
  };

  /** The bytes since the last update as text (a character split across updates is kept whole). */
  #data(): string {
    const bytes = this.#pending.take();
    const dropped = this.#pending.dropped;
    this.#pending.clear();
    if (dropped === 0) return this.#screen.push(this.#decoder.decode(bytes, { stream: true }));
    // A cut: what the decoder and the filter held belongs to bytes no longer shown.
    this.#decoder = streamDecoder();
    this.#screen = screenSafe();
    return `\r\n${marker(dropped)}${this.#screen.push(this.#decoder.decode(fromCharStart(bytes), { stream: true }))}`;
  }

  /** The command ended (or never ran): sends what output is still pending, stops the timer, and
   *  gives the call's live last update: the terminal with `terminal_exit`, or — when it never ran —
   *  the text the plain update carries. */
  finish(plain: SessionUpdate, exit: { code: number | null; signal: string | null }): SessionUpdate {
    const exitCode = exit.code;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.#closed) this.#flush();
    this.#closed = true;
    const u = plain as Update;
    const content = exitCode === null ? (u as { content?: unknown }).content : [{ type: "terminal", terminalId: this.id }];
    return { ...u, ...(content !== undefined ? { content } : {}), _meta: { ...u._meta, terminal_exit: { terminal_id: this.id, exit_code: exitCode, signal: exit.signal } } } as SessionUpdate;
  }
}
