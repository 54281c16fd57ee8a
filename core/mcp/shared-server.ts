// Owns the life of one running MCP server that sessions share: start, death noticed, restart on next use
// with backoff (MCP_BACKOFF_FIRST_S doubling to MCP_BACKOFF_MAX_S, ±20% jitter, at most MCP_RESTART_TRIES), then "gone" with its tools
// withdrawn (each of these reported to its watchers); refcount and the idle timer the pool drives.
// Calls never throw.
// Does not decide who shares it (pool.ts) or how tools are named (catalog.ts).
import { errorResult, type RawTool } from "./call-result.ts";
// The MCP client SDK loads with the first external server a session declares, not with the agent.
import type { ConnectOptions, McpConnection } from "./client.ts";
import {
  McpLinkLost,
  type McpServerEvent,
  type McpCallOptions,
  type McpCallResult,
  type McpElicitAnswer,
  type McpElicitation,
  type McpPromptInfo,
  type McpPromptMessage,
  type McpServerSpec,
} from "./types.ts";
import type { Limits } from "../limits.ts";

const JITTER = 0.2;

export type ServerState = "starting" | "live" | "dead" | "gone";

/** Delay before restart attempt n (0 = immediately after the death is noticed). */
export function backoffMs(
  attempt: number,
  limits: Pick<Limits, "MCP_BACKOFF_FIRST_S" | "MCP_BACKOFF_MAX_S">,
  random: () => number = Math.random,
): number {
  if (attempt <= 0) return 0;
  const base = Math.min(limits.MCP_BACKOFF_MAX_S, limits.MCP_BACKOFF_FIRST_S * 2 ** (attempt - 1)) * 1000;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

function wait(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves like `promise`, or false as soon as `signal` aborts (the promise keeps running). */
function untilAborted(promise: Promise<boolean>, signal?: AbortSignal): Promise<boolean> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => resolve(false);
    signal.addEventListener("abort", onAbort, { once: true });
    void promise.then((ok) => {
      signal.removeEventListener("abort", onAbort);
      resolve(ok);
    });
  });
}

export class SharedServer {
  state: ServerState = "starting";
  refs = 0;
  idleTimer?: ReturnType<typeof setTimeout>;
  readonly ready: Promise<void>;

  #conn?: McpConnection;
  #attempts = 0;
  #restarting?: Promise<boolean>;
  #goneReason = "";
  #stopped = false;
  readonly #listeners = new Set<() => void>();
  readonly #promptListeners = new Set<() => void>();
  readonly #watchers = new Set<(e: Omit<McpServerEvent, "server">) => void>();
  /** Question answerers of the calls running now, oldest first. */
  readonly #askers: NonNullable<McpCallOptions["onElicit"]>[] = [];

