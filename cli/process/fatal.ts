// Owns the one exit policy of every protocol mode (agent, prompt, conductor, dev-mcp, crate-fetch
// --mcp and --proxy): a promise rejected where nothing awaits it is logged and the mode goes on (a CI
// run still ends with its result); an exception thrown where nothing catches it is logged, every
// process group is killed, what is owed on stdout is flushed within a bound, and the mode exits 1 (a
// wedged process after an unknown failure is worse than a dead one its client can restart); and at
// process exit, by whatever path, every live process group is SIGKILLed (the last resort: no tool
// process outlives its mode). The synchronous releases on a stop are stop-signals.ts's.
import { flushWithin } from "../../core/exit-flush.ts";
import { log } from "../../core/log.ts";
import { killAllGroupsNow } from "../../core/process-group.ts";

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

/** What the policy does on an uncaught exception; a mode that owes more (the agent's queued answers) says so. */
let fatalDeps: FatalDeps = {
  logError: (m, f) => log.error(m, f),
  killAllGroups: killAllGroupsNow,
  flush: () => Promise.resolve(),
  exit: (code) => process.exit(code),
};
let installed = false;

/**
 * Installs the policy (once per process; later calls only update what an uncaught exception flushes
 * and kills, and what exit kills). Every protocol mode calls this first thing.
 */
export function installExitPolicy(deps: Partial<FatalDeps> = {}): void {
  fatalDeps = { ...fatalDeps, ...deps };
  if (installed) return;
  installed = true;
  process.on("unhandledRejection", (reason) => {
    try {
      log.error("unhandled rejection (continuing)", { error: reason });
    } catch {
      // a failing log must not turn a stray rejection into an exit
    }
  });
  process.on("uncaughtException", (err) => void dieOfUncaught(err, fatalDeps));
  // Synchronous: nothing async runs at exit.
  process.once("exit", () => fatalDeps.killAllGroups());
}
