// Owns the processes of a chain: component strings → commands checked before anything runs, each
// started as its own process group (through core/process-group.ts), its stderr forwarded line by line
// with the component's name in front, and a bounded tail of it kept for the error that names it.
// Does not route messages (router.ts) and does not decide when the chain ends (runner.ts).
import type { ChildProcess } from "node:child_process";
import { basename } from "node:path";
import { type CommandLine, parseCommandLine } from "../command-line.ts";
import { findCommand, spawnGroup } from "../process-group.ts";
import type { HopIo } from "./router.ts";
import { nodeSink } from "../wire/writer.ts";
import { chunksOf } from "../wire/link.ts";
import { StderrTail } from "../stderr-tail.ts";

export interface ComponentSpec extends CommandLine {
  /** The string as the user wrote it. */
  text: string;
  /** Short name for stderr prefixes and errors: `proxy.ts`, `tendril`. */
  name: string;
}

export class ComponentError extends Error {
  override name = "ComponentError";
}

const INTERPRETERS = new Set(["bun", "node", "deno", "python", "python3", "npx", "bunx", "uv", "uvx", "sh", "bash"]);

/** A readable short name: the script for interpreters (`bun proxy.ts` → proxy.ts), else the command. */
export function shortName(cl: CommandLine): string {
  if (INTERPRETERS.has(basename(cl.command).replace(/\.exe$/, "")) && cl.args[0] !== "-c") {
    const script = cl.args.find((a) => !a.startsWith("-") && a !== "run");
    if (script) return basename(script);
  }
  const base = basename(cl.command);
  return base === "tendril" && cl.args[0] ? `tendril ${cl.args[0]}` : base;
}

/** Parses and checks every component string; throws ComponentError naming the first that cannot start. */
export function parseComponents(texts: string[], env: Record<string, string>, cwd: string): ComponentSpec[] {
  return texts.map((text, i) => {
    let cl: CommandLine;
    try {
      cl = parseCommandLine(text);
    } catch (err) {
      throw new ComponentError(`component ${i + 1} ${JSON.stringify(text)}: ${(err as Error).message}`);
    }
    const path = cl.env.PATH ?? env.PATH;
    if (findCommand(cl.command, path, cwd) === undefined) {
      const where = cl.command.includes("/") ? "no such executable file" : "not found on PATH";
      throw new ComponentError(`component ${i + 1} ${JSON.stringify(text)}: ${JSON.stringify(cl.command)}: ${where}`);
    }
    return { ...cl, text, name: shortName(cl) };
  });
}

export interface RunningComponent {
  readonly spec: ComponentSpec;
  readonly index: number;
  readonly io: HopIo;
  readonly pid: number | undefined;
  /** Resolves with how the process ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last stderr lines, oldest first, within the tail bound. */
  stderrTail(): string[];
  /** Resolves when the component's stderr has ended (everything it wrote there is in the tail). */
  readonly stderrEnded: Promise<void>;
  /** Closes the component's stdin: the polite way to ask it to finish. */
  closeInput(): void;
}

export interface StartOptions {
  env: Record<string, string>;
  cwd?: string;
  tailBytes: number;
  /** Receives each stderr line, already prefixed with `[name] `. */
  stderrLine: (line: string) => void;
}

/** Starts component `index` as a process group; throws SpawnError when it cannot start. */
export function startComponent(spec: ComponentSpec, index: number, opts: StartOptions): RunningComponent {
  const child: ChildProcess = spawnGroup({
    label: `component ${index + 1} (${spec.name})`,
    command: spec.command,
    args: spec.args,
    env: { ...opts.env, ...spec.env },
    cwd: opts.cwd,
    stdin: "pipe",
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    child.once("error", () => resolve({ code: null, signal: null }));
  });
  const tail = new StderrTail(opts.tailBytes, (line) => opts.stderrLine(`[${spec.name}] ${line}`));
  child.stderr!.on("data", (chunk: Buffer) => tail.push(chunk.toString("utf8")));
  const stderrEnded = new Promise<void>((resolve) => child.stderr!.once("close", () => resolve()));
  child.stderr!.on("end", () => tail.end());
  child.stderr!.on("error", () => {});
  child.stdin!.on("error", () => {});
  return {
    spec,
    index,
    pid: child.pid,
    exited,
    io: { input: chunksOf(child.stdout!), sink: nodeSink(child.stdin!) },
    stderrTail: () => tail.lines(),
    stderrEnded,
    closeInput: () => void child.stdin!.end(),
  };
}
