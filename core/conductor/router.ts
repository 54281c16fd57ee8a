// Owns routing inside a chain: which hop a message goes to and in which form (raw, or wrapped in the
// receiving proxy's dialect), ids mapped per hop both ways, `$/cancel_request` translated, dialect
// discovery by -32601 retry, batches (one batch out per hop, answers collected into one), the agent
// edge (what reaches the agent rewritten, and requests it answers itself), refusing MCP-over-ACP
// requests no provider could answer (mcp-routes.ts), and the chain's one ACP version (a
// component answering another version than its successor is refused at initialize). Messages are routed
// synchronously as read, so per-hop order holds end to end. Per-hop id tables (core/wire/pending.ts, as
// the peer's), not an RpcPeer per hop: a relayed answer is written on another hop the moment it is
// read, as read, which a peer's promises cannot do. Does not spawn processes or decide exit codes (runner.ts).
import { ACP_V2, type Classified, errorResponse, INTERNAL_ERROR, isObject, type JsonRpcError, type JsonRpcId, METHOD_NOT_FOUND, paramsTextOf, UNSUPPORTED_PROTOCOL_VERSION } from "../wire/jsonrpc.ts";
import {
  answeredVersion,
  type Dialect,
  DIALECT_ORDER,
  dialectOfInitialize,
  initializeAnswerFor,
  initializeFor,
  type Inner,
  isInitialize,
  type Params,
  successorDialect,
  unwrapSuccessor,
  wrappedNotification,
  wrapSuccessor,
} from "./dialect.ts";
import { describeEnd, Link, type LinkEnd, type LinkIo, type WellFormed } from "../wire/link.ts";
import { PendingRequests } from "../wire/pending.ts";
import { turnEnd } from "../v2-turn-end.ts";
import { Cancellation } from "../wire/rpc-peer.ts";
import { McpRoutes } from "./mcp-routes.ts";

export type Hop = "client" | number;

/** A hop's two directions: bytes (a process's stdio) or an in-memory message pipe end. */
export type HopIo = LinkIo;

export interface ChainOptions {
  /** `agent`: the last component is the agent. `proxy`: the chain is itself a proxy; its successor is
   *  reached through the client hop, wrapped in the client's dialect. */
  mode: "agent" | "proxy";
  client: HopIo;
  components: HopIo[];
  maxLineBytes: number;
  /** Bytes that may wait for one hop to read them; more ends the chain (that hop `stalled`). */
  maxQueuedBytes?: number;
  trace?: (hop: Hop, dir: "in" | "out", message: unknown) => void;
  /** Agent mode: sees every message before it reaches the agent (the MCP-over-ACP bridge). */
  agentEdge?: AgentEdge;
  /** The components' names (their command strings), for errors that name one. */
  names?: string[];
}

/** What may stand at the agent's edge of a chain: rewrite what reaches the agent, or take it over. */
export interface AgentEdge {
  /** The params to send (possibly rewritten), an optional rewrite of a successful answer and a hook
   *  for an error answer; undefined consumes a notification (a request is never consumed). */
  toAgent(method: string, params: Params, isRequest: boolean): EdgeRoute | undefined;
  /** A request the edge answers itself instead of the agent (a provider's MCP request to a bridged
   *  client), or undefined to let it through. Its answer goes back as the agent's would (into the
   *  batch it came in); `$/cancel_request` for it cancels `cancellation`. */
  takeRequest?(method: string, params: Params, cancellation: Cancellation): Promise<{ result: unknown } | { error: JsonRpcError }> | undefined;
}

export interface EdgeRoute {
  params: Params;
  answer?: (result: unknown) => unknown;
  failed?: () => void;
}

/** Messages sent as if the agent had sent them (towards its predecessor). */
export interface AgentSide {
  /** The response message: the peer's, or a -32603 error naming why the chain ended before one came
   *  (every request settles; the promise never rejects, so a caller has one path for failure). */
  request(method: string, params: Params): Promise<Record<string, unknown>>;
  notify(method: string, params: Params): void;
}

export type ChainEnd = { hop: "client"; end: LinkEnd } | { hop: number; end: LinkEnd };

interface Pending {
  from: Replier;
  id: JsonRpcId;
  /** Rewrites a successful answer on its way back, and hears of an error answer (the agent edge's). */
  answer?: (result: unknown) => unknown;
  failed?: () => void;
  /** An initialize sent to a proxy: on -32601 retried in the next dialect while its dialect is unknown. */
  init?: { attempt: number; params: Params };
  /** An initialize sent to the component at this position (components.length = a proxy chain's
   *  successor): its answer's protocolVersion is recorded and checked against its neighbours'. */
  versionOf?: number;
}

