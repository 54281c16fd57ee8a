// Owns being one end of a JSON-RPC connection without an SDK: our requests and their answers by id,
// notifications both ways, and handlers for what the other end asks — over the conductor's Link (the
// bounded line reader, the classifier, one writer). Messages are taken as they come: nothing is
// validated away, so an update kind this client does not know still reaches its handler.
import { Link, type LinkEnd } from "../conductor/link.ts";
import { errorResponse, INTERNAL_ERROR, type JsonRpcError, type JsonRpcId } from "../wire/jsonrpc.ts";
import type { ByteSink } from "../wire/writer.ts";

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
  onRequest(method: string, params: unknown): unknown;
  onNotification(method: string, params: unknown): void;
}

export class RpcPeer {
  readonly ended: Promise<LinkEnd>;
  readonly #link: Link;
  readonly #pending = new Map<JsonRpcId, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  #nextId = 0;
  #closed: string | undefined;

  constructor(private readonly opts: RpcPeerOptions) {
    this.#link = new Link({
      input: opts.input,
      sink: opts.sink,
      maxLineBytes: opts.maxLineBytes,
      onMessage: (m) => {
        if (m.kind === "response") return this.#answer(m.id, m.error, m.result);
        if (m.kind === "notification") return opts.onNotification(m.method, m.params);
        void this.#serve(m.id, m.method, m.params);
      },
    });
    this.ended = this.#link.ended.then((end) => {
      this.#fail(`the connection ended (${end.reason})`);
      return end;
    });
  }

  request<T = any>(method: string, params: unknown): Promise<T> {
    if (this.#closed !== undefined) return Promise.reject(new Error(this.#closed));
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#link.send({ jsonrpc: "2.0", id, method, params });
    });
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
    try {
      const result = await this.opts.onRequest(method, params);
      this.#link.send({ jsonrpc: "2.0", id, result: result ?? {} });
    } catch (err) {
      const e = err instanceof RpcError ? { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) } : { code: INTERNAL_ERROR, message: err instanceof Error ? err.message : String(err) };
      this.#link.send(errorResponse(id, e));
    }
  }

  #fail(why: string): void {
    this.#closed ??= why;
    for (const p of this.#pending.values()) p.reject(new Error(why));
    this.#pending.clear();
  }
}
