// Owns `tendril shims DIR`: writes `rg` and `tree` symlinks to this binary so argv0 dispatch finds them.
import type { Command } from "commander";
import type { ExitBox } from "../process/exit-box.ts";
import { selfCommand } from "../process/self.ts";
import { writeShimLinks } from "../process/shim-links.ts";

export function describeShims(program: Command, exit: ExitBox): void {
  program
    .command("shims")
    .description("create `rg` and `tree` links to this binary in DIR")
    .argument("<DIR>", "directory to write the links into (created if missing)")
    .action(async (dir: string) => {
      const self = selfCommand();
      if (self.args.length > 0) {
        process.stderr.write("tendril: shims need the compiled binary (run `npm run build`, then dist/tendril shims DIR)\n");
        exit.code = 1;
        return;
      }
      try {
        for (const link of await writeShimLinks(dir, self.command)) process.stdout.write(link + "\n");
      } catch (err) {
        process.stderr.write(`tendril: shims: ${err instanceof Error ? err.message : String(err)}\n`);
        exit.code = 1;
      }
    });
}
