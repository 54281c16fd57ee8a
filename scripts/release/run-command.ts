// Owns running one child process of the release to completion: output collected, a hard time bound,
// never a throw (a command that could not start is reported as exit 127 with the reason on stderr).
import { spawn } from "node:child_process";

export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CommandOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs: number;
}

export function runCommand(command: string, args: readonly string[], o: CommandOptions): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: o.cwd, env: o.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${o.timeoutMs / 1000} s)`;
      child.kill("SIGKILL");
    }, o.timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ code: 127, signal: null, stdout, stderr: `${stderr}${err.message}` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The last non-empty lines of a command's stderr (or stdout), for an error message. */
export function tail(r: CommandResult, lines = 6): string {
  const text = (r.stderr.trim() || r.stdout.trim()).split("\n").slice(-lines).join("\n");
  return text === "" ? `(exit ${r.code ?? r.signal}, no output)` : text;
}
