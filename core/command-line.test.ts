import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CommandLineError, parseCommandLine, resolveCommand, splitWords } from "./command-line.ts";

test("splitWords follows POSIX quoting without expansion", () => {
  expect(splitWords(`a  'b c' "d \\"e\\" $x" f\\ g ''`)).toEqual(["a", "b c", 'd "e" $x', "f g", ""]);
  expect(splitWords("  ")).toEqual([]);
  expect(splitWords(`x"y"'z'`)).toEqual(["xyz"]);
});

test("unterminated quotes are errors that name the string", () => {
  expect(() => splitWords(`a 'b`)).toThrow(CommandLineError);
  expect(() => splitWords(`a "b`)).toThrow(/unterminated " quote/);
});

test("leading NAME=value words become env; later ones stay arguments", () => {
  expect(parseCommandLine(`A=1 B='two words' bun agent.ts C=3`)).toEqual({
    env: { A: "1", B: "two words" },
    command: "bun",
    args: ["agent.ts", "C=3"],
  });
  expect(() => parseCommandLine("A=1")).toThrow(/no command/);
  expect(() => parseCommandLine("")).toThrow(/no command/);
});

test("resolveCommand finds executables on PATH and paths relative to cwd", () => {
  const dir = mkdtempSync(join(tmpdir(), "tendril-cmdline-"));
  try {
    writeFileSync(join(dir, "tool"), "#!/bin/sh\n");
    chmodSync(join(dir, "tool"), 0o755);
    writeFileSync(join(dir, "plain"), "");
    expect(resolveCommand("tool", `/nonexistent:${dir}`, "/")).toBe(join(dir, "tool"));
    expect(resolveCommand("plain", dir, "/")).toBeUndefined();
    expect(resolveCommand("./tool", "", dir)).toBe(join(dir, "tool"));
    expect(resolveCommand("missing", dir, "/")).toBeUndefined();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