/** Where an answer goes: a hop, or the agent side's own requests. */
interface Replier {
  link: { send(message: Record<string, unknown>, line?: string): void };
  /** Requests this hop sent that wait for an answer: where each went on, by this hop's id (or, for one
   *  the agent edge took, what cancels it). */
  inbound: Map<JsonRpcId, { to: Endpoint; id: JsonRpcId } | { taken: Cancellation }>;
}

interface Endpoint extends Replier {
  hop: Hop;
  link: Link;
  isProxy: boolean;
  dialect?: Dialect;
  /** Requests we sent on this hop, by our id. */
  pending: PendingRequests<Pending>;
  /** Batches this hop sent whose answers are still being collected, by the ids of their requests. */
  batches: Map<JsonRpcId, BatchAnswer>;
  /** The batch being routed right now: answers given at once (malformed entries, refusals) join it. */
  collecting?: BatchAnswer;
  /** Our ids of the requests in the last batch sent to this hop: what a refusal of the whole batch
   *  (one error with id null, from a peer that takes no batches) answers. */
  lastBatch?: { from: number; to: number };
}

/** The answers to one batch, sent back as one batch when the last of its requests is answered. */
interface BatchAnswer {
  waiting: number;
  answers: Record<string, unknown>[];
}

type Routed = Inner & {
  request?: { from: Replier; id: JsonRpcId };
  /** The notification's line as read, while it is still exactly what would be written, and the
   *  message parsed from it. */
  line?: string;
  read?: Record<string, unknown>;
  /** The params' text in `line`, when the line was checked rather than parsed: then `params` (and
   *  `read`'s) are parsed only when a route reads them, and `read` is what would be written. */
  paramsText?: string;
};

export class Chain {
  readonly ended: Promise<ChainEnd>;
  readonly #client: Endpoint;
  readonly #components: Endpoint[];
  readonly #mode: ChainOptions["mode"];
  readonly #edge?: AgentEdge;
  readonly #prompts = new Map<JsonRpcId, string>();
  /** v2: sessions whose prompt was acknowledged and whose turn has not reported `idle` yet. */
  readonly #turns = new Set<string>();
  readonly #mcp = new McpRoutes();
  readonly #names: string[];
  /** The protocolVersion each position answered to its initialize (components.length: the successor). */
  readonly #versions: (number | undefined)[] = [];
  /** The version the client was answered, once it was. */
  #clientVersion?: number;
  /** Why this chain refuses every client request: its components answered different ACP versions. */
  #mismatch?: JsonRpcError;

