// The process-group stdio transport with raw JSON-RPC against the fake MCP server: env whitelist, fast
// group kill on close (grandchild holding the pipe included), exits and oversize lines.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FAKE_MCP_PATH, killGroupsOf, pidAlive, readPidFile, waitFor } from "../../tests/fake-mcp-helpers.ts";
import { childEnv, StdioTransport } from "./stdio-transport.ts";

const dir = mkdtempSync(join(tmpdir(), "stdio-transport-test-"));
const pids: number[] = [];
const quiet = { warn() {}, info() {}, debug() {} };

afterAll(() => {
  killGroupsOf(pids);
  rmSync(dir, { recursive: true, force: true });
});

function fake(env: Record<string, string>, maxLineBytes = 1 << 20) {
  const t = new StdioTransport({
    name: "fk",
    command: process.execPath,
    args: [FAKE_MCP_PATH],
    env: childEnv(process.env, env),
    cwd: dir,
    maxLineBytes,
    log: quiet,
  });
  const messages: Record<string, unknown>[] = [];
  const errors: Error[] = [];
  let closed = 0;
  t.onmessage = (m) => void messages.push(m as Record<string, unknown>);
  t.onerror = (e) => void errors.push(e);
  t.onclose = () => void closed++;
  return { t, messages, errors, closed: () => closed };
}

const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } } as const;

test("childEnv passes only whitelisted parent variables (and LC_*), declared ones win", () => {
  const env = childEnv({ PATH: "/bin", HOME: "/h", LC_ALL: "C", AWS_SECRET_ACCESS_KEY: "s", TENDRIL_X: "1", USER: undefined }, { HOME: "/other", TOKEN: "t" });
  expect(env).toEqual({ PATH: "/bin", HOME: "/other", LC_ALL: "C", TOKEN: "t" });
});

test("speaks ND-JSON, skips stdout noise, and the child sees only the whitelisted env", async () => {
  process.env.TENDRIL_TEST_SECRET = "do-not-leak";
  const { t, messages, closed } = fake({ FAKE_MCP_STDOUT_NOISE: "1", DECLARED: "yes" });
  delete process.env.TENDRIL_TEST_SECRET;
  await t.start();
  pids.push(t.pid!);
  await t.send(init);
  await t.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read", arguments: { path: "/proc/self/environ" } } });
  expect(await waitFor(() => messages.length >= 2, 3000)).toBe(true);
  expect(messages[0]).toMatchObject({ id: 1, result: { serverInfo: { name: "fake-mcp" } } });
  const environ = String((messages[1] as { result: { content: { text: string }[] } }).result.content[0]!.text);
  expect(environ).toContain("DECLARED=yes");
  expect(environ).not.toContain("do-not-leak");
  await t.close();
  expect(closed()).toBe(1);
});

test("close kills the whole group fast even when a SIGTERM-proof grandchild holds stdout", async () => {
  const gc = join(dir, "gc.pid");
  const { t } = fake({ FAKE_MCP_GRANDCHILD: gc });
  await t.start();
  const server = t.pid!;
  const grandchild = await readPidFile(gc);
  pids.push(server, grandchild);
  const t0 = Date.now();
  await t.close();
  expect(Date.now() - t0).toBeLessThan(500);
  expect(await waitFor(() => !pidAlive(server) && !pidAlive(grandchild), 500)).toBe(true);
});

test("a server that exits on its own is reported through onclose, after its last answer", async () => {
  const { t, messages, closed } = fake({ FAKE_MCP_EXIT_AFTER: "1" });
  await t.start();
  pids.push(t.pid!);
  await t.send(init);
  await t.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "last" } } });
  expect(await waitFor(() => closed() === 1, 2000)).toBe(true);
  expect(messages.some((m) => m.id === 2)).toBe(true);
  await expect(t.send(init)).rejects.toThrow(/fk is not running/);
});

test("a line over maxLineBytes closes the transport with an error naming the server", async () => {
  const { t, errors, closed } = fake({ FAKE_MCP_RESULT_BYTES: "200000" }, 64 * 1024);
  await t.start();
  pids.push(t.pid!);
  await t.send(init);
  await t.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: {} } });
  expect(await waitFor(() => closed() === 1, 2000)).toBe(true);
  expect(errors.map((e) => e.message).join()).toContain("MCP server fk sent a message over 65536 bytes");
});

test("a command that cannot start rejects start() with the command named", async () => {
  const t = new StdioTransport({ name: "nx", command: join(dir, "missing"), env: {}, maxLineBytes: 1024, log: quiet });
  await expect(t.start()).rejects.toThrow(/missing/);
  await t.close();
});
