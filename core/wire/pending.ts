// Owns correlating the requests one end sent with their answers: ids given in order from a first one,
// each waiting entry taken exactly once (its answer, its cancellation or the connection's end). The
// peer, the router's hops and agent side, and the MCP-over-ACP client requests keep theirs here; what
// an entry holds (a promise's settle, where a relayed answer goes) is theirs.
import type { JsonRpcId } from "./jsonrpc.ts";

export class PendingRequests<T> {
  #nextId: number;
  readonly #waiting = new Map<JsonRpcId, T>();

  constructor(firstId = 0) {
    this.#nextId = firstId;
  }

  /** The id the next request will get. */
  get nextId(): number {
    return this.#nextId;
  }

  get size(): number {
    return this.#waiting.size;
  }

  /** A new request waits with `entry`: its id. */
  add(entry: T): number {
    const id = this.#nextId++;
    this.#waiting.set(id, entry);
    return id;
  }

  has(id: JsonRpcId): boolean {
    return this.#waiting.has(id);
  }

  /** The entry waiting on `id`, no longer waiting; undefined when none is (answered already, or never sent). */
  take(id: JsonRpcId | null | undefined): T | undefined {
    if (id === null || id === undefined) return undefined;
    const entry = this.#waiting.get(id);
    if (entry !== undefined) this.#waiting.delete(id);
    return entry;
  }

  /** Every waiting entry, none waiting any more (the connection ended). */
  takeAll(): T[] {
    const all = [...this.#waiting.values()];
    this.#waiting.clear();
    return all;
  }
}
