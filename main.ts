#!/usr/bin/env bun
// Entry point: choose the mode (argv0 basename `rg`/`tree` → that shim, else the subcommand), run it, exit.
// Owns nothing else: every mode lives in cli/, and heavy modules load only when their mode runs.
// No top-level await: the compiled binary is bytecode-cached, which needs a CommonJS-shaped entry.
import { basename } from "node:path";
import { runProgram, runShim } from "./cli/program.ts";

const invokedAs = basename(process.argv0 || "tendril");
const args = process.argv.slice(2);
const run = invokedAs === "rg" || invokedAs === "tree" ? runShim(invokedAs, args) : runProgram(args);
run.then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`tendril: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
