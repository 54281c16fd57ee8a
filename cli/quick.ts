// Owns the paths that need no command line parser: `--version`, and the `rg`/`tree` shims (by argv0
// or as `tendril rg …`). Neither loads commander or the modes, so the cheapest calls to the binary —
// and every `rg` an agent's shell runs — stay close to a bare process start.
import { VERSION } from "../core/version.ts";

/** The text to print for `args` when no mode needs to run, else undefined. */
export function quickAnswer(args: readonly string[]): string | undefined {
  if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) return `${VERSION}\n`;
  return undefined;
}

/** Runs a shim when this call is one (`rg`/`tree` as argv0, or the first argument); else undefined. */
export function shimCall(invokedAs: string, args: readonly string[]): Promise<number> | undefined {
  if (invokedAs === "rg" || invokedAs === "tree") return runShim(invokedAs, [...args]);
  if (args[0] === "rg" || args[0] === "tree") return runShim(args[0], args.slice(1));
  return undefined;
}

export async function runShim(name: "rg" | "tree", args: string[]): Promise<number> {
  const mod = name === "rg" ? await import("./rg.ts") : await import("./tree.ts");
  return mod.run(args);
}