  constructor(
    readonly spec: McpServerSpec,
    private readonly opts: Omit<ConnectOptions, "onToolsChanged" | "onPromptsChanged" | "onLost" | "onElicit">,
  ) {
    this.ready = this.#connect().then(() => {
      if (!this.#stopped) this.state = "live";
    });
  }

  get label(): string {
    return this.spec.name;
  }

  get pid(): number | undefined {
    return this.#conn?.pid;
  }

  tools(): RawTool[] {
    return this.state === "gone" || !this.#conn ? [] : this.#conn.tools();
  }

  instructions(): string | undefined {
    return this.#conn?.instructions;
  }

  prompts(): McpPromptInfo[] {
    return this.state === "gone" || !this.#conn ? [] : this.#conn.prompts();
  }

  /** Registers a prompts-changed listener (also fired on a restart and when the server is gone); returns its remover. */
  subscribePrompts(listener: () => void): () => void {
    this.#promptListeners.add(listener);
    return () => this.#promptListeners.delete(listener);
  }

  /** prompts/get, restarting a dead server first as a call would; rejects with an Error naming the cause. */
  async getPrompt(name: string, args: Record<string, string>, opts: { signal?: AbortSignal; timeoutMs: number; label?: string }): Promise<McpPromptMessage[]> {
    const label = opts.label ?? this.label;
    if (this.state === "dead" && !(await untilAborted(this.#restart(), opts.signal))) {
      throw new Error(opts.signal?.aborted ? "cancelled" : `MCP server ${label} is gone (${this.#goneReason})`);
    }
    const conn = this.#conn;
    if (this.state !== "live" || !conn) throw new Error(`MCP server ${label} is gone (${this.#goneReason || "stopped"})`);
    try {
      return await conn.getPrompt(name, args, opts);
    } catch (err) {
      if (!(err instanceof McpLinkLost)) throw err;
      this.#markDead(conn, err.message);
      throw new Error(`MCP server ${label} stopped (${err.message}); it restarts on next use`);
    }
  }

  /** Registers a tools-changed listener (also fired when the tools are withdrawn); returns its remover. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Registers a listener for this server's deaths, restarts and withdrawal; returns its remover. */
  watch(listener: (e: Omit<McpServerEvent, "server">) => void): () => void {
    this.#watchers.add(listener);
    return () => this.#watchers.delete(listener);
  }

  #tell(kind: McpServerEvent["kind"], detail: string): void {
    for (const w of this.#watchers) {
      try {
        w({ kind, detail });
      } catch (err) {
        this.opts.log?.warn("MCP server event listener failed", { err });
      }
    }
  }

  /** `opts.label` is the caller's name for this server (sessions sharing it may name it differently). */
  async call(
    tool: string,
    args: Record<string, unknown>,
    opts: { signal?: AbortSignal; timeoutMs: number; label?: string; onProgress?: McpCallOptions["onProgress"]; onElicit?: McpCallOptions["onElicit"] },
  ): Promise<McpCallResult> {
    const label = opts.label ?? this.label;
    if (opts.onElicit) this.#askers.push(opts.onElicit);
    try {
      return await this.#call(tool, args, opts, label);
    } finally {
      if (opts.onElicit) this.#askers.splice(this.#askers.lastIndexOf(opts.onElicit), 1);
    }
  }

  /**
   * A question the server asks (elicitation) goes to the newest call still running on it: a shared
   * server's question belongs to whoever is waiting on it. None running → declined.
   */
  #elicit = (e: McpElicitation): Promise<McpElicitAnswer> => {
    const asker = this.#askers.at(-1);
    return asker ? asker(e) : Promise.resolve({ action: "decline" });
  };

  async #call(
    tool: string,
    args: Record<string, unknown>,
    opts: { signal?: AbortSignal; timeoutMs: number; onProgress?: McpCallOptions["onProgress"] },
    label: string,
  ): Promise<McpCallResult> {
    if (this.state === "dead") {
      // The restart is shared by concurrent callers; one caller's cancel must not stop it for the others.
      const ok = await untilAborted(this.#restart(), opts.signal);
      if (opts.signal?.aborted) return errorResult("cancelled");
      if (!ok) return this.#goneResult(label);
    }
    const conn = this.#conn;
    if (this.state !== "live" || !conn) return this.#goneResult(label);
    try {
      const result = await conn.call(tool, args, { signal: opts.signal, timeoutMs: opts.timeoutMs, onProgress: opts.onProgress });
      this.#attempts = 0;
      return result;
    } catch (err) {
      const why = err instanceof McpLinkLost ? err.message : String(err);
      this.#markDead(conn, why);
      return errorResult(`MCP server ${label} stopped during this call (${why}); it restarts on next use`);
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.state = "gone";
    if (this.idleTimer) clearTimeout(this.idleTimer);
    await this.#conn?.close();
  }

  async #connect(): Promise<void> {
    let conn: McpConnection | undefined;
    const { connectMcpServer } = await import("./client.ts");
    conn = await connectMcpServer(this.spec, {
      ...this.opts,
      onToolsChanged: () => this.#notify(),
      onPromptsChanged: () => this.#notifyPrompts(),
      onLost: () => this.#markDead(conn),
      onElicit: this.#elicit,
    });
    this.#conn = conn;
    if (this.#stopped) await conn.close();
  }

  #notify(): void {
    for (const listener of this.#listeners) listener();
  }

  #notifyPrompts(): void {
    for (const listener of this.#promptListeners) listener();
  }

  #markDead(conn: McpConnection | undefined, why?: string): void {
    if (this.#conn !== conn || this.state !== "live" || this.#stopped) return;
    this.state = "dead";
    this.opts.log?.warn("MCP server died; it restarts on next use", { server: this.label, pid: conn?.pid, why });
    void conn?.close();
    this.#tell("died", `${why ?? "its connection was lost"}; it restarts on next use`);
  }

  #restart(): Promise<boolean> {
    this.#restarting ??= this.#restartLoop().finally(() => {
      this.#restarting = undefined;
    });
    return this.#restarting;
  }

  async #restartLoop(): Promise<boolean> {
    let lastError = "";
    while (this.#attempts < this.opts.limits.MCP_RESTART_TRIES && !this.#stopped) {
      await wait(backoffMs(this.#attempts, this.opts.limits));
      this.#attempts++;
      try {
        await this.#connect();
        if (this.#stopped) return false;
        this.state = "live";
        this.opts.log?.info("MCP server restarted", { server: this.label, attempt: this.#attempts, pid: this.pid });
        this.#notify();
        this.#notifyPrompts();
        this.#tell("restarted", `restart attempt ${this.#attempts} of ${this.opts.limits.MCP_RESTART_TRIES} succeeded`);
        return true;
      } catch (err) {
        lastError = err instanceof Error ? err.message : String(err);
      }
    }
    if (this.#stopped) return false;
    this.state = "gone";
    this.#goneReason = lastError || "it kept stopping";
    this.opts.log?.warn("MCP server gone after restart attempts; its tools are withdrawn", {
      server: this.label,
      tries: this.opts.limits.MCP_RESTART_TRIES,
      err: lastError,
    });
    this.#notify();
    this.#notifyPrompts();
    this.#tell("gone", `restarted ${this.opts.limits.MCP_RESTART_TRIES} times without success (${this.#goneReason}); its tools are withdrawn`);
    return false;
  }

  #goneResult(label: string): McpCallResult {
    return errorResult(
      `MCP server ${label} is gone (restarted ${this.opts.limits.MCP_RESTART_TRIES} times without success: ${this.#goneReason}); ` +
        `its tools are withdrawn for the rest of this session`,
    );
  }
}
