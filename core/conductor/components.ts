// Owns the components of a chain: component strings → commands checked before anything runs, each
// started as its own process group (through core/process-group.ts), its stderr forwarded line by line
// with the component's name in front, and a bounded tail of it kept for the error that names it; or, for
// `tendril:NAME`, one of Tendril's own components run inside this process over an in-memory message
// pipe (objects, not bytes), with the same face (its lines, its end, its input to close). Does not route
// messages (router.ts) and does not decide when the chain ends (runner.ts).
import type { ChildProcess } from "node:child_process";
import { basename } from "node:path";
import { inheritedEnv } from "../child-env.ts";
import { type CommandLine, parseCommandLine } from "../command-line.ts";
import { findCommand, spawnGroup } from "../process-group.ts";
import type { HopIo } from "./router.ts";
import { nodeSink } from "../wire/writer.ts";
import { chunksOf, type PortIo } from "../wire/link.ts";
import { messagePipe } from "../wire/message-pipe.ts";
import { StderrTail } from "../stderr-tail.ts";

/** The component-string prefix of a component that runs inside the conductor. */
export const IN_PROCESS_PREFIX = "tendril:";

/**
 * One of Tendril's own components, run inside the conductor: it speaks ACP on `io` until its input ends
 * (or `signal` aborts: the chain is over) and resolves with its exit code; a throw is a failure. Lines it
 * gives `stderrLine` are its stderr.
 */
export type InProcessComponent = (io: PortIo, ctx: { signal: AbortSignal; stderrLine(line: string): void }) => Promise<number>;

export interface ComponentSpec extends CommandLine {
  /** The string as the user wrote it. */
  text: string;
  /** Short name for stderr prefixes and errors: `proxy.ts`, `tendril`, `tendril:crate-sources`. */
  name: string;
  /** `tendril:NAME`: the in-process component NAME (command and args are empty). */
  inProcess?: string;
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

/** Parses and checks every component string; throws ComponentError naming the first that cannot start.
 *  `inProcess` names the components that may run inside the conductor (`tendril:NAME`). */
export function parseComponents(texts: string[], env: Record<string, string>, cwd: string, inProcess: readonly string[] = []): ComponentSpec[] {
  return texts.map((text, i) => {
    if (text.trim().startsWith(IN_PROCESS_PREFIX)) {
      const name = text.trim().slice(IN_PROCESS_PREFIX.length);
      if (!inProcess.includes(name)) {
        const known = inProcess.length > 0 ? inProcess.map((n) => IN_PROCESS_PREFIX + n).join(", ") : "none";
        throw new ComponentError(`component ${i + 1} ${JSON.stringify(text)}: no in-process component ${JSON.stringify(name)} (known: ${known})`);
      }
      return { command: "", args: [], env: {}, text, name: IN_PROCESS_PREFIX + name, inProcess: name };
    }
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
  /** An in-process component: ends it now (a process group is killed with the others instead). */
  stop?(): void;
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
    env: inheritedEnv(opts.env, spec.env),
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

/** Starts in-process component `index`: `run` gets one end of a message pipe, the chain the other. */
export function startInProcess(spec: ComponentSpec, index: number, run: InProcessComponent, opts: Pick<StartOptions, "tailBytes" | "stderrLine">): RunningComponent {
  const [chainEnd, componentEnd] = messagePipe();
  const stop = new AbortController();
  const tail = new StderrTail(opts.tailBytes, (line) => opts.stderrLine(`[${spec.name}] ${line}`));
  let ended!: () => void;
  const stderrEnded = new Promise<void>((r) => (ended = r));
  const exited = Promise.resolve()
    .then(() => run({ port: componentEnd }, { signal: stop.signal, stderrLine: (line) => tail.push(line + "\n") }))
    .then(
      (code) => ({ code, signal: null }),
      (err: unknown) => {
        tail.push(`${err instanceof Error ? err.message : String(err)}\n`);
        return { code: 1, signal: null };
      },
    )
    .then((exit) => {
      // as a process's pipes close when it exits
      componentEnd.close();
      tail.end();
      ended();
      return exit;
    });
  return {
    spec,
    index,
    pid: undefined,
    exited,
    io: { port: chainEnd },
    stderrTail: () => tail.lines(),
    stderrEnded,
    closeInput: () => chainEnd.close(),
    stop: () => (chainEnd.close(), stop.abort()),
  };
}
