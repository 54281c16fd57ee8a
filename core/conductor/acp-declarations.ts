// Owns which bridged MCP-over-ACP declarations the conductor still answers for: each is held by the
// sessions that declared it (one server id may serve many sessions) and by the session request in
// flight that declares it, and is dropped when no holder is left: the session was closed or deleted, a load or
// resume of it declared other servers, or the request that declared it failed.
// Does not rewrite declarations or relay MCP (mcp-bridge.ts).
import type { AcpMcpDeclaration } from "./mcp-over-acp.ts";

/** What the edge does with a session request's answer: a hook for success and one for failure. */
export interface AnswerHooks {
  answer: (result: unknown) => unknown;
  failed: () => void;
}

export class AcpDeclarations {
  readonly #byId = new Map<string, AcpMcpDeclaration>();
  /** Server id → its holders (`s:` + a session id, or `r:` + a request number). */
  readonly #holders = new Map<string, Set<string>>();
  /** Holder → the server ids it holds. */
  readonly #held = new Map<string, Set<string>>();
  #requests = 0;

  /** The declaration a bridge process names, while some session or request holds it. */
  get(id: string): AcpMcpDeclaration | undefined {
    return this.#byId.get(id);
  }

  /** Declarations held, for tests and logs. */
  get size(): number {
    return this.#byId.size;
  }

  /**
   * A session request reaching the agent, with the declarations it bridges: they are held at once (the
   * agent starts their bridge processes before it answers) and, on its answer, become the session's
   * (replacing what the session held) or are dropped. Undefined when there is nothing to track.
   */
  track(method: string, params: Record<string, unknown>, bridged: AcpMcpDeclaration[]): AnswerHooks | undefined {
    // Closed or deleted: the session holds nothing from now on.
    if (method === "session/close" || method === "session/delete") {
      const session = sessionKey(params.sessionId);
      if (!session || !this.#held.has(session)) return undefined;
      return { answer: (r) => (this.#release(session), r), failed: () => {} };
    }
    // new and fork make a session the answer names; load and resume name theirs in the request.
    const named = method === "session/new" || method === "session/fork" ? undefined : sessionKey(params.sessionId);
    if (bridged.length === 0 && !(named && this.#held.has(named))) return undefined;
    const request = `r:${this.#requests++}`;
    for (const d of bridged) this.#hold(request, d);
    return {
      answer: (r) => {
        const session = named ?? sessionKey((r as { sessionId?: unknown } | null)?.sessionId);
        if (session) {
          const before = this.#take(session);
          for (const id of this.#held.get(request) ?? []) this.#hold(session, this.#byId.get(id)!);
          this.#drop(before);
        }
        this.#release(request);
        return r;
      },
      failed: () => this.#release(request),
    };
  }

  #hold(holder: string, d: AcpMcpDeclaration): void {
    this.#byId.set(d.id, d);
    const holders = this.#holders.get(d.id) ?? new Set();
    holders.add(holder);
    this.#holders.set(d.id, holders);
    const held = this.#held.get(holder) ?? new Set();
    held.add(d.id);
    this.#held.set(holder, held);
  }

  /** Removes a holder's claims; returns the ids it held. */
  #take(holder: string): string[] {
    const ids = [...(this.#held.get(holder) ?? [])];
    this.#held.delete(holder);
    for (const id of ids) this.#holders.get(id)?.delete(holder);
    return ids;
  }

  /** Forgets the ids no holder claims any more. */
  #drop(ids: string[]): void {
    for (const id of ids) {
      if ((this.#holders.get(id)?.size ?? 0) > 0) continue;
      this.#holders.delete(id);
      this.#byId.delete(id);
    }
  }

  #release(holder: string): void {
    this.#drop(this.#take(holder));
  }
}

function sessionKey(id: unknown): string | undefined {
  return typeof id === "string" && id !== "" ? `s:${id}` : undefined;
}
