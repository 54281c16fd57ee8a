// Owns the agent's ACP connection: the protocol version it is served in (v1/server.ts, or v2/server.ts
// when its first initialize asks for protocolVersion 2; both map onto one session engine,
// connection-sessions.ts), what `$/cancel_request` answers (-32800 for all but a prompt, undoing what the
// cancelled request opened), a provider's `mcp/message` to the MCP-over-ACP relay, session/cancel, and
// the mapping of our errors to JSON-RPC errors. It reads the wire itself (RpcPeer): no SDK app loaded or
// validating every message. The first initialize is answered (initialize.ts) before the method table
// and the session layer behind it are loaded, right after. Does not own sessions (session-manager.ts) or bytes
// (core/wire).
import { log, logFailure } from "../log.ts";
import type { LinkEnd } from "../wire/link.ts";
import { ACP_V1, ACP_V2, METHOD_NOT_FOUND, REQUEST_CANCELLED } from "../wire/jsonrpc.ts";
import { RpcError, RpcPeer } from "../wire/rpc-peer.ts";
import type { ByteSink } from "../wire/writer.ts";
import { AcpError, INTERNAL_ERROR, INVALID_PARAMS } from "./acp-error.ts";
import { ParamReader } from "./params.ts";
import type { SessionManager } from "./session-manager.ts";
import type { AcpMcpRelay } from "../mcp/acp-transport.ts";
import { type ClientHello, initializeV1, initializeV2 } from "./initialize.ts";
import type { Handler, MappingOptions } from "./connection-sessions.ts";

export interface AgentServerOptions extends Omit<MappingOptions, "sessions"> {
  /** The sessions, or how to build them: then built once, when the first initialize is answered (or
   *  the first other request comes first), with the method table. */
  sessions: SessionManager | (() => Promise<SessionManager>);
  /** Bound to this connection: `acp` MCP servers' messages travel over it. */
  acpRelay?: AcpMcpRelay;
}

export interface AgentIo {
  input: AsyncIterable<Uint8Array>;
  sink: ByteSink;
  maxLineBytes: number;
}

export interface AgentConnection {
  /** Settles when input ends: EOF, an over-long line, a read error. */
  ended: Promise<LinkEnd>;
  /** Resolves once every request in flight has its answer queued. */
  settled(): Promise<void>;
  /** Resolves once everything queued so far is written. */
  flush(): Promise<void>;
  close(): void;
}