  constructor(opts: ChainOptions) {
    if (opts.components.length === 0) throw new Error("a chain needs at least one component");
    this.#mode = opts.mode;
    this.#names = opts.names ?? [];
    this.#edge = opts.mode === "agent" ? opts.agentEdge : undefined;
    const n = opts.components.length;
    const endpoint = (hop: Hop, io: HopIo, isProxy: boolean): Endpoint => {
      // The link calls back only once input arrives (never while it is made), when `ep` is set.
      const link = new Link({
        ...io,
        maxLineBytes: opts.maxLineBytes,
        maxQueuedBytes: opts.maxQueuedBytes,
        onMessage: (m, line) => this.#receive(ep, m, line),
        onBatch: (entries) => this.#receiveBatch(ep, entries),
        onMalformed: hop === "client" ? (bad) => (ep.link.send(errorResponse(bad.id, bad.error)), true) : undefined,
        relay: true,
        trace: opts.trace ? (dir, message) => opts.trace!(hop, dir, message) : undefined,
      });
      const ep: Endpoint = { hop, isProxy, pending: new PendingRequests(), inbound: new Map(), batches: new Map(), link };
      const send = ep.link.send.bind(ep.link);
      ep.link.send = (message, line) => {
        if ((ep.batches.size > 0 || ep.collecting) && message.method === undefined && this.#collect(ep, message)) return;
        send(message, line);
      };
      return ep;
    };
    this.#client = endpoint("client", opts.client, false);
    // Prompts the client waits on (its request id → the session): what an interrupt cancels.
    const send = this.#client.link.send.bind(this.#client.link);
    this.#client.link.send = (message, line) => {
      if (message.id !== undefined && message.method === undefined) {
        const sessionId = this.#prompts.get(message.id as JsonRpcId);
        if (sessionId !== undefined) {
          this.#prompts.delete(message.id as JsonRpcId);
          // v2 acknowledges a prompt at once: its turn runs until the session reports idle.
          if (this.#clientVersion === ACP_V2 && message.error === undefined) this.#turns.add(sessionId);
        }
      } else if (this.#turns.size > 0 && message.method === "session/update") this.#turnUpdate(message.params);
      send(message, line);
    };
    this.#components = opts.components.map((io, i) => endpoint(i, io, opts.mode === "proxy" || i < n - 1));
    const ends = [this.#client, ...this.#components].map((ep) => ep.link.ended.then((end) => ({ hop: ep.hop, end }) as ChainEnd));
    this.ended = Promise.race(ends);
  }

  /**
   * Ctrl-C reached the conductor (a terminal's client shares its group): every prompt the client is
   * waiting on gets `session/cancel`, as if the client had sent it. Returns how many sessions.
   */
  interruptTurns(): number {
    const sessions = new Set([...this.#prompts.values(), ...this.#turns]);
    for (const sessionId of sessions) {
      const message = { jsonrpc: "2.0", method: "session/cancel", params: { sessionId } };
      this.#receive(this.#client, { kind: "notification", method: "session/cancel", params: message.params, message }, JSON.stringify(message));
    }
    return sessions.size;
  }

  /** A v2 session update on its way to the client: an `idle` state ends the session's turn. */
  #turnUpdate(params: unknown): void {
    if (isObject(params) && turnEnd(params.update) && typeof params.sessionId === "string") this.#turns.delete(params.sessionId);
  }

  /** Answers every client request still in flight with -32603 `message` (the chain is ending). */
  failPending(message: string, data?: unknown): void {
    for (const [id] of this.#client.inbound) {
      this.#client.link.send(errorResponse(id, { code: INTERNAL_ERROR, message, ...(data === undefined ? {} : { data }) }));
    }
    this.#client.inbound.clear();
  }

  /** Resolves when everything queued towards the client is written. */
  flushClient(): Promise<void> {
    return this.#client.link.flush();
  }

  /** The agent's side of the chain, for messages the conductor itself originates there. */
  agentSide(): AgentSide {
    const agent = this.#components.length - 1;
    const waiting = new PendingRequests<(m?: Record<string, unknown>) => void>();
    let over: ((id: JsonRpcId, method: string) => Record<string, unknown>) | undefined;
    const self: Replier = { inbound: new Map(), link: { send: (m) => waiting.take(m.id as JsonRpcId)?.(m) } };
    // The chain ending answers every request still waiting (and any sent later): nothing else would.
    void this.ended.then(({ hop, end }) => {
      const who = hop === "client" ? "the client" : `component ${hop + 1}`;
      over = (id, method) => errorResponse(id, { code: INTERNAL_ERROR, message: `the chain ended before ${method} was answered: ${who} ${describeEnd(end)}` });
      for (const settle of waiting.takeAll()) settle(undefined);
    });
    return {
      request: (method, params) =>
        new Promise((resolve) => {
          const id = waiting.add((m) => resolve(m ?? over!(id, method)));
          if (over) return void (waiting.take(id), resolve(over(id, method)));
          this.#up(agent, { method, params, request: { from: self, id } });
        }),
      notify: (method, params) => this.#up(agent, { method, params }),
    };
  }

  /**
   * A batch from `from`: every entry routed as if it came alone, with every hop's link corked meanwhile
   * so what goes to one hop leaves as one batch (one entry alone leaves unbatched); the answers to its
   * requests are collected for `from`.
   */
  #receiveBatch(from: Endpoint, entries: Classified[]): void {
    const batch: BatchAnswer = { waiting: 0, answers: [] };
    for (const e of entries) {
      if (e.kind === "request" && !from.batches.has(e.id)) {
        from.batches.set(e.id, batch);
        batch.waiting++;
      }
    }
    const hops = [this.#client, ...this.#components];
    const firstIds = hops.map((ep) => ep.pending.nextId);
    for (const ep of hops) ep.link.cork();
    from.collecting = batch;
    try {
      for (const e of entries) {
        if (e.kind === "malformed") from.link.send(errorResponse(e.id, e.error));
        else this.#receive(from, e);
      }
    } finally {
      from.collecting = undefined;
      hops.forEach((ep, i) => {
        if (ep.pending.nextId > firstIds[i]!) ep.lastBatch = { from: firstIds[i]!, to: ep.pending.nextId };
        // A lone entry (a client's answer to an agent's question, say) leaves as itself: the peer may
        // take no batches, and then a batch of one would be lost and the turn would hang.
        ep.link.uncork(true);
      });
    }
    if (batch.waiting === 0) from.link.sendBatch(batch.answers);
  }

  /** An answer on its way to `to`: kept when it belongs to a batch still collecting (true). */
  #collect(to: Endpoint, answer: Record<string, unknown>): boolean {
    const id = answer.id as JsonRpcId | null;
    const batch = (id === null ? undefined : to.batches.get(id)) ?? to.collecting;
    if (!batch) return false;
    batch.answers.push(answer);
    if (id !== null && to.batches.get(id) === batch) {
      to.batches.delete(id);
      if (--batch.waiting === 0 && to.collecting !== batch) to.link.sendBatch(batch.answers);
    }
    return true;
  }

  #receive(from: Endpoint, m: WellFormed, line?: string): void {
    if (m.kind === "response") return this.#respond(from, m);
    if (m.method === "$/cancel_request") return this.#cancel(from, m.params as Params);
    // Params are read where a route needs them: a notification checked rather than parsed (paramsText)
    // is passed on without them being built.
    const routed: Routed = m.kind === "notification" && m.paramsText !== undefined ? unread(m, m.paramsText) : { method: m.method, params: m.params as Params };
    if (m.kind === "request") routed.request = { from, id: m.id };
    else if (line !== undefined) (routed.line = line), (routed.read = m.message);
    if (from.hop === "client") {
      if (this.#mismatch) {
        if (m.kind === "request") from.link.send(errorResponse(m.id, this.#mismatch));
        return;
      }
      if (m.kind === "request" && m.method === "session/prompt") {
        const sessionId = (m.params as { sessionId?: unknown } | undefined)?.sessionId;
        if (typeof sessionId === "string") this.#prompts.set(m.id, sessionId);
      }
      if (this.#mode === "proxy") {
        const wrapped = unwrap(routed);
        if (wrapped) {
          from.dialect = wrapped.dialect;
          if (wrapped.inner.method === "$/cancel_request") return;
          return this.#up(this.#components.length, { ...wrapped.inner, request: routed.request });
        }
        if (isInitialize(m.method)) from.dialect ??= dialectOfInitialize(m.method, routed.params);
      }
      return this.#down(-1, routed);
    }
    const k = from.hop;
    const wrapped = unwrap(routed);
    if (!wrapped) return this.#up(k, routed);
    if (from.isProxy) from.dialect ??= wrapped.dialect;
    // A wrapped $/cancel_request names an id of another hop; only the proxy can translate it.
    if (wrapped.inner.method === "$/cancel_request") return;
    this.#down(k, { ...wrapped.inner, request: routed.request });
  }

  /** A message from position `k` (-1 = client) to its successor. */
  #down(k: number, m: Routed): void {
    const j = k + 1;
    if (j === this.#components.length) {
      if (this.#mode === "proxy") {
        const held = m.request ? this.#mcp.track(m.method, m.params) : undefined;
        const versionOf = m.request && isInitialize(m.method) ? j : undefined;
        return this.#wrapTo(this.#client, m, held && { params: m.params, ...held }, versionOf);
      }
      if (m.request) {
        const { from, id } = m.request;
        from.link.send(errorResponse(id, { code: METHOD_NOT_FOUND, message: `the agent has no successor: ${m.method}` }));
      }
      return;
    }
    const target = this.#components[j]!;
    if (!target.isProxy) return this.#toAgent(target, m);
    if (!isInitialize(m.method)) return void (this.#pass(target, m) || this.#send(target, m.method, m.params, m.request, undefined, m.line));
    const attempt = target.dialect ? DIALECT_ORDER.indexOf(target.dialect) : 0;
    this.#sendInit(target, attempt, m.params, m.request);
  }

  #toAgent(agent: Endpoint, m: Routed): void {
    const cancellation = m.request && this.#edge?.takeRequest ? new Cancellation() : undefined;
    const taken = cancellation && this.#edge!.takeRequest!(m.method, m.params, cancellation);
    if (taken) {
      const { from, id } = m.request!;
      const entry = { taken: cancellation };
      from.inbound.set(id, entry);
      // Sent unless the request was answered already (the chain ending answers every one it holds).
      const answer = (message: Record<string, unknown>) => {
        if (from.inbound.get(id) !== entry) return;
        from.inbound.delete(id);
        from.link.send(message);
      };
      void taken.then(
        (a) => answer("error" in a ? errorResponse(id, a.error) : { jsonrpc: "2.0", id, result: a.result ?? {} }),
        (err: unknown) => answer(errorResponse(id, { code: INTERNAL_ERROR, message: err instanceof Error ? err.message : String(err) })),
      );
      return;
    }
    const init = isInitialize(m.method) ? initializeFor(undefined, m.params) : undefined;
    const method = init?.method ?? m.method;
    const params = init?.params ?? m.params;
    const held = m.request ? this.#mcp.track(method, params) : undefined;
    const versionOf = init && m.request ? (agent.hop as number) : undefined;
    if (!this.#edge) return this.#send(agent, method, params, m.request, undefined, init ? undefined : m.line, held && { params, ...held }, versionOf);
    const edge = this.#edge.toAgent(method, params, m.request !== undefined) ?? (m.request ? { params } : undefined);
    if (!edge) return; // a notification the edge took over
    const line = edge.params === m.params && !init ? m.line : undefined;
    this.#send(agent, method, edge.params, m.request, undefined, line, held ? both(edge, held) : edge, versionOf);
  }

  /** A message from position `k` (components.length = our successor in proxy mode) to its predecessor. */
  #up(k: number, m: Routed): void {
    const mcp = this.#mcp.check(m);
    if (mcp && "refuse" in mcp) {
      if (m.request) m.request.from.link.send(errorResponse(m.request.id, mcp.refuse));
      return;
    }
    const hooks = mcp?.answer ? { params: m.params, answer: mcp.answer } : undefined;
    const j = k - 1;
    if (j < 0) return void (this.#pass(this.#client, m) || this.#send(this.#client, m.method, m.params, m.request, undefined, m.line, hooks));
    this.#wrapTo(this.#components[j]!, m, hooks);
  }

  #wrapTo(target: Endpoint, m: Routed, hooks?: EdgeRoute, versionOf?: number): void {
    const dialect = target.dialect ?? "proxy";
    // A notification relayed unchanged is wrapped around its params' text as read, not serialized again
    // (nor parsed, when it was checked rather than parsed).
    const text = m.line === undefined || m.read === undefined || m.request ? undefined : (m.paramsText ?? paramsTextOf(m.line, m.read));
    const wrapped = text === undefined ? undefined : wrappedNotification(dialect, m, text);
    if (wrapped) return target.link.send(wrapped.message, wrapped.line);
    const w = wrapSuccessor(dialect, m, m.request !== undefined);
    this.#send(target, w.method, w.params, m.request, undefined, undefined, hooks, versionOf);
  }

  /** A notification passed on as read, when it was checked rather than parsed: its line and its
   *  message as read (what #send would build from it), neither built again. False for anything else. */
  #pass(target: Endpoint, m: Routed): boolean {
    if (m.request || m.paramsText === undefined || m.line === undefined || m.read === undefined) return false;
    target.link.send(m.read, m.line);
    return true;
  }

  #sendInit(target: Endpoint, attempt: number, params: Params, request: Routed["request"]): void {
    const init = initializeFor(DIALECT_ORDER[attempt], params);
    this.#send(target, init.method, init.params, request, { attempt, params }, undefined, undefined, target.hop as number);
  }

  #send(
    target: Endpoint,
    method: string,
    params: Params,
    request?: Routed["request"],
    init?: Pending["init"],
    line?: string,
    edge?: EdgeRoute,
    versionOf?: number,
  ): void {
    const out: Record<string, unknown> = { jsonrpc: "2.0" };
    if (request) {
      const id = target.pending.add({ from: request.from, id: request.id, init, answer: edge?.answer, failed: edge?.failed, versionOf });
      out.id = id;
      request.from.inbound.set(request.id, { to: target, id });
    }
    out.method = method;
    if (params !== undefined) out.params = params;
    target.link.send(out, line);
  }

