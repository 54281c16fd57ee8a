// Shared by the rg comparison tests: where the reference ripgrep is (a missing one fails in CI instead of
// skipping), the shim's environment, and one comparison of the built-in against ripgrep on the same argv:
// through the binary (`both`, the shim's wiring) or with the built-in run in this process (`bothInMemory`,
// the same arguments, config, limits, stdin and exit code logic without a binary's start-up per case).
import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, runBin } from "./binary.ts";
import { runBuiltinRg } from "../cli/modes/rg-builtin.ts";

const found = spawnSync("sh", ["-c", "command -v rg"], { encoding: "utf8" }).stdout.trim() || undefined;

/** The reference ripgrep; in CI (`CI=true`) a missing one is an error, never a skip. */
export const realRg = found;
if (!found && process.env.CI === "true") throw new Error("ripgrep is not installed: CI must compare the built-in rg against it");

export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const path = join(root, rel);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, content);
  }
}

/** A folder holding an `rg` link to the binary, and the environment that puts it first. */
export function shimEnv(base: string): { env: (extra?: Record<string, string>) => NodeJS.ProcessEnv; shim: string } {
  const dir = join(base, "shims");
  const home = join(base, "home");
  mkdirSync(dir, { recursive: true });
  mkdirSync(home, { recursive: true });
  symlinkSync(BIN, join(dir, "rg"));
  return {
    shim: join(dir, "rg"),
    env: (extra = {}) => ({ PATH: `${dir}:/usr/bin:/bin`, HOME: home, XDG_CONFIG_HOME: home, TENDRIL_RG_BUILTIN: "1", ...extra }),
  };
}

export interface Outcome {
  code: number | null;
  stdout: string;
  firstWord: string;
}

const firstWord = (s: string) => s.trim().split(/\s+/)[0] ?? "";
/** ripgrep's line order across files varies (it searches in parallel) unless it sorts. */
const ordered = (args: readonly string[]) => args.some((a, i) => /^--sortr?(=|$)/.test(a) && !/none$/.test(a.includes("=") ? a : args[i + 1] ?? ""));
/** Timings in --stats and --json differ on every run. */
export const untimed = (s: string) =>
  s.replace(/^\d+\.\d+ seconds.*$/gm, "T seconds").replace(/"elapsed(_total)?":\{[^}]*\}/g, '"elapsed":T');

function normalise(stdout: string, args: readonly string[]): string {
  const s = untimed(stdout);
  return ordered(args) ? s : s.split(/[\n\0]/).filter((l) => l !== "").sort().join("\n");
}

/** Runs `args` through ripgrep and through the shim in `cwd`; both outcomes, normalised alike. */
export function both(shim: string, env: NodeJS.ProcessEnv, args: string[], cwd: string, input?: string | Buffer): { ours: Outcome; theirs: Outcome } {
  const stdio = input === undefined ? (["ignore", "pipe", "pipe"] as const) : undefined;
  const ours = runBin(args, { bin: shim, cwd, env, ...(stdio ? { stdio: [...stdio] } : { input }) });
  const r = spawnSync(realRg!, args, { cwd, env, encoding: "utf8", ...(stdio ? { stdio: [...stdio] } : { input }) });
  return {
    ours: { code: ours.code, stdout: normalise(ours.stdout, args), firstWord: firstWord(ours.stderr) },
    theirs: { code: r.status, stdout: normalise(r.stdout, args), firstWord: firstWord(r.stderr) },
  };
}

/** The built-in search run in this process as the shim would run it: argv, env, cwd, stdin (a pipe when `input` is given). */
export async function builtinInMemory(env: NodeJS.ProcessEnv, args: string[], cwd: string, input?: string | Buffer): Promise<{ code: number; stdout: string; stderr: string }> {
  // bytes as a descriptor would carry them (a lone surrogate becomes U+FFFD there too), decoded once at the end
  const written: Record<1 | 2, Buffer[]> = { 1: [], 2: [] };
  const stdin = (max: number) => (input === undefined ? undefined : Buffer.from(input).subarray(0, max + 1));
  const code = await runBuiltinRg(args, { env, cwd, stdin, write: (fd, text) => written[fd].push(Buffer.from(text)) > 0 });
  return { code, stdout: Buffer.concat(written[1]).toString("utf8"), stderr: Buffer.concat(written[2]).toString("utf8") };
}

/** Like `both`, with the built-in run in this process. */
export async function bothInMemory(env: NodeJS.ProcessEnv, args: string[], cwd: string, input?: string | Buffer): Promise<{ ours: Outcome; theirs: Outcome }> {
  const ours = await builtinInMemory(env, args, cwd, input);
  const r = spawnSync(realRg!, args, { cwd, env, encoding: "utf8", ...(input === undefined ? { stdio: ["ignore", "pipe", "pipe"] } : { input }) });
  return {
    ours: { code: ours.code, stdout: normalise(ours.stdout, args), firstWord: firstWord(ours.stderr) },
    theirs: { code: r.status, stdout: normalise(r.stdout, args), firstWord: firstWord(r.stderr) },
  };
}
