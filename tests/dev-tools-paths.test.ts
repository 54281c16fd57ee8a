// The default tools by both paths: in process inside `tendril agent` and as `tendril dev-mcp` over
// MCP stdio. One table of calls, two paths: what the model is shown and what it gets back must match.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDevTools } from "../cli/compose/agent-dev-tools.ts";
import { loadLimits } from "../core/limits.ts";
import { connectMcpServer } from "../core/mcp/client.ts";
import { LocalServer } from "../core/mcp/local-server.ts";
import type { RawTool } from "../core/mcp/call-result.ts";
import { BIN } from "./binary.ts";

const work = mkdtempSync(join(tmpdir(), "tendril-dev-paths-"));
const limits = loadLimits({});
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  rmSync(work, { recursive: true, force: true });
});

function workspace(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "greet.sh"), 'echo "Helo"\n');
  return dir;
}

async function inProcess(ws: string) {
  const dev = startDevTools(limits, join(work, "cache-a"));
  const server = new LocalServer(dev.spec(ws));
  await server.ready;
  cleanups.push(() => server.stop(), () => dev.dispose());
  return { tools: server.tools(), instructions: server.instructions(), call: (t: string, a: Record<string, unknown>) => server.call(t, a, {}) };
}

async function overMcp(ws: string) {
  const conn = await connectMcpServer(
    { name: "dev", transport: "stdio", command: BIN, args: ["dev-mcp", "--root", ws], env: { XDG_CACHE_HOME: join(work, "cache-b") } },
    { cwd: ws, limits, parentEnv: process.env },
  );
  cleanups.push(() => conn.close());
  return { tools: conn.tools(), instructions: conn.instructions, call: (t: string, a: Record<string, unknown>) => conn.call(t, a, { timeoutMs: 30_000 }) };
}

test("the model is shown the same tools, schemas, hints and instructions by both paths", async () => {
  const a = await inProcess(workspace("list-a"));
  const b = await overMcp(workspace("list-b"));
  // What the catalog reads and the model is shown (an MCP server also lists `execution`, unused).
  const strip = (tools: RawTool[]) =>
    tools.map(({ name, title, description, inputSchema, annotations }) => JSON.parse(JSON.stringify({ name, title, description, inputSchema, annotations })));
  expect(strip(a.tools)).toEqual(strip(b.tools));
  expect(a.tools.map((t) => t.name)).toEqual(["shell", "shell_read", "shell_write", "shell_kill", "str_replace", "todo", "_Stop", "_PostCompact"]);
  expect(a.instructions!.replaceAll("list-a", "WS")).toBe(b.instructions!.replaceAll("list-b", "WS"));
});

test("one table of calls gets the same answers by both paths", async () => {
  const a = await inProcess(workspace("calls-a"));
  const b = await overMcp(workspace("calls-b"));
  const table: [string, Record<string, unknown>][] = [
    ["shell", { command: "echo hello; echo oops >&2; exit 3" }],
    ["shell", { command: "cat greet.sh" }],
    ["str_replace", { path: "greet.sh", old_str: "Helo", new_str: "Hello" }],
    ["str_replace", { path: "greet.sh", old_str: "nope", new_str: "x" }],
    ["str_replace", { path: "../outside.txt", old_str: "", new_str: "x" }],
    ["todo", { items: [{ text: "write tests", done: false }] }],
    ["_Stop", {}],
    ["_PostCompact", {}],
    ["shell", { command: 42 }],
  ];
  for (const [tool, args] of table) {
    const [ra, rb] = [await a.call(tool, args), await b.call(tool, args)];
    const norm = (r: { text: string; isError: boolean }) => ({ text: r.text.replaceAll(/calls-[ab]/g, "WS"), isError: r.isError });
    expect([tool, norm(ra)]).toEqual([tool, norm(rb)]);
  }
});

test("a shell command started in process sees no API key of the agent", async () => {
  process.env.ANTHROPIC_API_KEY = "sk-secret-in-agent";
  process.env.TENDRIL_SOMETHING = "kept";
  try {
    const a = await inProcess(workspace("env"));
    const r = await a.call("shell", { command: "env" });
    expect(r.text).not.toContain("sk-secret-in-agent");
    expect(r.text).not.toMatch(/_API_KEY=/);
    expect(r.text).toContain("TENDRIL_SOMETHING=kept");
    expect(r.text).toMatch(/PATH=[^\n]*tendril-shims-/);
  } finally {
    delete process.env.ANTHROPIC_API_KEY;
    delete process.env.TENDRIL_SOMETHING;
  }
});
