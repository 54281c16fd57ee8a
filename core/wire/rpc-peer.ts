// Owns being one end of a JSON-RPC connection without an SDK: our requests and their answers by id,
// notifications both ways, handlers for what the other end asks (each with a signal that aborts on
// `$/cancel_request` or when the connection ends), and cancelling our own requests the same way —
// over Link (the bounded line reader, the classifier, one writer). Messages are taken as they come:
// nothing is validated away, so an update kind this end does not know still reaches its handler.
import { Link, type LinkEnd } from "./link.ts";
import { errorResponse, INTERNAL_ERROR, type JsonRpcError, type JsonRpcId } from "./jsonrpc.ts";
import type { ByteSink } from "./writer.ts";

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

export interface RpcPeerOptions {
  input: AsyncIterable<Uint8Array>;
  sink: ByteSink;
  maxLineBytes: number;
  /** Answers a request of the other end; a throw answers with an error (RpcError keeps its code). */
  onRequest(method: string, params: unknown, signal: AbortSignal): unknown;
  onNotification(method: string, params: unknown): void;
  /** Answer malformed lines (-32700/-32600) and go on; else a malformed line ends the connection. */
  answerMalformed?: boolean;
}

export class RpcPeer {
  readonly ended: Promise<LinkEnd>;
  readonly #link: Link;
  readonly #pending = new Map<JsonRpcId, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  /** Requests of the other end being answered, by its id: what `$/cancel_request` aborts. */
  readonly #serving = new Map<JsonRpcId, AbortController>();
  #nextId = 0;
  #closed: string | undefined;

  constructor(private readonly opts: RpcPeerOptions) {
    this.#link = new Link({
      input: opts.input,
      sink: opts.sink,
      maxLineBytes: opts.maxLineBytes,
      onMessage: (m) => {
        if (m.kind === "response") return this.#answer(m.id, m.error, m.result);
        if (m.kind === "notification") {
          if (m.method === "$/cancel_request") return this.#serving.get((m.params as { requestId?: JsonRpcId })?.requestId ?? -1)?.abort();
          return opts.onNotification(m.method, m.params);
        }
        void this.#serve(m.id, m.method, m.params);
      },
      onMalformed: opts.answerMalformed ? (bad) => (this.#link.send(errorResponse(bad.id, bad.error)), true) : undefined,
    });
    this.ended = this.#link.ended.then((end) => {
      this.#fail(`the connection ended (${end.reason})`);
      return end;
    });
  }

  /** Asks the other end; `signal` aborting sends `$/cancel_request` and stops waiting (rejects). */
  request<T = any>(method: string, params: unknown, signal?: AbortSignal): Promise<T> {
    if (this.#closed !== undefined) return Promise.reject(new Error(this.#closed));
    if (signal?.aborted) return Promise.reject(new Error("cancelled"));
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        if (!this.#pending.delete(id)) return;
        this.#link.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } });
        reject(new Error("cancelled"));
      };
      const done = () => signal?.removeEventListener("abort", onAbort);
      this.#pending.set(id, { resolve: (v) => (done(), resolve(v as T)), reject: (e) => (done(), reject(e)) });
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#link.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  /** Resolves once no request of the other end is still being answered (their answers are queued). */
  async settled(): Promise<void> {
    while (this.#serving.size > 0) await new Promise((r) => setTimeout(r, 5));
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
    const p = id === null ? undefined : this.#pending.get(id);
    if (!p) return;
    this.#pending.delete(id!);
    if (error) p.reject(new RpcError(error.code, error.message, error.data));
    else p.resolve(result);
  }

  async #serve(id: JsonRpcId, method: string, params: unknown): Promise<void> {
    const ac = new AbortController();
    this.#serving.set(id, ac);
    try {
      const result = await this.opts.onRequest(method, params, ac.signal);
      this.#link.send({ jsonrpc: "2.0", id, result: result ?? {} });
    } catch (err) {
      const e = err instanceof RpcError ? { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) } : { code: INTERNAL_ERROR, message: err instanceof Error ? err.message : String(err) };
      this.#link.send(errorResponse(id, e));
    } finally {
      this.#serving.delete(id);
    }
  }

  #fail(why: string): void {
    this.#closed ??= why;
    for (const p of this.#pending.values()) p.reject(new Error(why));
    this.#pending.clear();
    for (const ac of this.#serving.values()) ac.abort();
  }
}