  #respond(on: Endpoint, m: Extract<WellFormed, { kind: "response" }>): void {
    if (m.id === null) return this.#batchRefused(on, m.error);
    const p = on.pending.take(m.id);
    if (!p) return; // a late answer to a request nobody waits for
    p.from.inbound.delete(p.id);
    if (p.versionOf !== undefined && !m.error) {
      const refusal = this.#agreeOn(p.versionOf, answeredVersion(m.result));
      if (refusal) return p.from.link.send(errorResponse(p.id, refusal));
      if (p.from === this.#client) this.#clientVersion = answeredVersion(m.result);
    }
    if (p.init) {
      const next = p.init.attempt + 1;
      if (m.error?.code === METHOD_NOT_FOUND && on.dialect === undefined && next < DIALECT_ORDER.length) {
        return this.#sendInit(on, next, p.init.params, { from: p.from, id: p.id });
      }
      if (!m.error) {
        on.dialect = DIALECT_ORDER[p.init.attempt];
        // Only our own answer as a proxy (to the client hop in proxy mode) carries the sacp marker.
        const upstream = p.from === this.#client && this.#mode === "proxy" ? this.#client.dialect : undefined;
        return p.from.link.send({ ...m.message, id: p.id, result: initializeAnswerFor(upstream, m.result) });
      }
    }
    if (m.error) p.failed?.();
    if (p.answer && !m.error) return p.from.link.send({ ...m.message, id: p.id, result: p.answer(m.result) });
    p.from.link.send({ ...m.message, id: p.id });
  }

