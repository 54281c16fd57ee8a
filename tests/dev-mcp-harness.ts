// Owns starting `dist/tendril dev-mcp` under the MCP SDK client for end-to-end tests: a private
// TMPDIR, HOME and cache per call, stderr kept, and cleanup of every server a test started. Test-only.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { watch } from "node:fs";
import { join } from "node:path";
import { BIN } from "./binary.ts";

export interface DevMcp {
  client: Client;
  pid: number;
  stderr: () => string;
}

export type ToolResult = { content: { type: string; text?: string }[]; isError?: boolean; structuredContent?: Record<string, unknown> };

const running: DevMcp[] = [];

/** Starts a dev-mcp on `root`; `base` holds its HOME, TMPDIR and caches. */
export async function startDevMcp(root: string, base: string, env: Record<string, string> = {}): Promise<DevMcp> {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ["dev-mcp", "--root", root],
    // TMPDIR inside the test dir: shim dirs of servers killed with -9 go away with it.
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base, TMPDIR: base, XDG_CACHE_HOME: join(base, "cache"), XDG_CONFIG_HOME: join(base, "config"), ...env },
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (b: Buffer) => (err += b.toString()));
  // Named as Tendril's own client, which is shown the lifecycle hooks (other clients are not).
  const client = new Client({ name: "tendril", version: "1" });
  await client.connect(transport);
  const server = { client, pid: transport.pid!, stderr: () => err };
  running.push(server);
  return server;
}

/** SIGKILLs and closes every server started so far (afterEach). */
export async function stopDevMcps(): Promise<void> {
  for (const s of running.splice(0)) {
    try {
      process.kill(s.pid, "SIGKILL");
    } catch {
      // already gone
    }
    await s.client.close().catch(() => {});
  }
}

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}, signal?: AbortSignal): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, signal ? { signal } : {})) as ToolResult;
}

export const textOf = (r: ToolResult) => r.content.map((c) => c.text ?? "").join("");

/**
 * Resolves once the `nth` (1-based) edit temp file (`.NAME.tendril-….tmp`) appears in `root`: the
 * moment an edit is between writing its new bytes and renaming them into place. Resolves false
 * after `timeoutMs` without it. Kill tests wait on this instead of sleeping a random while.
 */
export function editTempFileAppears(root: string, nth = 1, timeoutMs = 20_000): Promise<boolean> {
  return entryAppears(root, /\.tendril-.*\.tmp$/, nth, timeoutMs);
}

/** Resolves true once the `nth` (1-based) event on an entry of `root` named like `pattern` comes (a
 *  watch, not a poll: start it before what makes the entry), false after `timeoutMs` without it. */
export function entryAppears(root: string, pattern: RegExp, nth = 1, timeoutMs = 20_000): Promise<boolean> {
  return new Promise((resolve) => {
    let seen = 0;
    const done = (ok: boolean) => {
      watcher.close();
      clearTimeout(timer);
      resolve(ok);
    };
    const watcher = watch(root, (_event, name) => {
      if (name && pattern.test(name) && ++seen === nth) done(true);
    });
    const timer = setTimeout(() => done(false), timeoutMs);
  });
}
