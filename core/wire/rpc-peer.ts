// Owns being one end of a JSON-RPC connection without an SDK, over Link: our requests and their
// answers by id (a relay hears them synchronously, as read), notifications both ways, handlers for the
// other end's requests (answered at once or later by id, each with its cancellation — `$/cancel_request`
// or the connection's end — made on demand), and batches when asked. Nothing is validated away: an
// update kind this end does not know still reaches its handler.
import { Link, type LinkEnd, type LinkIo } from "./link.ts";
import { type Classified, errorResponse, INTERNAL_ERROR, type JsonRpcError, type JsonRpcId } from "./jsonrpc.ts";
import { PendingRequests } from "./pending.ts";

/** The other end answered a request with a JSON-RPC error. */
export class RpcError extends Error {
  override name = "RpcError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** How a request ended: the other end's result or error. */
export type Outcome = { result: unknown } | { error: JsonRpcError };

/**
 * The cancellation of one request of the other end: `$/cancel_request` for it, or the connection's end.
 * Made on demand: a relay that only forwards a cancel (onCancel) creates no AbortController.
 */
export class Cancellation {
  #ac?: AbortController;
  #listeners?: (() => void)[];
  #cancelled = false;

  /** Aborted once the request is cancelled. */
  get signal(): AbortSignal {
    this.#ac ??= new AbortController();
    if (this.#cancelled) this.#ac.abort();
    return this.#ac.signal;
  }

  /** Calls `listener` once, when the request is cancelled (at once if it was). */
  onCancel(listener: () => void): void {
    if (this.#cancelled) return listener();
    (this.#listeners ??= []).push(listener);
  }

  /** Cancels the request: the signal aborts and the listeners are told, once. */
  cancel(): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.#ac?.abort();
    for (const listener of this.#listeners?.splice(0) ?? []) listener();
  }
}

/** Returned by an onRequest handler that will answer through respond(id, …) itself. */
export const ANSWER_LATER: unique symbol = Symbol("answer later");

export type RpcPeerOptions = LinkIo & {
  maxLineBytes: number;
  /** Answers a request of the other end; a throw answers with an error (RpcError keeps its code);
   *  ANSWER_LATER leaves the answer to respond(id, …). */
  onRequest(method: string, params: unknown, cancellation: Cancellation, id: JsonRpcId): unknown;
  onNotification(method: string, params: unknown): void;
  /** Answer malformed lines (-32700/-32600) and go on; else a malformed line ends the connection. */
  answerMalformed?: boolean;
  /** Take JSON-RPC batches: entries handled in order, what they make us send leaves as one batch, and
   *  the answers to their requests go back as one batch. Without it a batch is a malformed line. */
  batches?: boolean;
};

export class RpcPeer {
  readonly ended: Promise<LinkEnd>;
  readonly #link: Link;
  /** Our requests waiting for an answer, by id: told the outcome, or why none will come. */
  readonly #pending = new PendingRequests<(answer: Outcome | { closed: string }) => void>();
  /** Requests of the other end being answered, by its id: what `$/cancel_request` aborts, and where the
   *  answer goes (the link, or the batch it came in). */
  readonly #serving = new Map<JsonRpcId, { cancellation: Cancellation; reply: (answer: Record<string, unknown>) => void }>();
  #closed: string | undefined;

  constructor(private readonly opts: RpcPeerOptions) {
    this.#link = new Link({
      ...("port" in opts ? { port: opts.port } : { input: opts.input, sink: opts.sink }),
      maxLineBytes: opts.maxLineBytes,
      onMessage: (m) => this.#take(m, this.#toLink),
      onBatch: opts.batches ? (entries) => this.#takeBatch(entries) : undefined,
      onMalformed: opts.answerMalformed ? (bad) => (this.#link.send(errorResponse(bad.id, bad.error)), true) : undefined,
    });
    this.ended = this.#link.ended.then((end) => {
      this.#fail(`the connection ended (${end.reason})`);
      return end;
    });
  }

