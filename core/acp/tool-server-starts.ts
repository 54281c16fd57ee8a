// Owns starting a session's tool servers under the agent's bounds: at most MAX_SESSION_STARTS starts
// at once (a burst of session/new or session/load waits in line), each within SESSION_START_TIMEOUT_S,
// an abandoned start still holding its slot until it settles (so a burst never forks more than the
// bound), and start failures mapped to what the client must see. Does not build specs or prompts.
import type { Limits } from "../limits.ts";
import { LimitError } from "../limits.ts";
import { log } from "../log.ts";
import type { McpServerSpec, McpSessionTools } from "../mcp/types.ts";
import { createSemaphore, type Semaphore } from "../semaphore.ts";
import { AcpError, INTERNAL_ERROR, INVALID_PARAMS } from "./acp-error.ts";

export interface McpPoolLike {
  openTools(specs: McpServerSpec[], opts: { cwd: string }): Promise<McpSessionTools>;
}

export class ToolServerStarts {
  /** Session starts spawn servers: a burst waits in line instead of forking at once. */
  readonly #slots: Semaphore;

  constructor(
    private readonly pool: McpPoolLike,
    private readonly limits: Limits,
  ) {
    this.#slots = createSemaphore(limits.MAX_SESSION_STARTS);
  }

  /** Opens the servers, waiting its turn; rejects with an AcpError the client can act on. */
  async start(specs: McpServerSpec[], cwd: string): Promise<McpSessionTools> {
    const { limits } = this;
    const deadline = AbortSignal.timeout(limits.SESSION_START_TIMEOUT_S * 1000);
    const held = await this.#slots.acquire(deadline);
    if (!held || deadline.aborted) {
      if (held) this.#slots.release();
      throw new AcpError(
        INTERNAL_ERROR,
        `session could not start within ${limits.SESSION_START_TIMEOUT_S} s (SESSION_START_TIMEOUT_S): ` +
          `${this.#slots.held} sessions were starting and ${this.#slots.waiting} more waiting (MAX_SESSION_STARTS is ${limits.MAX_SESSION_STARTS}); try again`,
      );
    }
    // The slot is released when the pool's start settles, even if this request stops waiting first.
    let released = false;
    const release = () => {
      if (!released) (released = true), this.#slots.release();
    };
    let opening: Promise<McpSessionTools>;
    try {
      opening = this.pool.openTools(specs, { cwd });
    } catch (err) {
      release();
      throw startError(err);
    }
    opening.then(release, release);
    return this.#await(opening, deadline);
  }

  /** The start's result, or its abandonment (closed when it returns) past its timeout or the deadline. */
  async #await(opening: Promise<McpSessionTools>, deadline: AbortSignal): Promise<McpSessionTools> {
    const graceMs = this.limits.MCP_INIT_TIMEOUT_S * 1000 + 2000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onDeadline: (() => void) | undefined;
    const overdue = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`MCP servers did not start within ${graceMs} ms`)), graceMs);
      onDeadline = () => reject(new Error(`session could not start within ${this.limits.SESSION_START_TIMEOUT_S} s (SESSION_START_TIMEOUT_S)`));
      if (deadline.aborted) onDeadline();
      else deadline.addEventListener("abort", onDeadline, { once: true });
    });
    try {
      return await Promise.race([opening, overdue]);
    } catch (err) {
      opening.then(
        (t) => t.close(),
        (e: unknown) => log.debug("abandoned MCP start failed too", { error: e }),
      );
      throw startError(err);
    } finally {
      clearTimeout(timer);
      if (onDeadline) deadline.removeEventListener("abort", onDeadline);
    }
  }
}

/** The pool owns the server-count bound: too many servers is the request's fault (-32602); else -32603. */
function startError(err: unknown): AcpError {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof LimitError) return new AcpError(INVALID_PARAMS, message);
  return new AcpError(INTERNAL_ERROR, message, { cause: message });
}
