// Owns the stdio link to one MCP server: a detached child leading its own process group, ND-JSON both
// ways under MAX_LINE_BYTES, stderr forwarded to the log, and a close that kills the whole group
// (spawning, the registry and the kill ladder belong to core/process-group.ts).
// Does not speak MCP (the SDK client on top does) and does not read process.env (the caller passes it).
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { log as defaultLog } from "../log.ts";
import { killGroup, spawnGroup } from "../process-group.ts";
import { StderrTail } from "../stderr-tail.ts";

export { childEnv } from "../child-env.ts";
import { classifyMessage } from "../wire/jsonrpc.ts";
import { readLines } from "../wire/ndjson.ts";
import { LineWriter, nodeSink } from "../wire/writer.ts";

export interface StdioServerParams {
  /** Server label, used in every log line and error. */
  name: string;
  command: string;
  args?: string[];
  /** The child's whole environment (build it with `childEnv`). */
  env: Record<string, string>;
  cwd?: string;
  /** Run once the server's group is gone (a sandboxed start's temp dir and proxy). */
  cleanup?: () => Promise<void>;
  maxLineBytes: number;
  log?: Pick<typeof defaultLog, "warn" | "info" | "debug">;
}

const STDERR_TAIL_BYTES = 4096;
const STDERR_TAIL_LINES = 8;
const NOISE_LOG_LINES = 5;

export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  #child?: ChildProcessWithoutNullStreams;
  #writer?: LineWriter;
  #closing?: Promise<void>;
  // Each line goes to the log; the last few explain a failure.
  readonly #stderr = new StderrTail(STDERR_TAIL_BYTES, (line) => {
    if (line.trim() !== "") this.#log.info("MCP server stderr", { server: this.params.name, line });
  });
  #noiseLines = 0;

  readonly #log: NonNullable<StdioServerParams["log"]>;

  constructor(private readonly params: StdioServerParams) {
    this.#log = params.log ?? defaultLog;
  }

  /** The server's pid (= its process group id) once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The last few stderr lines, for error messages that explain why a server failed. */
  stderrTail(): string[] {
    return this.#stderr.lines().filter((l) => l.trim() !== "").slice(-STDERR_TAIL_LINES);
  }

  async start(): Promise<void> {
    if (this.#child) throw new Error(`MCP server ${this.params.name}: transport already started`);
    const { name, command, args = [], env, cwd } = this.params;
    const child = spawnGroup({ label: `MCP server ${name}`, command, args, env, cwd, stdin: "pipe" }) as ChildProcessWithoutNullStreams;
    this.#child = child;
    child.on("error", (err) => this.#log.warn("MCP server process error", { server: name, err }));
    child.stdin.on("error", (err) => this.#log.debug("MCP server stdin closed", { server: name, err }));
    this.#writer = new LineWriter(nodeSink(child.stdin));
    const stdoutDone = this.#readStdout(child);
    this.#readStderr(child);
    child.once("exit", (code, signal) => void this.#onExit(code, signal, stdoutDone));
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!this.#writer || this.#closing) {
      return Promise.reject(new Error(`MCP server ${this.params.name} is not running`));
    }
    return this.#writer.send(message);
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    const child = this.#child;
    if (child?.pid !== undefined) {
      try {
        child.stdin.end();
      } catch {
        // stdin already gone: the group kill below still applies
      }
      await killGroup(child.pid);
      child.stdout.destroy();
      child.stderr.destroy();
    }
    await this.params.cleanup?.().catch((err: unknown) => this.#log.debug("MCP server cleanup failed", { server: this.params.name, err }));
    this.onclose?.();
  }

  async #onExit(code: number | null, signal: NodeJS.Signals | null, stdoutDone: Promise<void>): Promise<void> {
    if (this.#closing) return;
    // The last answer may still sit in the pipe; a grandchild holding it open must not stall us, hence the race.
    await Promise.race([stdoutDone, new Promise((r) => setTimeout(r, 100))]);
    if (this.#closing) return;
    this.#log.warn("MCP server exited", { server: this.params.name, code, signal, stderr: this.stderrTail().at(-1) });
    await this.close();
  }

  async #readStdout(child: ChildProcessWithoutNullStreams): Promise<void> {
    const { name, maxLineBytes } = this.params;
    try {
      for await (const ev of readLines(child.stdout, maxLineBytes)) {
        if (ev.type === "oversize") {
          const why = `MCP server ${name} sent a message over ${maxLineBytes} bytes (MAX_LINE_BYTES); closing it`;
          this.onerror?.(new Error(why));
          this.#log.warn("MCP server message too large; closing it", { server: name, limit: maxLineBytes });
          void this.close();
          return;
        }
        this.#deliver(ev.text);
      }
    } catch (err) {
      if (!this.#closing) this.onerror?.(new Error(`MCP server ${name}: reading stdout failed: ${String(err)}`));
    }
  }

  #deliver(text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.#noise(text);
      return;
    }
    const c = classifyMessage(value);
    if (c.kind === "malformed") {
      this.#noise(text);
      return;
    }
    try {
      this.onmessage?.(value as JSONRPCMessage);
    } catch (err) {
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Non-protocol stdout lines are skipped, not fatal: many servers print a banner. Logged a few times only. */
  #noise(text: string): void {
    if (this.#noiseLines++ >= NOISE_LOG_LINES) return;
    const last = this.#noiseLines === NOISE_LOG_LINES ? " (further ones not logged)" : "";
    this.#log.warn(`MCP server wrote a non-JSON-RPC line to stdout; skipped${last}`, {
      server: this.params.name,
      line: text.slice(0, 200),
    });
  }

  #readStderr(child: ChildProcessWithoutNullStreams): void {
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => this.#stderr.push(chunk));
    child.stderr.on("end", () => this.#stderr.end());
    child.stderr.on("error", () => {});
  }
}
