// Owns the MCP client pool: which running server a session's declaration maps to (structural
// fingerprint, refcounted; `private` never shared), parallel start, idle stop after MCP_IDLE_S, and the
// per-session tool namespace with calls that never throw, and its prompts (listed, fetched, changes heard).
// Does not spawn or speak MCP itself (shared-server.ts, client.ts, stdio-transport.ts do).
import { LimitError, type Limits } from "../limits.ts";
import { log as defaultLog } from "../log.ts";
import { errorResult } from "./call-result.ts";
import { buildCatalog, type Catalog } from "./catalog.ts";
import type { McpLog } from "./types.ts";
import type { AcpMcpRelay } from "./acp-transport.ts";
import { fingerprint } from "./fingerprint.ts";
import { SharedServer } from "./shared-server.ts";
import { LocalServer } from "./local-server.ts";

/** A server a session's tools come from: an MCP server (a process or an endpoint) or one in process. */
type PoolServer = SharedServer | LocalServer;
import {
  McpStartError,
  type McpCallOptions,
  type McpCallResult,
  type McpPool,
  type McpPromptInfo,
  type McpPromptMessage,
  type McpServerEvent,
  type McpServerSpec,
  type McpSessionTools,
  type McpToolInfo,
  type StdioConfine,
} from "./types.ts";

export interface McpPoolOptions {
  limits: Limits;
  /** The parent process env: stdio servers inherit only its whitelisted part. */
  env: Readonly<Record<string, string | undefined>>;
  log?: McpLog;
  /** Carries `acp` (MCP-over-ACP) servers over the agent's ACP connection. */
  acpRelay?: AcpMcpRelay;
  /** Starts `sandbox = …` stdio servers through the sandbox of shell commands (cli/ passes it in). */
  confine?: StdioConfine;
}

export function createMcpPool(opts: McpPoolOptions): McpPool {
  return new Pool(opts);
}

function checkSpec(spec: McpServerSpec): void {
  if (spec.transport === "local") {
    if (!spec.local) throw new McpStartError(spec.name, "a local server needs a factory");
    return;
  }
  if (spec.transport === "stdio" && !spec.command) throw new McpStartError(spec.name, "a stdio server needs a command");
  if (spec.transport !== "stdio" && !spec.url) throw new McpStartError(spec.name, `an ${spec.transport} server needs a url`);
  if (!["stdio", "http", "sse", "acp"].includes(spec.transport)) {
    throw new McpStartError(spec.name, `unknown transport ${JSON.stringify(spec.transport)} (use stdio, http, sse or acp)`);
  }
}

/** The start error under this session's name for the server (a shared start may have begun under another). */
function renamed(err: unknown, name: string): McpStartError {
  if (err instanceof McpStartError) {
    if (err.server === name) return err;
    return new McpStartError(name, err.message.slice(`MCP server ${err.server}: `.length));
  }
  return new McpStartError(name, err instanceof Error ? err.message : String(err));
}

class Pool implements McpPool {
  readonly #servers = new Map<string, PoolServer>();
  readonly #log: McpLog;
  #privateCount = 0;
  #closed = false;

  constructor(private readonly opts: McpPoolOptions) {
    this.#log = opts.log ?? defaultLog;
  }

