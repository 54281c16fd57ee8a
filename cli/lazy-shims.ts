// Owns when a shell's shim folder exists: it is made with the first shell command (folders of dead
// owners swept first) and removed on every exit path, so a run that starts no command never makes one
// and a process stopped during its start-up has none to leave behind. shim-dir.ts makes and removes it
// (loaded only then). Used by the agent's in-process tools and by `tendril dev-mcp`.
import { log } from "../core/log.ts";

export interface LazyShims {
  /** The environment for a shell command: `base()` with the shim folder first on PATH (made on the first call). */
  env(): Promise<Record<string, string>>;
  /** Removes the folder if it was made; idempotent and synchronous, so every exit path can call it. */
  dispose(): void;
}

export function lazyShims(base: () => Record<string, string>): LazyShims {
  let disposed = false;
  let made: { dir: string; remove: (dir: string) => void } | undefined;
  let ready: Promise<Record<string, string>> | undefined;
  return {
    env: () =>
      (ready ??= (async () => {
        const { makeShimDir, removeShimDir, sweepStaleShimDirs } = await import("./shim-dir.ts");
        const swept = sweepStaleShimDirs();
        if (swept > 0) log.info("removed shim folders of dead owners", { count: swept });
        const dir = await makeShimDir();
        made = { dir, remove: removeShimDir };
        if (disposed) removeShimDir(dir); // the process is stopping: the folder must not outlive it
        const env = base();
        // TENDRIL_SHIM_DIR lets the rg shim skip its own folder when it looks for a real ripgrep on PATH.
        return { ...env, PATH: env.PATH ? `${dir}:${env.PATH}` : dir, TENDRIL_SHIM_DIR: dir };
      })().catch((err: unknown) => {
        ready = undefined; // a full TMPDIR now need not fail every later command
        throw err;
      })),
    dispose: () => {
      if (disposed) return;
      disposed = true;
      if (made) made.remove(made.dir);
    },
  };
}
