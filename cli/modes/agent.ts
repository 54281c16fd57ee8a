// Owns `tendril agent` on the command line: its flags, the environment it reads (help), and its
// subcommands (login, logout, approvals). The mode itself (cli/modes/agent-run.ts) loads when it runs.
import type { Command } from "commander";
import { PERMISSION_MODES } from "../../core/policy/modes.ts";
import { SANDBOX_MODES } from "../../core/sandbox-modes.ts";
import type { AgentFlags } from "./agent-run.ts";
import { describeApprovals } from "./approvals.ts";
import type { ExitBox } from "../process/exit-box.ts";
import { describeLogin } from "./login.ts";

const ENV_HELP = `
Configuration (flag > environment > config file > default):
  TENDRIL_PROVIDER            anthropic | openai (any OpenAI-compatible endpoint) | replay
                              (default: the provider whose key is set, else the first one in
                              credentials.toml, else openai)
  TENDRIL_MODEL               model id (default: the provider's current default)
  ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL   as the official SDK reads them
  OPENAI_API_KEY, OPENAI_BASE_URL         e.g. OPENAI_BASE_URL=http://127.0.0.1:11434/v1 for Ollama
  TENDRIL_OPENAI_API          responses | chat (default: responses on OpenAI's own endpoint, chat elsewhere)
  (keys can instead be stored once: tendril agent login; the environment wins over the file)
  TENDRIL_MAX_TOKENS          output token cap (default 32768)
  TENDRIL_CONTEXT_WINDOW      context window in tokens (default 200000)
  TENDRIL_MODE                ${PERMISSION_MODES.join(" | ")} (default ask)
  TENDRIL_CONFIG              config file (default $XDG_CONFIG_HOME/tendril/config.toml)
  TENDRIL_PROFILE             agent profile: NAME ($XDG_CONFIG_HOME/tendril/agents/NAME.toml) or a path
  TENDRIL_MCP_HOOK_SERVERS    servers whose _Stop/_PostCompact tools run as hooks: a,b or * (default none)
  TENDRIL_RECORD=FILE         append every LLM exchange to FILE (JSONL)
  TENDRIL_REPLAY=FILE         with TENDRIL_PROVIDER=replay: answer from a recorded FILE
  TENDRIL_LOG                 error | warn | info | debug (stderr; default warn)
  TENDRIL_SANDBOX             ${SANDBOX_MODES.join(" | ")}: confine shell commands (default off)
  TENDRIL_PASS_ENV            NAME,… of ours the dev tools' shell commands also get (default: only
                              PATH, HOME, USER, LANG, TERM, SHELL, TMPDIR, LC_*, TENDRIL_*)
  TENDRIL_<LIMIT>             override any limit, e.g. TENDRIL_MAX_LINE_BYTES=256, TENDRIL_MCP_INIT_TIMEOUT_S=5

Permission rules go in the config file as [[rules]] tables (tool glob, decision allow|deny|ask, optional
when = {arg, prefix|glob|regex|inside_workspace}). stdout carries only ACP messages; logs go to stderr.`;

export function describeAgent(program: Command, exit: ExitBox): void {
  const agent = program
    .command("agent")
    .description("run the ACP coding agent on stdio (an editor's agent_servers entry)")
    .option("--model <id>", "model id (TENDRIL_MODEL)")
    .option("--provider <name>", "anthropic | openai | replay (TENDRIL_PROVIDER)")
    .option("--mode <mode>", `${PERMISSION_MODES.join(" | ")} (TENDRIL_MODE)`)
    .option("--config <file>", "config file (TENDRIL_CONFIG)")
    .option("--profile <name>", "agent profile: NAME or a .toml path (TENDRIL_PROFILE)")
    .option("--log <level>", "error | warn | info | debug (TENDRIL_LOG)")
    .option("--pass-env <NAMES>", "also give the dev tools' shell commands these variables, e.g. GITHUB_TOKEN,NPM_TOKEN (TENDRIL_PASS_ENV)")
    .option("--sandbox <setting>", `${SANDBOX_MODES.join(" | ")}: confine shell commands with bubblewrap (TENDRIL_SANDBOX)`)
    .option("--check-sandbox", "print whether each sandbox setting works on this machine; exit 0 if all do, else 1")
    .addHelpText("after", ENV_HELP)
    .action(async (flags: AgentFlags) => {
      const mode = await import("./agent-run.ts");
      exit.code = flags.checkSandbox ? await mode.checkSandboxHere() : await mode.runAgent(flags);
    });
  describeApprovals(agent, exit);
  describeLogin(agent, exit);
}

