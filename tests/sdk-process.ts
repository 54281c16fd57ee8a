// Owns what every test that drives an agent with the SDK's own client app shares: the agent process
// (spawned with a plain environment, stdin errors ignored), its stdio as the app's stream, and its
// close (stdin ended, the exit awaited, SIGKILL after a bound, the connection closed). Each test keeps
// its own handlers. Test-only.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { BIN } from "./binary.ts";

export interface AgentProcess {
  child: ChildProcessWithoutNullStreams;
  /** The agent's stdio as an ACP stream (`builder.connect(stream)`). */
  stream: ReturnType<typeof acp.ndJsonStream>;
  exited: Promise<number | string>;
  /** Ends stdin, waits for the exit (SIGKILL after `timeoutMs`), closes `conn`; the exit code or signal. */
  close(conn: { close(): void }, timeoutMs?: number): Promise<number | string>;
}

/** Starts `command args` (default `tendril agent`) with PATH, HOME and `env`; stderr is drained unless `keepStderr`. */
export function agentProcess(opts: { args?: string[]; env?: Record<string, string>; home?: string; command?: string; keepStderr?: boolean } = {}): AgentProcess {
  const child = spawn(opts.command ?? BIN, opts.args ?? ["agent"], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: opts.home ?? process.env.HOME ?? "/tmp", ...opts.env },
  });
  if (!opts.keepStderr) child.stderr.resume();
  child.stdin.on("error", () => {});
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, sig) => resolve(code ?? sig ?? "?")));
  return {
    child,
    stream: acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>),
    exited,
    async close(conn, timeoutMs = 5000) {
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      conn.close();
      return code;
    },
  };
}
