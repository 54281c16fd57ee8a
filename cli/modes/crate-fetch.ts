// Owns `tendril crate-fetch` on the command line: its flags, help and exit code table. The mode itself
// (cli/modes/crate-fetch-run.ts) loads when it runs.
import type { Command } from "commander";
import type { ExitBox } from "../process/exit-box.ts";
import type { CrateFetchFlags } from "./crate-fetch-run.ts";

export function describeCrateFetch(program: Command, exit: ExitBox): void {
  program
    .command("crate-fetch")
    .description("find or download a Rust crate's published source and print where it is")
    .argument("[CRATE...]", "NAME or NAME@RANGE, e.g. serde, tokio@1, rand@=0.8.5 (several fetch at once)")
    .option("--json", "print {crate_name, version, checkout_path, message} (an array for several crates)")
    .option("--mcp", "serve the get_rust_crate_source tool on MCP stdio instead")
    .option("--proxy", "be the crate-sources ACP proxy (rust_crate_query) in a tendril conductor chain")
    .option("--config <file>", "config file (TENDRIL_CONFIG)")
    .option("--log <level>", "error | warn | info | debug (TENDRIL_LOG)")
    .addHelpText(
      "after",
      "\nRegistry: TENDRIL_CRATES_INDEX (sparse index, default https://index.crates.io/), TENDRIL_CRATES_DL (download template)." +
        "\nExit codes: 0 ok, 1 other failure, 2 usage, 3 no such crate, 4 no matching version, 5 registry unreachable and" +
        "\nnothing cached, 6 checksum mismatch, 7 refused archive, 130/143 interrupted. With several crates, the first failing one's code.",
    )
    .action(async (crates: string[], flags: CrateFetchFlags) => {
      exit.code = await (await import("./crate-fetch-run.ts")).runCrateFetch(crates, flags);
    });
}