  /**
   * Position `k` answered its initialize with `version`: recorded, and checked against the neighbours
   * that answered already (a proxy answers after its successor, unless it answers first). Differing
   * versions make the chain refuse: this answer and every later client request get the error.
   */
  #agreeOn(k: number, version: number | undefined): JsonRpcError | undefined {
    this.#versions[k] = version;
    for (const [a, b] of [[k - 1, k], [k, k + 1]] as const) {
      const va = this.#versions[a];
      const vb = this.#versions[b];
      if (a < 0 || va === undefined || vb === undefined || va === vb) continue;
      const successor = b === this.#components.length ? "the chain's own successor" : `its successor ${this.#describe(b)}`;
      const message = `the chain's components answered different ACP versions: ${this.#describe(a)} answered protocolVersion ${va}, ${successor} answered ${vb}; a chain is routed in one version end to end, so it is refused`;
      this.#mismatch = { code: UNSUPPORTED_PROTOCOL_VERSION, message, data: { component: a + 1, protocolVersion: va, successor: b + 1, successorProtocolVersion: vb } };
      return this.#mismatch;
    }
    return undefined;
  }

  /** `component 2 (NAME)`. */
  #describe(k: number): string {
    const name = this.#names[k];
    return name === undefined ? `component ${k + 1}` : `component ${k + 1} (${name})`;
  }

  /** One error with id null: a hop that takes no batches refused the last one; each of its requests still
   *  waiting gets that error (anything else with id null answers nothing we sent). */
  #batchRefused(on: Endpoint, error: Extract<WellFormed, { kind: "response" }>["error"]): void {
    const sent = on.lastBatch;
    if (!error || !sent) return;
    on.lastBatch = undefined;
    for (let id = sent.from; id < sent.to; id++) {
      if (!on.pending.has(id)) continue;
      const message = { jsonrpc: "2.0", id, error };
      this.#respond(on, { kind: "response", id, error, message });
    }
  }

  #cancel(from: Endpoint, params: Params): void {
    if (!isObject(params)) return;
    const to = from.inbound.get(params.requestId as JsonRpcId);
    if (!to) return;
    if ("taken" in to) to.taken.cancel();
    else to.to.link.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { ...params, requestId: to.id } });
  }
}

/** A notification checked rather than parsed, routed with its params parsed only when first read. */
function unread(m: { method: string; params: unknown }, paramsText: string): Routed {
  return new Unread(m, paramsText);
}

class Unread {
  readonly method: string;
  request?: Routed["request"];
  line?: string;
  read?: Record<string, unknown>;
  constructor(
    readonly m: { method: string; params: unknown },
    readonly paramsText: string,
  ) {
    this.method = m.method;
  }
  get params(): Params {
    return this.m.params as Params;
  }
}

/** The successor wrapper `m` is, if it is one (its params read only then). */
function unwrap(m: Inner): ReturnType<typeof unwrapSuccessor> {
  return successorDialect(m.method) === undefined ? undefined : unwrapSuccessor(m.method, m.params);
}

/** The edge's hooks and the MCP routes' on one answer: the routes hear the agent's answer first. */
function both(edge: EdgeRoute, held: { answer: (result: unknown) => unknown; failed: () => void }): EdgeRoute {
  return {
    params: edge.params,
    answer: (r) => (edge.answer ? edge.answer(held.answer(r)) : held.answer(r)),
    failed: () => (held.failed(), edge.failed?.()),
  };
}