  async openTools(specs: McpServerSpec[], { cwd }: { cwd: string }): Promise<McpSessionTools> {
    if (this.#closed) throw new Error("the MCP pool is closed");
    const max = this.opts.limits.MAX_MCP_SERVERS;
    if (specs.length > max) {
      throw new LimitError(
        `a session may declare at most ${max} MCP servers (MAX_MCP_SERVERS), got ${specs.length}; ` +
          `drop some or raise TENDRIL_MAX_MCP_SERVERS`,
      );
    }
    const settled = await Promise.allSettled(specs.map((spec) => this.#acquire(spec, cwd)));
    const failure = settled.find((s) => s.status === "rejected");
    if (failure) {
      await Promise.all(settled.map((s) => (s.status === "fulfilled" ? this.#release(s.value.server, s.value.created) : null)));
      throw failure.reason;
    }
    const servers = settled.map((s) => (s as PromiseFulfilledResult<Acquired>).value.server);
    return new Session(specs, servers, this.opts.limits, this.#log, (server) => this.#release(server, false));
  }

  async closeAll(): Promise<void> {
    this.#closed = true;
    const all = [...this.#servers.values()];
    this.#servers.clear();
    await Promise.all(all.map((s) => s.stop()));
  }

  async #acquire(spec: McpServerSpec, cwd: string): Promise<Acquired> {
    checkSpec(spec);
    const key = spec.private || spec.transport === "local" ? `private:${this.#privateCount++}` : fingerprint(spec, cwd);
    let server = this.#servers.get(key);
    const created = !server || server.state === "gone";
    if (created) {
      server =
        spec.transport === "local"
          ? new LocalServer(spec)
          : new SharedServer(spec, { cwd, limits: this.opts.limits, parentEnv: this.opts.env, log: this.#log, acpRelay: this.opts.acpRelay, confine: this.opts.confine });
      this.#servers.set(key, server);
    }
    const s = server!;
    s.refs++;
    if (s.idleTimer) clearTimeout(s.idleTimer);
    s.idleTimer = undefined;
    try {
      await s.ready;
    } catch (err) {
      s.refs--;
      if (this.#servers.get(key) === s) this.#servers.delete(key);
      throw renamed(err, spec.name);
    }
    return { server: s, created, key };
  }

  /** Drops one reference; a private or just-started-then-abandoned server stops now, a shared one after MCP_IDLE_S. */
  async #release(server: PoolServer, stopNow: boolean): Promise<void> {
    server.refs--;
    if (server.refs > 0) return;
    const key = [...this.#servers].find(([, s]) => s === server)?.[0];
    const stop = async () => {
      if (server.refs > 0) return;
      if (key !== undefined && this.#servers.get(key) === server) this.#servers.delete(key);
      await server.stop();
    };
    if (stopNow || server.spec.private || server.state === "gone") return stop();
    server.idleTimer = setTimeout(() => {
      this.#log.info("MCP server idle; stopping it", { server: server.label, idle_s: this.opts.limits.MCP_IDLE_S });
      void stop();
    }, this.opts.limits.MCP_IDLE_S * 1000);
    server.idleTimer.unref?.();
  }
}

interface Acquired {
  server: PoolServer;
  created: boolean;
  key: string;
}

class Session implements McpSessionTools {
  #catalog?: Catalog;
  #closed = false;
  readonly #withdrawn = new Map<string, string>();
  readonly #warned = new Set<string>();
  readonly #listeners = new Set<() => void>();
  readonly #promptListeners = new Set<() => void>();
  readonly #watchers = new Set<(e: McpServerEvent) => void>();
  readonly #unsubscribe: (() => void)[];

  constructor(
    private readonly specs: McpServerSpec[],
    private readonly servers: PoolServer[],
    private readonly limits: Limits,
    private readonly log: McpLog,
    private readonly release: (server: PoolServer) => Promise<void>,
  ) {
    this.#unsubscribe = servers.map((s) => s.subscribe(() => this.#changed()));
    servers.forEach((s, i) => {
      if (s instanceof SharedServer) {
        this.#unsubscribe.push(s.watch((e) => this.#event({ server: this.specs[i]!.name, ...e })));
        this.#unsubscribe.push(s.subscribePrompts(() => this.#promptsChanged()));
      }
    });
  }

  tools(): McpToolInfo[] {
    return this.#current().infos;
  }

  async call(qualifiedName: string, args: Record<string, unknown>, opts: McpCallOptions = {}): Promise<McpCallResult> {
    if (this.#closed) return errorResult(`unknown tool: ${qualifiedName} (this session's MCP servers are closed)`);
    const route = this.#current().routes.get(qualifiedName);
    if (!route) {
      const gone = this.#withdrawn.get(qualifiedName);
      return errorResult(gone ? `MCP server ${gone} is gone; its tools are withdrawn` : `unknown tool: ${qualifiedName}`);
    }
    const timeoutMs = opts.timeoutMs ?? this.limits.TOOL_TIMEOUT_S * 1000;
    try {
      const label = this.specs[route.slot]!.name;
      return await this.servers[route.slot]!.call(route.tool, args ?? {}, { signal: opts.signal, timeoutMs, label, onProgress: opts.onProgress, onElicit: opts.onElicit, ...(opts.onOutput ? { onOutput: opts.onOutput } : {}), ...(opts.onEnd ? { onEnd: opts.onEnd } : {}) });
    } catch (err) {
      // SharedServer.call does not throw; this guards the promise of "never throws" against a future slip.
      return errorResult(`MCP tool ${qualifiedName} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  prompts(): McpPromptInfo[] {
    return this.servers.flatMap((s, i) => (s instanceof SharedServer ? s.prompts().map((p) => ({ ...p, server: this.specs[i]!.name })) : []));
  }

  async getPrompt(server: string, name: string, args: Record<string, string>, signal?: AbortSignal): Promise<McpPromptMessage[]> {
    if (this.#closed) throw new Error("this session's MCP servers are closed");
    const slot = this.specs.findIndex((sp) => sp.name === server);
    const s = this.servers[slot];
    if (!(s instanceof SharedServer)) throw new Error(`no MCP server named ${server} in this session`);
    return s.getPrompt(name, args, { signal, timeoutMs: this.limits.TOOL_TIMEOUT_S * 1000, label: server });
  }

  onPromptsChanged(listener: () => void): void {
    this.#promptListeners.add(listener);
  }

  #promptsChanged(): void {
    for (const listener of this.#promptListeners) {
      try {
        listener();
      } catch (err) {
        this.log.warn("MCP prompts-changed listener failed", { err });
      }
    }
  }

  instructions(): Record<string, string> {
    const out: Record<string, string> = {};
    this.servers.forEach((s, i) => {
      const text = s.instructions();
      if (text) out[this.specs[i]!.name] = text;
    });
    return out;
  }

  onToolsChanged(listener: () => void): void {
    this.#listeners.add(listener);
  }

  onServerEvent(listener: (e: McpServerEvent) => void): void {
    this.#watchers.add(listener);
  }

  #event(e: McpServerEvent): void {
    for (const w of this.#watchers) {
      try {
        w(e);
      } catch (err) {
        this.log.warn("MCP server event listener failed", { err });
      }
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const off of this.#unsubscribe) off();
    this.#listeners.clear();
    this.#promptListeners.clear();
    this.#watchers.clear();
    await Promise.all(this.servers.map((s) => this.release(s)));
  }

  #current(): Catalog {
    this.#catalog ??= buildCatalog(
      this.servers.map((s, i) => ({ label: this.specs[i]!.name, tools: s.tools() })),
      this.limits,
      this.log,
      this.#warned,
    );
    return this.#catalog;
  }

  #changed(): void {
    const before = this.#catalog;
    this.#catalog = undefined;
    const after = this.#current();
    for (const [name, route] of before?.routes ?? []) {
      const server = this.servers[route.slot]!;
      if (!after.routes.has(name) && server.state === "gone") this.#withdrawn.set(name, this.specs[route.slot]!.name);
    }
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch (err) {
        this.log.warn("MCP tools-changed listener failed", { err });
      }
    }
  }
}