  /** Asks the other end; `signal` aborting sends `$/cancel_request` and stops waiting (rejects). */
  request<T = unknown>(method: string, params: unknown, signal?: AbortSignal): Promise<T> {
    if (this.#closed !== undefined) return Promise.reject(new Error(this.#closed));
    if (signal?.aborted) return Promise.reject(new Error("cancelled"));
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        if (!this.#pending.take(id)) return;
        this.cancel(id);
        reject(new Error("cancelled"));
      };
      const id = this.send(method, params, (answer) => {
        signal?.removeEventListener("abort", onAbort);
        if ("closed" in answer) reject(new Error(answer.closed));
        else if ("error" in answer) reject(new RpcError(answer.error.code, answer.error.message, answer.error.data));
        else resolve(answer.result as T);
      });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * Sends a request and returns its id; `settle` hears the outcome synchronously as the answer is read
   * (before the next message), or why none will come. A closed connection settles it at once.
   */
  send(method: string, params: unknown, settle: (answer: Outcome | { closed: string }) => void): JsonRpcId {
    const id = this.#pending.add(settle);
    if (this.#closed !== undefined) {
      this.#pending.take(id);
      settle({ closed: this.#closed });
      return id;
    }
    this.#link.send(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
    return id;
  }

  /** Asks the other end to cancel our request `id` (`$/cancel_request`); its answer is still awaited. */
  cancel(id: JsonRpcId): void {
    if (this.#closed === undefined) this.#link.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } });
  }

  /** Answers request `id` of the other end whose handler returned ANSWER_LATER; false when it is not waiting. */
  respond(id: JsonRpcId, outcome: Outcome): boolean {
    const serving = this.#serving.get(id);
    if (!serving) return false;
    this.#served(id);
    serving.reply("error" in outcome ? errorResponse(id, outcome.error) : { jsonrpc: "2.0", id, result: outcome.result });
    return true;
  }

  readonly #toLink = (answer: Record<string, unknown>): void => this.#link.send(answer);

  #take(m: Classified, reply: (answer: Record<string, unknown>) => void): void {
    if (m.kind === "malformed") return reply(errorResponse(m.id, m.error));
    if (m.kind === "response") return this.#answer(m.id, m.error, m.result);
    if (m.kind === "notification") {
      if (m.method === "$/cancel_request") return this.#serving.get((m.params as { requestId?: JsonRpcId })?.requestId ?? -1)?.cancellation.cancel();
      return this.opts.onNotification(m.method, m.params);
    }
    void this.#serve(m.id, m.method, m.params, reply);
  }

  /** A batch: its answers (malformed entries' included) leave as one batch once every request is answered. */
  #takeBatch(entries: Classified[]): void {
    const answers: Record<string, unknown>[] = [];
    let waiting = entries.filter((e) => e.kind === "request").length;
    let routing = true;
    const reply = (answer: Record<string, unknown>) => {
      answers.push(answer);
      if (answer.id !== null && --waiting === 0 && !routing) this.#link.sendBatch(answers);
    };
    this.#link.cork();
    try {
      for (const e of entries) this.#take(e, e.kind === "request" ? reply : (a) => answers.push(a));
    } finally {
      routing = false;
      this.#link.uncork();
    }
    if (waiting === 0) this.#link.sendBatch(answers);
  }

  /** Resolves once no request of the other end is still being answered (their answers are queued). */
  async settled(): Promise<void> {
    if (this.#serving.size > 0) await new Promise<void>((r) => this.#idle.push(r));
  }

  /** Resolves once everything queued so far is written. */
  flush(): Promise<void> {
    return this.#link.flush();
  }

  notify(method: string, params: unknown): void {
    if (this.#closed === undefined) this.#link.send({ jsonrpc: "2.0", method, params });
  }

  /** Stops answering: pending requests fail with `why`. */
  close(why = "the connection was closed"): void {
    this.#fail(why);
  }

  #answer(id: JsonRpcId | null, error: JsonRpcError | undefined, result: unknown): void {
    const settle = this.#pending.take(id);
    if (!settle) return;
    settle(error ? { error } : { result });
  }

  async #serve(id: JsonRpcId, method: string, params: unknown, reply: (answer: Record<string, unknown>) => void): Promise<void> {
    const cancellation = new Cancellation();
    this.#serving.set(id, { cancellation, reply });
    let later = false;
    try {
      const result = await this.opts.onRequest(method, params, cancellation, id);
      later = result === ANSWER_LATER;
      if (!later) reply({ jsonrpc: "2.0", id, result: result ?? {} });
    } catch (err) {
      reply(errorResponse(id, errorOf(err)));
    } finally {
      if (!later) this.#served(id);
    }
  }

  /** Waiting in settled() for the last request being answered. */
  readonly #idle: (() => void)[] = [];

  #served(id: JsonRpcId): void {
    this.#serving.delete(id);
    if (this.#serving.size === 0) for (const wake of this.#idle.splice(0)) wake();
  }

  #fail(why: string): void {
    this.#closed ??= why;
    for (const settle of this.#pending.takeAll()) settle({ closed: why });
    for (const { cancellation } of this.#serving.values()) cancellation.cancel();
  }
}

/** The JSON-RPC error a thrown value answers with: an RpcError keeps its code and data, anything else is -32603. */
export function errorOf(err: unknown): JsonRpcError {
  if (err instanceof RpcError) return { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) };
  return { code: INTERNAL_ERROR, message: err instanceof Error ? err.message : String(err) };
}
