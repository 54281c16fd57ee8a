// Owns the command line: the list of modes, `--help`/`--version`, and usage errors (exit 2, one line).
// Each mode describes its own flags in cli/<mode>.ts; heavy code loads only inside a mode's action.
import { Command, CommanderError } from "commander";
import { describeShims } from "./modes/shims.ts";
import { describeAgent } from "./modes/agent.ts";
import { describePrompt } from "./modes/prompt.ts";
import { describeDevMcp } from "./modes/dev-mcp.ts";
import { describeCrateFetch } from "./modes/crate-fetch.ts";
import { describeConductor } from "./modes/conductor.ts";

export { VERSION } from "../core/version.ts";
import { VERSION } from "../core/version.ts";
import type { ExitBox } from "./process/exit-box.ts";
import { runShim } from "./quick.ts";

/** Finds the (sub)command the failing argv was aimed at, to point at its --help. */
function targetCommand(program: Command, args: string[]): Command {
  const sub = program.commands.find((c) => c.name() === args[0] || c.aliases().includes(args[0] ?? ""));
  return sub ?? program;
}

/** commander's message on one line; its own "did you mean" (a close enough name) is kept, never a guess. */
function oneLine(err: CommanderError): string {
  let text = err.message.replace(/^error:\s*/, "").replace(/\s*\n\s*/g, " ");
  text = text.replace(/\(Did you mean (.+?)\?\)/, "(did you mean $1?)");
  return text;
}

/** Each mode's name (and aliases) → what describes it on the command line. */
const MODES: { names: string[]; describe: (program: Command, exit: ExitBox) => void }[] = [
  { names: ["shims"], describe: describeShims },
  { names: ["agent"], describe: describeAgent },
  { names: ["prompt", "yopo"], describe: describePrompt },
  { names: ["dev-mcp"], describe: describeDevMcp },
  { names: ["crate-fetch"], describe: describeCrateFetch },
  { names: ["conductor"], describe: describeConductor },
];

/**
 * The command line. With `mode` (the first argument, when it names a mode) only that mode is
 * described: building every mode's flags and help costs a start-up ~2 ms that running one never needs.
 */
export function buildProgram(exit: ExitBox, mode?: string): Command {
  const program = new Command("tendril")
    .description("A small, fast kit for coding agents on ACP and MCP.")
    .version(VERSION, "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeErr: () => {} });
  program.command("rg").description("search files (ripgrep when installed, else the built-in search)").helpOption(false);
  program.command("tree").description("directory tree with line counts, gitignore-aware").helpOption(false);
  const only = MODES.find((m) => mode !== undefined && m.names.includes(mode));
  for (const m of only ? [only] : MODES) m.describe(program, exit);
  program.addHelpText("after", "\nRun `tendril help MODE` for a mode's flags. Invoked as `rg` or `tree`, the binary is that shim.");
  return program;
}

export async function runProgram(args: string[]): Promise<number> {
  if (args[0] === "rg" || args[0] === "tree") return runShim(args[0], args.slice(1));
  const exit: ExitBox = { code: 0 };
  const program = buildProgram(exit, args[0]);
  if (args.length === 0) {
    process.stdout.write(program.helpInformation());
    return 0;
  }
  try {
    await program.parseAsync(args, { from: "user" });
    return exit.code;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help") {
        return 0;
      }
      const sub = targetCommand(program, args);
      const help = sub === program ? "tendril --help" : `tendril ${sub.name()} --help`;
      process.stderr.write(`tendril: ${oneLine(err)}; see '${help}'\n`);
      return 2;
    }
    process.stderr.write(`tendril: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
