#!/usr/bin/env bun
// Entry point: choose the mode (argv0 basename `rg`/`tree` → that shim, else the subcommand), run it, exit.
// Owns nothing else: every mode lives in cli/, and heavy modules load only when their mode runs.
// The compiled binary is ESM split into chunks: this entry chunk stays small, so every mode loads only its own code.
import { basename } from "node:path";
import { modeCall, quickAnswer, shimCall } from "./cli/quick.ts";
import { writeAll } from "./cli/process/stdio.ts";

const invokedAs = basename(process.argv0 || "tendril");
const args = process.argv.slice(2);
const quick = quickAnswer(args);
const run =
  shimCall(invokedAs, args) ??
  (quick !== undefined
    ? Promise.resolve(writeAll(1, quick)).then(() => 0)
    : modeCall(args).then((code) => code ?? import("./cli/program.ts").then((p) => p.runProgram(args))));
run.then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`tendril: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
