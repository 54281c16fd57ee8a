// Owns `tendril prompt` / `yopo` on the command line: its flags (from cli/modes/prompt-flags.ts) in the help's
// groups, and its exit codes. The mode itself (cli/modes/prompt-run.ts) loads when it runs; CI's plain
// command lines reach it without this parser (cli/quick.ts).
import type { Command } from "commander";
import type { ExitBox } from "../process/exit-box.ts";
import { FLAGS, GROUPS, type PromptFlags } from "./prompt-flags.ts";

export function describePrompt(program: Command, exit: ExitBox): void {
  const cmd = program
    .command("prompt")
    .alias("yopo")
    .description("send one prompt to an ACP agent, print the answer, exit 0 on end_turn (for CI)")
    .argument("<PROMPT>", 'the prompt, or "-" to read it from stdin');
  for (const f of FLAGS) {
    const option = cmd.createOption(`${f.short ? `-${f.short}, ` : ""}--${f.name}${f.arg ? ` ${f.arg}` : ""}`, f.help).helpGroup(GROUPS[f.group]);
    if (f.choices) option.choices(f.choices);
    if (f.default !== undefined) option.default(f.default);
    if (f.repeatable) option.argParser((v: string, all?: string[]) => [...(all ?? []), v]);
    cmd.addOption(option);
  }
  cmd
    .addHelpText(
      "after",
      "\nExit codes: 0 end_turn, 1 agent or LLM error, 2 usage error, 3 other stop reason, 4 the answer misses --output-schema,\n5 --max-turns reached, 6 --max-budget-usd reached, 124 timeout, 130 Ctrl-C, 129/143 SIGHUP/SIGTERM (the run is cancelled and the agent stopped, as on Ctrl-C).",
    )
    .action(async (prompt: string, flags: PromptFlags) => {
      exit.code = await (await import("./prompt-run.ts")).runPromptCommand(prompt, flags);
    });
}
