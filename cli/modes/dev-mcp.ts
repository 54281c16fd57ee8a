// Owns `tendril dev-mcp` on the command line: its flags and help. The mode itself (cli/modes/dev-mcp-run.ts)
// loads when it runs.
import type { Command } from "commander";
import type { ExitBox } from "../process/exit-box.ts";
import type { DevMcpFlags } from "./dev-mcp-run.ts";

export function describeDevMcp(program: Command, exit: ExitBox): void {
  program
    .command("dev-mcp")
    .description("run the MCP tool server on stdio: shell, str_replace, todo (+ _Stop/_PostCompact hooks)")
    .option("--root <DIR>", "workspace root the tools are confined to (default: the current directory)")
    .option("--config <file>", "config file (TENDRIL_CONFIG)")
    .option("--log <level>", "error | warn | info | debug (TENDRIL_LOG)")
    .option("--pass-env <NAMES>", "also give shell commands these variables, e.g. GITHUB_TOKEN,NPM_TOKEN (TENDRIL_PASS_ENV)")
    .option("--sandbox <setting>", "off | read-only | workspace-write: confine shell commands with bubblewrap (TENDRIL_SANDBOX)")
    .addHelpText("after", PASS_ENV_HELP)
    .action(async (flags: DevMcpFlags) => {
      exit.code = await (await import("./dev-mcp-run.ts")).runDevMcp(flags);
    });
}

const PASS_ENV_HELP = `
Shell commands get PATH, HOME, USER, LANG, TERM, SHELL, TMPDIR, LC_* and TENDRIL_* from this server's
environment, as the agent's own dev tools do, plus the variables --pass-env names; never the rest
(API keys, cloud credentials). stdout carries only MCP messages; logs go to stderr.
Limits: TENDRIL_<LIMIT>, e.g. TENDRIL_SHELL_TIMEOUT_S=30.`;
