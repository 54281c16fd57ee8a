// Owns what tests need to drive tests/fake-mcp.ts: its command line, a stdio spec for the pool, and
// process checks that treat zombies as dead (a reaped-late child is not a leak), and a free loopback
// port. Test-only.
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import type { McpServerSpec } from "../core/mcp/types.ts";

export const FAKE_MCP_PATH = new URL("./fake-mcp.ts", import.meta.url).pathname;

/** A stdio spec running the fake MCP under this runtime with the given FAKE_MCP_* env. */
export function fakeMcpSpec(name: string, env: Record<string, string> = {}, extra: Partial<McpServerSpec> = {}): McpServerSpec {
  return { name, transport: "stdio", command: process.execPath, args: [FAKE_MCP_PATH], env, ...extra };
}

function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name: state is first, then ppid, pgrp, …
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** True while pid is a running (non-zombie) process. */
export function pidAlive(pid: number): boolean {
  const fields = procStat(pid);
  if (fields) return fields[0] !== "Z" && fields[0] !== "X";
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The direct children of pid, in any state (zombies included). */
export function childrenOf(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  return entries.filter((e) => /^\d+$/.test(e) && Number(procStat(Number(e))?.[1]) === pid).map(Number);
}

/** The process group of pid, if it exists. */
export function processGroup(pid: number): number | undefined {
  const fields = procStat(pid);
  return fields ? Number(fields[2]) : undefined;
}

/** Polls cond every 20 ms until true or timeoutMs passes; returns the last value. */
export async function waitFor(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return cond();
}

/** Every pid listed in file, one a line (the fake MCP appends one per start); [] if none yet. */
export function readPids(file: string): number[] {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .map((l) => Number(l.trim()))
      .filter((n) => Number.isInteger(n) && n > 0);
  } catch {
    return [];
  }
}

/** The last pid written to file, waiting up to timeoutMs for one to appear. */
export async function readPidFile(file: string, timeoutMs = 3000): Promise<number> {
  await waitFor(() => readPids(file).length > 0, timeoutMs);
  const pid = readPids(file).at(-1);
  if (pid === undefined) throw new Error(`no pid in ${file} after ${timeoutMs} ms`);
  return pid;
}

/** SIGKILLs pids that are still around (afterAll cleanup; never throws). */
/** Test cleanup: SIGKILLs the process group each pid belongs to (a server and whatever it started),
 *  or the pid alone when it is in the test runner's own group. */
export function killGroupsOf(pids: number[]): void {
  const own = processGroup(process.pid);
  for (const pid of pids) {
    const group = processGroup(pid);
    try {
      process.kill(group !== undefined && group !== own ? -group : pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** A loopback port free a moment ago (a server of the test's own binds it next). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}
