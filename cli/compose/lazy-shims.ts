// Owns when a shell's shim folder exists: it is made with the first shell command (folders of dead
// owners swept first) and removed on every exit path, so a run that starts no command never makes one
// and a process stopped during its start-up has none to leave behind. The folder is made in one
// synchronous step, so a stop either finds it made (and removes it) or keeps it from being made.
// shim-dir.ts makes and removes it (loaded only then). Used by the agent's in-process tools and by
// `tendril dev-mcp`.
import { withPathFirst } from "../../core/child-env.ts";
import { log } from "../../core/log.ts";

export interface LazyShims {
  /** The environment for a shell command: `base()` with the shim folder first on PATH (made on the
   *  first call; once stopping, `base()` alone). */
  env(): Promise<Record<string, string>>;
  /** Removes the folder if it was made, and keeps it from being made later; idempotent and
   *  synchronous, so every exit path can call it. */
  dispose(): void;
}

export function lazyShims(base: () => Record<string, string>): LazyShims {
  let disposed = false;
  let made: { dir: string; env: Record<string, string>; remove: (dir: string) => void } | undefined;
  const madeEnv = () => made?.env;
  return {
    async env() {
      const ready = madeEnv();
      if (ready) return ready;
      const { makeShimDir, removeShimDir, sweepStaleShimDirs } = await import("../process/shim-dir.ts");
      const meanwhile = madeEnv(); // another command made it while the module loaded
      if (meanwhile) return meanwhile;
      if (disposed) return base(); // stopping: a folder made now could outlive the process
      const swept = sweepStaleShimDirs();
      if (swept > 0) log.info("removed shim folders of dead owners", { count: swept });
      const dir = makeShimDir(); // throws (a full TMPDIR): this command fails, the next one tries again
      const env = base();
      // The rg shim skips its own folder by itself (findRealRg compares real paths with this binary).
      made = { dir, remove: removeShimDir, env: withPathFirst(env, dir) };
      return made.env;
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      if (made) made.remove(made.dir);
    },
  };
}
