// Owns routing inside a chain: which hop a message goes to, in which form (raw, or wrapped as a
// successor message in the receiving proxy's dialect), request ids mapped per hop in both directions,
// `$/cancel_request` translated to the next hop's id, and dialect discovery by -32601 retry.
// Every message is routed synchronously as it is read, so per-hop order is kept end to end.
// Does not spawn processes, read stderr or decide exit codes (runner.ts).
import { errorResponse, INTERNAL_ERROR, type JsonRpcId, METHOD_NOT_FOUND } from "../wire/jsonrpc.ts";
import {
  type Dialect,
  DIALECT_ORDER,
  dialectOfInitialize,
  initializeAnswerFor,
  initializeFor,
  type Inner,
  isInitialize,
  isObject,
  type Params,
  unwrapSuccessor,
  wrapSuccessor,
} from "./dialect.ts";
import { Link, type LinkEnd, type WellFormed } from "./link.ts";
import type { ByteSink } from "../wire/writer.ts";

export type Hop = "client" | number;

export interface HopIo {
  input: AsyncIterable<Uint8Array>;
  sink: ByteSink;
}

export interface ChainOptions {
  /** `agent`: the last component is the agent. `proxy`: the chain is itself a proxy; its successor is
   *  reached through the client hop, wrapped in the client's dialect. */
  mode: "agent" | "proxy";
  client: HopIo;
  components: HopIo[];
  maxLineBytes: number;
  trace?: (hop: Hop, dir: "in" | "out", message: unknown) => void;
}

export type ChainEnd = { hop: "client"; end: LinkEnd } | { hop: number; end: LinkEnd };

interface Pending {
  from: Endpoint;
  id: JsonRpcId;
  /** An initialize sent to a proxy: on -32601 retried in the next dialect while its dialect is unknown. */
  init?: { attempt: number; params: Params };
}

interface Endpoint {
  hop: Hop;
  link: Link;
  isProxy: boolean;
  dialect?: Dialect;
  nextId: number;
  /** Requests we sent on this hop, by our id. */
  pending: Map<JsonRpcId, Pending>;
  /** Requests this hop sent us, by its id: where they went, under which id. */
  inbound: Map<JsonRpcId, { to: Endpoint; id: JsonRpcId }>;
}

type Routed = Inner & {
  request?: { from: Endpoint; id: JsonRpcId };
  /** The notification's line as read, while it is still exactly what would be written. */
  line?: string;
};

export class Chain {
  readonly ended: Promise<ChainEnd>;
  readonly #client: Endpoint;
  readonly #components: Endpoint[];
  readonly #mode: ChainOptions["mode"];

