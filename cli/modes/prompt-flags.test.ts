// Tests of the prompt fast path's reading of the command line: where it reads one, it reads what
// node:util's strict parser reads; everything else is left to the full parser.
import { expect, test } from "bun:test";
import { parseArgs } from "node:util";
import { FLAGS, parsePlain } from "./prompt-flags.ts";

const strict = (args: string[]) =>
  parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: Object.fromEntries(FLAGS.map((f) => [f.name, { type: f.arg ? ("string" as const) : ("boolean" as const), ...(f.short ? { short: f.short } : {}), ...(f.repeatable ? { multiple: true } : {}) }])),
  });

test("parsePlain reads plain command lines without node:util, as node:util's strict parser does", () => {
  const lines: string[][] = [
    ["say ok"],
    ["--cwd", "/tmp/w", "say ok"],
    ["say ok", "--cwd=/tmp/w", "--output", "json"],
    ["--continue", "--no-session-persistence", "go"],
    ["-o", "out.txt", "--model", "m", "go"],
    ["--mcp", "a=x", "--mcp=b=y z", "go"],
    ["--cwd", "a", "--cwd", "b", "go"],
    ["--cwd=", "-", "two"],
    ["one", "two"],
    [],
  ];
  for (const args of lines) {
    const want = strict(args);
    expect({ args, ...parsePlain(args) }).toEqual({ args, values: { ...want.values } as Record<string, unknown>, positionals: want.positionals } as never);
  }
});

test("parsePlain leaves to the full parser what is not plain", () => {
  const lines: string[][] = [["--help"], ["--nope", "x"], ["--cwd"], ["--cwd", "--model", "m", "x"], ["--continue=yes", "x"], ["-ox", "x"], ["--", "-x"], ["-h"], ["-- say"]];
  for (const args of lines) expect({ args, parsed: parsePlain(args) }).toEqual({ args, parsed: undefined });
});
