// Owns running a real ripgrep for the `rg` shim: its arguments and standard streams as given, the stop
// signals forwarded, its exit code (or 128 + the signal) as ours.
import { spawn } from "node:child_process";
import { constants as osConstants } from "node:os";
import { inheritedEnv } from "../../core/child-env.ts";

export function execReal(path: string, args: string[]): Promise<number> {
  return new Promise((resolvePromise) => {
    // The marker stops a wrapper script that calls this shim again from looping back to it.
    const child = spawn(path, args, { stdio: "inherit", env: inheritedEnv(process.env, { TENDRIL_RG_BUILTIN: "1" }) });
    const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
    const handlers = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((s) => [s, forward(s)] as const);
    for (const [s, h] of handlers) process.on(s, h);
    const done = (code: number) => {
      for (const [s, h] of handlers) process.off(s, h);
      resolvePromise(code);
    };
    child.on("error", (err) => {
      process.stderr.write(`rg: could not run ${path}: ${err.message}\n`);
      done(2);
    });
    child.on("exit", (code, signal) => {
      const signo = signal ? osConstants.signals[signal] : 0;
      done(code ?? 128 + (signo ?? 0));
    });
  });
}