  constructor(opts: ChainOptions) {
    if (opts.components.length === 0) throw new Error("a chain needs at least one component");
    this.#mode = opts.mode;
    const n = opts.components.length;
    const endpoint = (hop: Hop, io: HopIo, isProxy: boolean): Endpoint => {
      const ep: Endpoint = { hop, isProxy, nextId: 0, pending: new Map(), inbound: new Map(), link: undefined as unknown as Link };
      ep.link = new Link({
        input: io.input,
        sink: io.sink,
        maxLineBytes: opts.maxLineBytes,
        onMessage: (m, line) => this.#receive(ep, m, line),
        onMalformed: hop === "client" ? (bad) => (ep.link.send(errorResponse(bad.id, bad.error)), true) : undefined,
        trace: opts.trace ? (dir, message) => opts.trace!(hop, dir, message) : undefined,
      });
      return ep;
    };
    this.#client = endpoint("client", opts.client, false);
    this.#components = opts.components.map((io, i) => endpoint(i, io, opts.mode === "proxy" || i < n - 1));
    const ends = [this.#client, ...this.#components].map((ep) => ep.link.ended.then((end) => ({ hop: ep.hop, end }) as ChainEnd));
    this.ended = Promise.race(ends);
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

  #receive(from: Endpoint, m: WellFormed, line: string): void {
    if (m.kind === "response") return this.#respond(from, m);
    const params = m.params as Params;
    if (m.method === "$/cancel_request") return this.#cancel(from, params);
    const routed: Routed = { method: m.method, params };
    if (m.kind === "request") routed.request = { from, id: m.id };
    else routed.line = line;
    if (from.hop === "client") {
      if (this.#mode === "proxy") {
        const wrapped = unwrapSuccessor(m.method, params);
        if (wrapped) {
          from.dialect = wrapped.dialect;
          return this.#up(this.#components.length, { ...wrapped.inner, request: routed.request });
        }
        from.dialect ??= dialectOfInitialize(m.method, params);
      }
      return this.#down(-1, routed);
    }
    const k = from.hop;
    const wrapped = unwrapSuccessor(m.method, params);
    if (!wrapped) return this.#up(k, routed);
    if (from.isProxy) from.dialect ??= wrapped.dialect;
    this.#down(k, { ...wrapped.inner, request: routed.request });
  }

  /** A message from position `k` (-1 = client) to its successor. */
  #down(k: number, m: Routed): void {
    const j = k + 1;
    if (j === this.#components.length) {
      if (this.#mode === "proxy") return this.#wrapTo(this.#client, m);
      if (m.request) {
        const { from, id } = m.request;
        from.link.send(errorResponse(id, { code: METHOD_NOT_FOUND, message: `the agent has no successor: ${m.method}` }));
      }
      return;
    }
    const target = this.#components[j]!;
    if (!isInitialize(m.method)) return this.#send(target, m.method, m.params, m.request, undefined, m.line);
    if (!target.isProxy) {
      const init = initializeFor(undefined, m.params);
      return this.#send(target, init.method, init.params, m.request);
    }
    const attempt = target.dialect ? DIALECT_ORDER.indexOf(target.dialect) : 0;
    this.#sendInit(target, attempt, m.params, m.request);
  }

  /** A message from position `k` (components.length = our successor in proxy mode) to its predecessor. */
  #up(k: number, m: Routed): void {
    const j = k - 1;
    if (j < 0) return this.#send(this.#client, m.method, m.params, m.request, undefined, m.line);
    this.#wrapTo(this.#components[j]!, m);
  }

  #wrapTo(target: Endpoint, m: Routed): void {
    const w = wrapSuccessor(target.dialect ?? "proxy", m, m.request !== undefined);
    this.#send(target, w.method, w.params, m.request);
  }

  #sendInit(target: Endpoint, attempt: number, params: Params, request: Routed["request"]): void {
    const init = initializeFor(DIALECT_ORDER[attempt], params);
    this.#send(target, init.method, init.params, request, { attempt, params });
  }

  #send(target: Endpoint, method: string, params: Params, request?: Routed["request"], init?: Pending["init"], line?: string): void {
    const out: Record<string, unknown> = { jsonrpc: "2.0" };
    if (request) {
      const id = target.nextId++;
      out.id = id;
      target.pending.set(id, { from: request.from, id: request.id, init });
      request.from.inbound.set(request.id, { to: target, id });
    }
    out.method = method;
    if (params !== undefined) out.params = params;
    target.link.send(out, line);
  }

  #respond(on: Endpoint, m: Extract<WellFormed, { kind: "response" }>): void {
    if (m.id === null) return;
    const p = on.pending.get(m.id);
    if (!p) return; // a late answer to a request nobody waits for
    on.pending.delete(m.id);
    p.from.inbound.delete(p.id);
    if (p.init) {
      const next = p.init.attempt + 1;
      if (m.error?.code === METHOD_NOT_FOUND && on.dialect === undefined && next < DIALECT_ORDER.length) {
        return this.#sendInit(on, next, p.init.params, { from: p.from, id: p.id });
      }
      if (!m.error) {
        on.dialect = DIALECT_ORDER[p.init.attempt];
        // Only our own answer as a proxy (to the client hop in proxy mode) carries the sacp marker.
        const upstream = p.from.hop === "client" && this.#mode === "proxy" ? p.from.dialect : undefined;
        return p.from.link.send({ ...m.message, id: p.id, result: initializeAnswerFor(upstream, m.result) });
      }
    }
    p.from.link.send({ ...m.message, id: p.id });
  }

  #cancel(from: Endpoint, params: Params): void {
    if (!isObject(params)) return;
    const to = from.inbound.get(params.requestId as JsonRpcId);
    if (to) to.to.link.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { ...params, requestId: to.id } });
  }
}
