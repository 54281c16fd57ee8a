// Owns the raw-wire test harness: spawn `dist/tendril agent` (or another stdio mode), write exact bytes/lines to its stdin, read
// whole stdout lines back with timeouts, and observe its exit. For malformed-input and framing tests,
// where a well-behaved SDK client cannot produce the input. Not a product module.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { BIN } from "./binary.ts";

export interface RawAgent {
  readonly child: ChildProcessWithoutNullStreams;
  /** Writes one line (a newline is appended) or raw bytes as given. */
  writeLine(line: string | object): void;
  writeRaw(data: string | Uint8Array): void;
  /** The next stdout line parsed as JSON; rejects after `timeoutMs`. */
  nextMessage(timeoutMs?: number): Promise<any>;
  /** Reads messages until one has this id (others are kept in `seen`). */
  response(id: number | string, timeoutMs?: number): Promise<any>;
  readonly seen: any[];
  stderr(): string;
  /** Resolves with the exit code (or signal name) within `timeoutMs`, else rejects. */
  exited(timeoutMs?: number): Promise<number | string>;
  kill(): void;
}

export function spawnRawAgent(env: Record<string, string> = {}, args: string[] = []): RawAgent {
  return spawnRawMode("agent", env, args);
}

/** The same harness around any stdio protocol mode (`dev-mcp`, …). */
export function spawnRawMode(mode: string, env: Record<string, string> = {}, args: string[] = []): RawAgent {
  const child = spawn(BIN, [mode, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ANTHROPIC_API_KEY: "test-key", ...env },
  });
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  let buf = "";
  let err = "";
  let exit: number | string | undefined;
  const exitWaiters: (() => void)[] = [];
  const seen: any[] = [];
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      lines.push(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
    waiters.splice(0).forEach((w) => w());
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => void (err = (err + chunk).slice(-20000)));
  child.stdin.on("error", () => {});
  child.on("exit", (code, signal) => {
    exit = code ?? signal ?? "unknown";
    exitWaiters.splice(0).forEach((w) => w());
    waiters.splice(0).forEach((w) => w());
  });

  async function nextMessage(timeoutMs = 5000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    while (lines.length === 0) {
      if (exit !== undefined) throw new Error(`agent exited (${exit}) before a message; stderr: ${err}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no message within ${timeoutMs} ms; stderr: ${err}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        waiters.push(() => (clearTimeout(t), resolve()));
      });
    }
    return JSON.parse(lines.shift()!);
  }

  return {
    child,
    seen,
    writeLine: (line) => void child.stdin.write((typeof line === "string" ? line : JSON.stringify(line)) + "\n"),
    writeRaw: (data) => void child.stdin.write(data),
    nextMessage,
    async response(id, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = await nextMessage(Math.max(1, deadline - Date.now()));
        if (m.id === id && (m.result !== undefined || m.error !== undefined)) return m;
        seen.push(m);
      }
    },
    stderr: () => err,
    exited(timeoutMs = 5000) {
      if (exit !== undefined) return Promise.resolve(exit);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`agent still running after ${timeoutMs} ms`)), timeoutMs);
        exitWaiters.push(() => (clearTimeout(t), resolve(exit!)));
      });
    },
    kill: () => void (exit === undefined && child.kill("SIGKILL")),
  };
}
