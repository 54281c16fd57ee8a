// Owns the `rg` shim's process: run a real ripgrep from PATH when there is one (not this binary,
// cli/modes/rg-real.ts), else the built-in search (cli/modes/rg-builtin.ts); each loads only when chosen.
import { accessSync, constants, realpathSync } from "node:fs";
import { delimiter, join } from "node:path";

function realpathOr(p: string | undefined): string | undefined {
  if (!p) return undefined;
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/** The first `rg` on PATH that is not this binary (a shim link to it would call us again). */
export function findRealRg(env: Record<string, string | undefined> = process.env): string | undefined {
  const self = new Set([realpathOr(process.execPath), realpathOr(process.argv[1])].filter(Boolean));
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, "rg");
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    const real = realpathOr(candidate);
    if (real && !self.has(real)) return candidate;
  }
  return undefined;
}

export async function run(args: string[]): Promise<number> {
  if (process.env.TENDRIL_RG_BUILTIN !== "1") {
    const real = findRealRg();
    if (real) return (await import("./rg-real.ts")).execReal(real, args);
  }
  return (await import("./rg-builtin.ts")).runBuiltinRg(args);
}
