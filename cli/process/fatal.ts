// Owns what a protocol mode does when its own code throws where nothing catches it: log it, kill
// every process group, flush what is owed on stdout within a bound, exit 1. A wedged agent that
// keeps running after an unknown failure is worse than a dead one its client can restart.
import { flushWithin } from "../../core/exit-flush.ts";

export interface FatalDeps {
  logError(message: string, fields: Record<string, unknown>): void;
  killAllGroups(): void;
  flush(): Promise<unknown>;
  /** Default EXIT_FLUSH_MS (core/exit-flush.ts); tests shorten it. */
  flushBoundMs?: number;
  exit(code: number): void;
}

/** Handles one uncaught exception; resolves after `exit(1)` was called. Never throws. */
export async function dieOfUncaught(err: unknown, deps: FatalDeps): Promise<void> {
  try {
    deps.logError("uncaught exception; stopping (every tool process is killed)", { error: err });
  } catch {
    // logging must not stop the exit
  }
  deps.killAllGroups();
  // stdout may be gone: exiting is what matters now
  await flushWithin(deps.flush(), deps.flushBoundMs);
  deps.exit(1);
}
