// Owns the paths that need no command line parser: `--version`, the `rg`/`tree` shims (by argv0 or
// as `tendril rg …`), a bare `tendril agent` (what an editor runs: there are no flags to parse) and
// `tendril prompt` with plain flags (what CI runs).
// None loads commander, so the cheapest calls to the binary — every `rg` an agent's shell runs, every
// agent an editor starts — stay close to a bare process start.
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
  // The sandbox's first process under sandbox_allow_domains (tools/dev/sandbox-forward.ts).
  if (args[0] === "sandbox-forward") return import("../tools/dev/sandbox-forward.ts").then((m) => m.run(args.slice(1)));
  return undefined;
}

/** Runs `tendril agent` with no flags at all, or `tendril prompt` with plain flags, without commander;
 *  resolves undefined when the full command line parser must take the call. */
export function modeCall(args: readonly string[]): Promise<number | undefined> {
  if (args.length === 1 && args[0] === "agent") return import("./modes/agent-run.ts").then((m) => m.runAgent({}));
  if (args[0] === "prompt" || args[0] === "yopo") return import("./modes/prompt-run.ts").then((m) => m.runPromptFast(args.slice(1)));
  return Promise.resolve(undefined);
}

export async function runShim(name: "rg" | "tree", args: string[]): Promise<number> {
  const mod = name === "rg" ? await import("./modes/rg.ts") : await import("./modes/tree.ts");
  return mod.run(args);
}
