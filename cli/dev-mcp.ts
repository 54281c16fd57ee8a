// Owns `tendril dev-mcp`: flags and environment → the shell, str_replace and todo tools (plus the
// `_Stop`/`_PostCompact` hooks) served over stdio, the shim dir on the shell's PATH, and the exit path
// (stdin EOF, SIGTERM/SIGINT/SIGHUP) that kills every process group and removes the shim dir.
import type { Command } from "commander";
import { rmSync } from "node:fs";
import type { ExitBox } from "./exit-box.ts";
import { readFileOrUndefined } from "./optional-file.ts";

interface DevMcpFlags {
  root?: string;
  config?: string;
  log?: string;
}

export function describeDevMcp(program: Command, exit: ExitBox): void {
  program
    .command("dev-mcp")
    .description("run the MCP tool server on stdio: shell, str_replace, todo (+ _Stop/_PostCompact hooks)")
    .option("--root <DIR>", "workspace root the tools are confined to (default: the current directory)")
    .option("--config <file>", "config file (TENDRIL_CONFIG)")
    .option("--log <level>", "error | warn | info | debug (TENDRIL_LOG)")
    .addHelpText("after", "\nstdout carries only MCP messages; logs go to stderr. Limits: TENDRIL_<LIMIT>, e.g. TENDRIL_SHELL_TIMEOUT_S=30.")
    .action(async (flags: DevMcpFlags) => {
      exit.code = await runDevMcp(flags);
    });
}

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A 0700 temp dir with `rg` and `tree`: links to the binary, or wrapper scripts when run from source. */
async function makeShimDir(): Promise<string> {
  const { mkdtemp, writeFile } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { selfCommand } = await import("./self.ts");
  const dir = await mkdtemp(join(tmpdir(), "tendril-shims-"));
  const self = selfCommand();
  if (self.args.length === 0) {
    const { writeShimLinks } = await import("./shim-links.ts");
    await writeShimLinks(dir, self.command);
    return dir;
  }
  for (const name of ["rg", "tree"]) {
    const argv = [self.command, ...self.args, name].map(shQuote).join(" ");
    await writeFile(join(dir, name), `#!/bin/sh\nexec ${argv} "$@"\n`, { mode: 0o755 });
  }
  return dir;
}

function commandEnv(shimDir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  env.PATH = env.PATH ? `${shimDir}:${env.PATH}` : shimDir;
  // Lets the rg shim skip its own directory when it looks for a real ripgrep on PATH.
  env.TENDRIL_SHIM_DIR = shimDir;
  return env;
}

async function resolveRoot(input: string): Promise<string> {
  const { realpath, stat } = await import("node:fs/promises");
  const { resolve } = await import("node:path");
  const real = await realpath(resolve(input)).catch(() => undefined);
  if (real === undefined || !(await stat(real)).isDirectory()) throw new Error(`--root ${input}: not a directory`);
  return real;
}

async function runDevMcp(flags: DevMcpFlags): Promise<number> {
  const { loadConfig } = await import("../core/config.ts");
  const { log, setLogLevel, setLogScope } = await import("../core/log.ts");
  setLogScope("tendril dev-mcp");
  let cfg;
  let root: string;
  try {
    cfg = loadConfig({ config: flags.config, log: flags.log }, process.env, readFileOrUndefined);
    setLogLevel(cfg.logLevel);
    root = await resolveRoot(flags.root ?? process.cwd());
  } catch (err) {
    process.stderr.write(`tendril dev-mcp: ${(err as Error).message}\n`);
    return 2;
  }
  // A stray rejection must not take the server (and its children's cleanup) down with it.
  process.on("unhandledRejection", (err) => log.error("unhandled rejection", { error: err }));
  const shimDir = await makeShimDir();
  const { buildDevTools } = await import("./dev-mcp-tools.ts");
  const dev = await buildDevTools({ root, limits: cfg.limits, cacheDir: cfg.paths.cacheDir, env: commandEnv(shimDir) });
  const removeShims = () => rmSync(shimDir, { recursive: true, force: true });
  // Last resort for paths that skip the orderly shutdown below (an uncaught error, process.exit elsewhere).
  process.once("exit", () => {
    dev.shell.groups.killAllNow();
    removeShims();
  });
  const { serveMcp } = await import("../core/mcp/server.ts");
  const { VERSION } = await import("../core/version.ts");
  const serving = await serveMcp({
    name: "tendril-dev",
    version: VERSION,
    instructions: dev.instructions,
    tools: dev.tools,
    input: process.stdin,
    output: process.stdout,
    maxLineBytes: cfg.limits.MAX_LINE_BYTES,
  });
  log.info("serving", { root, shims: shimDir, artifacts: dev.artifactDir });
  const signalled = new Promise<string>((resolve) => {
    for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.once(sig, () => resolve(sig));
  });
  const why = await Promise.race([serving.closed, signalled]);
  log.info("stopping", { why, running: dev.shell.groups.size });
  await Promise.all([serving.close(), dev.shell.groups.killAll()]);
  removeShims();
  return 0;
}
