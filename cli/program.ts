// Owns the command line: the list of modes, `--help`/`--version`, and usage errors (exit 2, one line).
// Each mode describes its own flags in cli/<mode>.ts; heavy code loads only inside a mode's action.
import { Command, CommanderError } from "commander";
import { describeShims } from "./shims.ts";
import { describeAgent } from "./agent.ts";
import { describePrompt } from "./prompt.ts";
import { describeDevMcp } from "./dev-mcp.ts";
import { describeCrateFetch } from "./crate-fetch.ts";
import { describeConductor } from "./conductor.ts";

export { VERSION } from "../core/version.ts";
import { VERSION } from "../core/version.ts";
import type { ExitBox } from "./exit-box.ts";
import { runShim } from "./quick.ts";


/** Edit distance, for "did you mean" when commander has no suggestion of its own. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

function nearest(word: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = distance(word, c);
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best;
}

/** Finds the (sub)command the failing argv was aimed at, to list its valid options. */
function targetCommand(program: Command, args: string[]): Command {
  const sub = program.commands.find((c) => c.name() === args[0] || c.aliases().includes(args[0] ?? ""));
  return sub ?? program;
}

function oneLine(err: CommanderError, program: Command, args: string[]): string {
  let text = err.message.replace(/^error:\s*/, "").replace(/\s*\n\s*/g, " ");
  text = text.replace(/\(Did you mean (.+?)\?\)/, "(did you mean $1?)");
  if (text.includes("did you mean")) return text;
  const word = /'([^']+)'/.exec(text)?.[1];
  if (!word) return text;
  const cmd = targetCommand(program, args);
  const pool =
    err.code === "commander.unknownCommand"
      ? program.commands.map((c) => c.name())
      : err.code === "commander.unknownOption"
        ? cmd.options.flatMap((o) => [o.long, o.short].filter((f): f is string => !!f)).concat("--help")
        : [];
  const hint = nearest(word, pool);
  return hint ? `${text} (did you mean ${hint}?)` : text;
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
      process.stderr.write(`tendril: ${oneLine(err, program, args)}; see '${help}'\n`);
      return 2;
    }
    process.stderr.write(`tendril: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