/** Runs a handler body; our AcpErrors keep their code, anything else becomes -32603 with its message. */
async function guard<T>(what: string, body: () => Promise<T> | T): Promise<T> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof AcpError) throw new RpcError(err.code, err.message, err.data);
    if (err instanceof RpcError) throw err;
    log.error(`${what} failed`, { error: err });
    throw new RpcError(INTERNAL_ERROR, `${what} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * `$/cancel_request` for a request other than a prompt (a prompt answers `stopReason: "cancelled"`
 * itself): -32800 at once, without waiting for the work. What the work opens when it does finish is
 * undone (`undo`), so a cancelled session/new leaves no session behind.
 */
function unlessCancelled(method: string, work: Promise<unknown>, signal: AbortSignal, undo: (result: unknown) => Promise<void>): Promise<unknown> {
  const cancelled = () => new RpcError(REQUEST_CANCELLED, `${method} was cancelled ($/cancel_request)`);
  if (signal.aborted) {
    work.then(undo, () => {}).catch((err: unknown) => log.warn("undoing a cancelled request failed", { method, error: err }));
    return Promise.reject(cancelled());
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      reject(cancelled());
      work.then(undo, () => {}).catch((err: unknown) => log.warn("undoing a cancelled request failed", { method, error: err }));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => (signal.removeEventListener("abort", onAbort), resolve(v)),
      (e) => (signal.removeEventListener("abort", onAbort), reject(e)),
    );
  });
}

/** A session a cancelled request opened anyway: closed, and one it created (new, fork) deleted. */
async function undoOpen(sessions: SessionManager, method: string, params: unknown, result: unknown): Promise<void> {
  const created = method === "session/new" || method === "session/fork";
  const id = created ? (result as { sessionId?: unknown } | undefined)?.sessionId : method === "session/load" || method === "session/resume" ? (params as { sessionId?: unknown }).sessionId : undefined;
  if (typeof id !== "string") return;
  if (created) await sessions.deleteSession(id);
  else await sessions.closeSession(id);
  log.info("a cancelled request's session was undone", { method, session: id });
}

/**
 * The connection's protocol version. Until an initialize succeeds, requests are served in v1 and each
 * initialize is judged by what it asks (2: v2, else v1); the first that succeeds fixes the version for
 * good. One that is refused (bad params) fixes nothing: a v2 client that falls back to v1 is answered in v1.
 */
class VersionChoice {
  version: typeof ACP_V1 | typeof ACP_V2 = ACP_V1;
  fixed = false;
  /** What the client declared in the initialize that fixed the version. */
  hello: ClientHello | undefined;

  /** The version an initialize with `params` asks for. */
  static asked(params: unknown): typeof ACP_V1 | typeof ACP_V2 {
    return (params as { protocolVersion?: unknown } | null)?.protocolVersion === ACP_V2 ? ACP_V2 : ACP_V1;
  }

  fix(version: typeof ACP_V1 | typeof ACP_V2, hello?: ClientHello): void {
    this.version = version;
    this.fixed = true;
    if (hello) this.hello = hello;
  }
}

/** Each version's method table, and the sessions behind them, loaded once, when first needed. */
class MethodTables {
  readonly #loaded = new Map<number, Record<string, Handler>>();
  readonly #loads = new Map<number, Promise<Record<string, Handler>>>();
  sessions: SessionManager | undefined;

  constructor(
    private readonly opts: AgentServerOptions,
    private readonly peer: () => RpcPeer,
    private readonly ended: AbortSignal,
    private readonly hello: () => ClientHello | undefined,
  ) {
    this.sessions = typeof opts.sessions === "function" ? undefined : opts.sessions;
  }

  /** Version `v`'s table if it is loaded already. */
  loaded(v: number): Record<string, Handler> | undefined {
    return this.#loaded.get(v);
  }

  load(v: typeof ACP_V1 | typeof ACP_V2): Promise<Record<string, Handler>> {
    let load = this.#loads.get(v);
    if (!load) {
      load = (async () => {
        this.sessions ??= await (this.opts.sessions as () => Promise<SessionManager>)();
        const mapping = { ...this.opts, sessions: this.sessions };
        const t = v === ACP_V2
          ? (await import("./v2/server.ts")).v2Handlers(mapping, this.peer(), this.ended, this.hello())
          : (await import("./v1/server.ts")).v1Handlers(mapping, this.peer(), this.ended, this.hello());
        this.#loaded.set(v, t);
        return t;
      })();
      this.#loads.set(v, load);
    }
    return load;
  }
}

/** Serves the agent on a byte stream until the peer goes away. */
export function serveAgent(io: AgentIo, opts: AgentServerOptions): AgentConnection {
  const choice = new VersionChoice();
  const ended = new AbortController();
  const tables = new MethodTables(opts, () => peer, ended.signal, () => choice.hello);
  const run = (t: Record<string, Handler>, method: string, params: unknown, signal: AbortSignal) => {
    const handler = Object.hasOwn(t, method) ? t[method] : undefined;
    if (!handler) throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method}`);
    return guard(method, () => handler(params, signal));
  };
  /** An initialize before the version is fixed: answered in the version it asks for; fixes it when it succeeds. */
  const initialize = async (params: unknown, signal: AbortSignal): Promise<unknown> => {
    const asked = VersionChoice.asked(params);
    const table = tables.loaded(asked);
    if (table) {
      const answer = await run(table, "initialize", params, signal);
      choice.fix(asked);
      return answer;
    }
    // Answered here; the version's table loads in the next turn of the event loop, once the answer is
    // out. What the client declared is kept at once: a request in the same read builds the table.
    return guard("initialize", () => {
      const first = (asked === ACP_V2 ? initializeV2 : initializeV1)(params, opts);
      choice.fix(asked, first.hello);
      setImmediate(() => void tables.load(asked).catch(logFailure("loading the session layer")));
      return first.answer;
    });
  };
  const peer: RpcPeer = new RpcPeer({
    ...io,
    answerMalformed: true,
    onRequest: (method, params, cancellation) => {
      const signal = cancellation.signal;
      if (method === "initialize" && !choice.fixed) return initialize(params, signal);
      // MCP-over-ACP: a provider's MCP server asking our MCP client (roots/list, elicitation, ping…).
      if (method === "mcp/message" && opts.acpRelay) return opts.acpRelay.answer(params, signal);
      const table = tables.loaded(choice.version);
      const work = table ? run(table, method, params, signal) : tables.load(choice.version).then((t) => run(t, method, params, signal));
      if (method === "session/prompt") return work;
      return unlessCancelled(method, work, signal, (result) => undoOpen(tables.sessions!, method, params, result));
    },
    onNotification: (method, params) => {
      if (method === "session/cancel") {
        // A notification has no answer: a wrong one is logged, naming the field. Before the sessions
        // are built there is none to cancel.
        try {
          const id = ParamReader.of(method, params).id("sessionId");
          if (!tables.sessions) throw new AcpError(INVALID_PARAMS, `unknown session: ${id}`);
          tables.sessions.cancel(id);
        } catch (err) {
          log.warn("session/cancel ignored", { error: err });
        }
      } else if (method === "mcp/message") {
        // MCP-over-ACP: a provider's notification for one of its servers (progress, list changes).
        opts.acpRelay?.deliver(params);
      }
    },
  });
  void peer.ended.then(() => ended.abort());
  opts.acpRelay?.bind({
    request: (method, params) => peer.request(method, params),
    notify: (method, params) => peer.notify(method, params),
  });
  return { ended: peer.ended, settled: () => peer.settled(), flush: () => peer.flush(), close: () => peer.close() };
}

export { AcpError, INVALID_PARAMS };
