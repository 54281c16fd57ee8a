// Owns the protocol modes' stdin and stdout as byte streams. Under Bun they are its native file
// readers and writers: Node's stream classes cost ~10 ms to load, more than the rest of a start-up.
// Elsewhere (deno run main.ts) they are process.stdin/stdout through the wire adapters. Also the
// whole-descriptor reads and writes of the quick paths (`--version`, the rg and tree shims), and the
// text output of `tendril prompt` (stdout, stderr and whether each is a terminal) without Node's streams.
// Does not frame lines or own the writer's order (core/wire/).
import { readSync, writeSync } from "node:fs";
import { chunksOf } from "../../core/wire/link.ts";
import { type ByteSink, nodeSink } from "../../core/wire/writer.ts";

interface BunFileSink {
  write(chunk: Uint8Array | string): number;
  flush(): number | Promise<number>;
}

interface BunStdio {
  stdin: { stream(): ReadableStream<Uint8Array> };
  stdout: { writer(): BunFileSink };
  stderr: { writer(): BunFileSink };
}

const bun = (globalThis as { Bun?: BunStdio }).Bun;

/** stdin as chunks, in order, ending at EOF. */
export function stdinChunks(): AsyncIterable<Uint8Array> {
  return bun ? bun.stdin.stream() : chunksOf(process.stdin);
}

/**
 * stdout as a sink that respects backpressure: a write resolves once the bytes are handed to the
 * kernel or buffered within the writer's bound, and rejects when the reader is gone (EPIPE), which
 * `onBroken` also hears (once).
 */
export function stdoutSink(onBroken: (err: Error) => void = () => {}): ByteSink {
  let told = false;
  const tell = (err: unknown): void => {
    if (!told) (told = true), onBroken(err instanceof Error ? err : new Error(String(err)));
  };
  const broken = (err: unknown): never => {
    tell(err);
    throw err;
  };
  if (!bun) {
    process.stdout.on("error", tell);
    const sink = nodeSink(process.stdout);
    return { write: (chunk) => sink.write(chunk).catch(broken) };
  }
  const w = bun.stdout.writer();
  return {
    write(chunk) {
      try {
        w.write(chunk);
        const flushed = w.flush();
        return typeof flushed === "number" ? Promise.resolve() : flushed.then(() => undefined, broken);
      } catch (err) {
        return Promise.reject(err).catch(broken);
      }
    },
  };
}

/** Text written to stdout or stderr in order; `drained` resolves once everything written so far is out. */
export interface TextOut {
  write(text: string): void;
  drained(): Promise<void>;
}

/**
 * stdout (1) or stderr (2) for text, without Node's streams (process.stdout/stderr cost ~9 ms to
 * start, a quarter of a one-line `tendril prompt`). Writes never block the event loop; once the reader
 * is gone (EPIPE) further text is dropped, as nobody can read it.
 */
export function textOut(fd: 1 | 2): TextOut {
  if (!bun) {
    const stream = fd === 1 ? process.stdout : process.stderr;
    stream.on("error", () => {});
    return { write: (text) => void stream.write(text), drained: () => new Promise((done) => stream.write("", () => done())) };
  }
  const w = fd === 1 ? bun.stdout.writer() : bun.stderr.writer();
  let broken = false;
  // Each text is handed over once the one before it is out: a flush that is still pending when the
  // next text comes would otherwise not cover it.
  let last: Promise<void> = Promise.resolve();
  const put = async (text: string): Promise<void> => {
    if (broken) return;
    try {
      w.write(text);
      await w.flush();
    } catch {
      broken = true;
    }
  };
  return {
    write(text) {
      last = last.then(() => put(text));
    },
    drained: () => last,
  };
}

interface TtyBinding {
  isTTY(fd: number): boolean;
}

/** Whether a descriptor is a terminal. Under Bun through its own check (node:tty costs ~8 ms to load). */
export function isTerminal(fd: 0 | 1 | 2): boolean {
  const binding = (process as { binding?: (name: string) => unknown }).binding;
  if (bun && binding) {
    const tty = binding("tty_wrap") as Partial<TtyBinding> | undefined;
    if (typeof tty?.isTTY === "function") return tty.isTTY(fd);
  }
  return (fd === 0 ? process.stdin : fd === 1 ? process.stdout : process.stderr).isTTY === true;
}

/** What a descriptor that is not ready waits, a millisecond at a time, as a blocking call would. */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * A descriptor's bytes to its end, at most `max`, read straight from it: starting process.stdin's
 * stream costs ~7 ms, more than a small search (`cmd | rg x`). A non-blocking pipe with nothing in it
 * yet is waited on a millisecond at a time.
 */
export function readAll(fd: number, max: number): Buffer {
  const parts: Buffer[] = [];
  let n = 0;
  const chunk = Buffer.allocUnsafe(64 * 1024);
  while (n <= max) {
    let got: number;
    try {
      got = readSync(fd, chunk, 0, chunk.length, null);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
      Atomics.wait(PAUSE, 0, 0, 1);
      continue;
    }
    if (got === 0) break;
    parts.push(Buffer.from(chunk.subarray(0, got)));
    n += got;
  }
  return Buffer.concat(parts).subarray(0, max);
}

/**
 * Writes text to a descriptor at once, without starting Node's streams (they cost more than a small
 * `rg` search): a full non-blocking pipe is waited on a millisecond at a time, as a blocking write
 * would wait. False when the reader is gone (a closed pipe: `rg x | head -1`).
 */
export function writeAll(fd: number, text: string): boolean {
  const buf = Buffer.from(text);
  for (let at = 0; at < buf.length; ) {
    try {
      at += writeSync(fd, buf, at, buf.length - at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN") return false;
      Atomics.wait(PAUSE, 0, 0, 1);
    }
  }
  return true;
}
