// Owns how a mode learns it must stop: SIGTERM, SIGHUP (its terminal closed) and SIGINT, caught for the
// whole watch (a second signal never skips the exit path); the synchronous releases (shim and bridge
// folders) run first of all on a stop and again at exit; a signal's exit code, 128 + its number.
// Each mode keeps its own exit path; every mode that serves or fetches watches its stop signals here.

export type StopSignal = "SIGHUP" | "SIGINT" | "SIGTERM";

/** POSIX fixes these numbers on every platform Tendril runs on. */
const NUMBERS: Record<StopSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

const releases = new Set<() => void>();
let exitHooked = false;

/** The shell's convention for a death by `sig`: 129 (SIGHUP), 130 (SIGINT), 143 (SIGTERM). */
export function signalExitCode(sig: StopSignal): number {
  return 128 + NUMBERS[sig];
}

function releaseAll(): void {
  for (const release of releases) {
    try {
      release();
    } catch {
      // one failed removal must not keep the others from running
    }
  }
}

/**
 * Registers a synchronous, idempotent release that must not wait for the exit path: whoever sent the
 * signal may SIGKILL us a grace period later (a conductor's or an agent's kill ladder). It runs on the
 * first stop signal and at process exit. Returns its removal.
 */
export function releaseOnStop(release: () => void): () => void {
  releases.add(release);
  if (!exitHooked) {
    exitHooked = true;
    process.once("exit", releaseAll);
  }
  return () => void releases.delete(release);
}

export interface StopOptions {
  /**
   * A SIGINT a mode can absorb: `absorb` cancels what runs and returns true when there was something
   * (the mode serves on); a second SIGINT within `repeatMs`, or one when nothing ran, stops.
   */
  interrupt?: { absorb: () => boolean; repeatMs: number };
}

export interface StopWatch {
  /** Resolves with the first signal that stops the mode (the releases have run by then). */
  readonly stopped: Promise<StopSignal>;
  /** Removes the handlers (a mode that returns to a caller rather than exiting). */
  dispose(): void;
}

/** Catches the stop signals from now on. */
export function watchStopSignals(opts: StopOptions = {}): StopWatch {
  let resolve!: (sig: StopSignal) => void;
  const stopped = new Promise<StopSignal>((r) => (resolve = r));
  let lastInterrupt = -Infinity;
  const handlers = (Object.keys(NUMBERS) as StopSignal[]).map((sig) => {
    const handler = () => {
      if (sig === "SIGINT" && opts.interrupt) {
        const now = Date.now();
        const repeated = now - lastInterrupt < opts.interrupt.repeatMs;
        lastInterrupt = now;
        if (!repeated && opts.interrupt.absorb()) return;
      }
      releaseAll();
      resolve(sig);
    };
    process.on(sig, handler);
    return [sig, handler] as const;
  });
  return {
    stopped,
    dispose: () => {
      for (const [sig, handler] of handlers) process.off(sig, handler);
    },
  };
}
