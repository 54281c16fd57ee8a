// The fake MCP server, driven through the official MCP SDK client: each FAKE_MCP_* knob does what the
// tests of the pool and the agent rely on.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { FAKE_MCP_PATH, killGroupsOf, pidAlive, processGroup, readPidFile, waitFor } from "./fake-mcp-helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "fake-mcp-test-"));
const started: number[] = [];
const clients: Client[] = [];

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  killGroupsOf(started);
  rmSync(dir, { recursive: true, force: true });
});

async function connect(env: Record<string, string>, timeout = 5000): Promise<{ client: Client; pid: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [FAKE_MCP_PATH],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stderr: "ignore",
  });
  const client = new Client({ name: "fake-mcp-test", version: "1" });
  clients.push(client);
  await client.connect(transport, { timeout });
  const pid = transport.pid!;
  started.push(pid);
  return { client, pid };
}

test("lists the fixed tools, t0..tN-1, hooks, sized descriptions, and paginates", async () => {
  const { client } = await connect({
    FAKE_MCP_TOOLS: "3",
    FAKE_MCP_DESC_BYTES: "300",
    FAKE_MCP_STOP: "not yet",
    FAKE_MCP_POSTCOMPACT: "remember X",
    FAKE_MCP_PAGE_SIZE: "4",
    FAKE_MCP_NAME: "fakey",
  });
  expect(client.getServerVersion()?.name).toBe("fakey");
  const first = await client.listTools();
  expect(first.tools.length).toBe(4);
  expect(first.nextCursor).toBeDefined();
  const all = [...first.tools];
  let cursor = first.nextCursor;
  while (cursor !== undefined) {
    const page = await client.listTools({ cursor });
    all.push(...page.tools);
    cursor = page.nextCursor;
  }
  expect(all.map((t) => t.name)).toEqual(["echo", "sleep", "fail", "confirm", "roots", "read", "t0", "t1", "t2", "_Stop", "_PostCompact"]);
  for (const t of all) expect(Buffer.byteLength(t.description ?? "")).toBe(300);
  expect(all.find((t) => t.name === "read")?.annotations?.readOnlyHint).toBe(true);
  const stop = await client.callTool({ name: "_Stop", arguments: {} });
  expect(stop.content).toEqual([{ type: "text", text: "not yet" }]);
});

test("echo, fail and read answer as documented; FAKE_MCP_RESULT_BYTES sizes echo", async () => {
  const { client } = await connect({ FAKE_MCP_STDOUT_NOISE: "1" });
  expect((await client.callTool({ name: "echo", arguments: { text: "hi" } })).content).toEqual([{ type: "text", text: "hi" }]);
  const fail = await client.callTool({ name: "fail", arguments: { message: "boom" } });
  expect(fail.isError).toBe(true);
  expect(fail.content).toEqual([{ type: "text", text: "boom" }]);
  const file = join(dir, "r.txt");
  writeFileSync(file, "file body");
  expect((await client.callTool({ name: "read", arguments: { path: file } })).content).toEqual([{ type: "text", text: "file body" }]);

  const big = await connect({ FAKE_MCP_RESULT_BYTES: "100000" });
  const res = await big.client.callTool({ name: "echo", arguments: { text: "ignored" } });
  expect((res.content as { text: string }[])[0]!.text.length).toBe(100000);
});

test("sleep honours notifications/cancelled, and FAKE_MCP_CANCEL_LOG records the request id", async () => {
  const log = join(dir, "cancel.log");
  const { client } = await connect({ FAKE_MCP_CANCEL_LOG: log });
  const ac = new AbortController();
  const t0 = Date.now();
  const call = client.callTool({ name: "sleep", arguments: { ms: 10000 } }, undefined, { signal: ac.signal });
  setTimeout(() => ac.abort("stop"), 200);
  await expect(call).rejects.toThrow();
  expect(Date.now() - t0).toBeLessThan(2000);
  expect(await waitFor(() => /^cancelled \d+$/m.test(safeRead(log)), 2000)).toBe(true);
  // Still serving after the cancel.
  expect((await client.callTool({ name: "echo", arguments: { text: "after" } })).content).toEqual([{ type: "text", text: "after" }]);
});

test("FAKE_MCP_HANG=initialize never answers initialize", async () => {
  await expect(connect({ FAKE_MCP_HANG: "initialize" }, 500)).rejects.toThrow(/timed out/i);
});

test("FAKE_MCP_HANG=tools/list answers initialize but never tools/list", async () => {
  const { client } = await connect({ FAKE_MCP_HANG: "tools/list" });
  await expect(client.listTools(undefined, { timeout: 500 })).rejects.toThrow(/timed out/i);
});

test("FAKE_MCP_EXIT_AFTER exits right after answering the Nth call; FAKE_MCP_PID_FILE names it", async () => {
  const pidFile = join(dir, "exit.pid");
  const { client } = await connect({ FAKE_MCP_EXIT_AFTER: "2", FAKE_MCP_PID_FILE: pidFile });
  const pid = await readPidFile(pidFile);
  await client.callTool({ name: "echo", arguments: { text: "1" } });
  expect(pidAlive(pid)).toBe(true);
  expect((await client.callTool({ name: "echo", arguments: { text: "2" } })).content).toEqual([{ type: "text", text: "2" }]);
  expect(await waitFor(() => !pidAlive(pid), 2000)).toBe(true);
});

test("FAKE_MCP_GRANDCHILD starts a SIGTERM-proof sleeper in the server's process group", async () => {
  const file = join(dir, "grandchild.pid");
  const { pid } = await connect({ FAKE_MCP_GRANDCHILD: file });
  const grandchild = await readPidFile(file);
  started.push(grandchild);
  expect(processGroup(grandchild)).toBe(processGroup(pid));
  // SIGTERM-proof means ignored, which the kernel shows in the signal mask: no waiting for what does not happen.
  const sigIgn = BigInt(`0x${/^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${grandchild}/status`, "utf8"))![1]}`);
  expect((sigIgn >> 14n) & 1n).toBe(1n); // SIGTERM is signal 15
  process.kill(grandchild, "SIGTERM");
  expect(pidAlive(grandchild)).toBe(true);
  process.kill(grandchild, "SIGKILL");
  expect(await waitFor(() => !pidAlive(grandchild), 2000)).toBe(true);
});

test("exits on stdin EOF", async () => {
  const { client, pid } = await connect({});
  await client.close();
  expect(await waitFor(() => !pidAlive(pid), 2000)).toBe(true);
});

test("FAKE_MCP_LIST_CHANGED: grow adds a tool and sends notifications/tools/list_changed", async () => {
  let notified = 0;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [FAKE_MCP_PATH],
    env: { PATH: process.env.PATH ?? "", FAKE_MCP_LIST_CHANGED: "1" },
    stderr: "ignore",
  });
  const client = new Client({ name: "t", version: "1" }, { listChanged: { tools: { onChanged: () => notified++ } } });
  clients.push(client);
  await client.connect(transport);
  started.push(transport.pid!);
  await client.callTool({ name: "grow", arguments: {} });
  expect(await waitFor(() => notified > 0, 2000)).toBe(true);
  expect((await client.listTools()).tools.map((t) => t.name)).toContain("grown0");
});

function safeRead(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
