// Owns the command line: the list of modes, `--help`/`--version`, and usage errors (exit 2, one line).
// Each mode describes its own flags in cli/<mode>.ts; heavy code loads only inside a mode's action.
import { Command, CommanderError } from "commander";
import pkg from "../package.json" with { type: "json" };
import { describeShims } from "./shims.ts";

export const VERSION: string = pkg.version;

/** A mode's action reports its exit code here; commander's own action return value is ignored. */
export interface ExitBox {
  code: number;
}

export async function runShim(name: "rg" | "tree", args: string[]): Promise<number> {
  const mod = name === "rg" ? await import("./rg.ts") : await import("./tree.ts");
  return mod.run(args);
}

function oneLine(err: CommanderError): string {
  const text = err.message.replace(/^error:\s*/, "").replace(/\s*\n\s*/g, " ");
  return text.replace(/\(Did you mean (.+?)\?\)/, "(did you mean $1?)");
}

export function buildProgram(exit: ExitBox): Command {
  const program = new Command("tendril")
    .description("A small, fast kit for coding agents on ACP and MCP.")
    .version(VERSION, "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ writeErr: () => {} });
  program.command("rg").description("search files (ripgrep when installed, else the built-in search)").helpOption(false);
  program.command("tree").description("directory tree with line counts, gitignore-aware").helpOption(false);
  describeShims(program, exit);
  program.addHelpText("after", "\nRun `tendril help MODE` for a mode's flags. Invoked as `rg` or `tree`, the binary is that shim.");
  return program;
}

export async function runProgram(args: string[]): Promise<number> {
  if (args[0] === "rg" || args[0] === "tree") return runShim(args[0], args.slice(1));
  const exit: ExitBox = { code: 0 };
  const program = buildProgram(exit);
  try {
    await program.parseAsync(args, { from: "user" });
    if (args.length === 0) {
      process.stdout.write(program.helpInformation());
    }
    return exit.code;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help") {
        return 0;
      }
      process.stderr.write(`tendril: ${oneLine(err)}; see 'tendril --help'\n`);
      return 2;
    }
    process.stderr.write(`tendril: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
