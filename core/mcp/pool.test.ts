// The MCP pool against the fault-injecting fake MCP server: sharing, start failures, hangs, cancel,
// timeouts, process-group cleanup, catalog caps, crash and restart.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fakeMcpSpec, killGroupsOf, pidAlive, readPidFile, readPids, waitFor } from "../../tests/fake-mcp-helpers.ts";
import { LimitError, loadLimits } from "../limits.ts";
import { DESCRIPTION_MARKER } from "./catalog.ts";
import { createMcpPool } from "./pool.ts";
import { liveGroupCount } from "../process-group.ts";
import { McpStartError, type McpPool } from "./types.ts";

const dir = mkdtempSync(join(tmpdir(), "mcp-pool-test-"));
const pools: McpPool[] = [];
const pids: number[] = [];
const logLines: string[] = [];
const captureLog = {
  error: (m: string, f?: Record<string, unknown>) => logLines.push(`error ${m} ${JSON.stringify(f ?? {})}`),
  warn: (m: string, f?: Record<string, unknown>) => logLines.push(`warn ${m} ${JSON.stringify(f ?? {})}`),
  info: (m: string, f?: Record<string, unknown>) => logLines.push(`info ${m} ${JSON.stringify(f ?? {})}`),
  debug: () => {},
};
let fileSeq = 0;
const tmp = (name: string) => join(dir, `${fileSeq++}-${name}`);

afterAll(async () => {
  await Promise.allSettled(pools.map((p) => p.closeAll()));
  killGroupsOf(pids);
  rmSync(dir, { recursive: true, force: true });
});

function pool(overrides: Record<string, string> = {}): McpPool {
  const limits = loadLimits(Object.fromEntries(Object.entries(overrides).map(([k, v]) => [`TENDRIL_${k}`, v])));
  const p = createMcpPool({ limits, env: process.env, log: captureLog });
  pools.push(p);
  return p;
}

test("starts servers in parallel and names their tools server__tool, hooks and readOnly flagged", async () => {
  const p = pool();
  const initLog = tmp("init.log");
  const specs = ["a", "b", "c"].map((n) => fakeMcpSpec(n, { FAKE_MCP_NAME: n, FAKE_MCP_STOP: "", FAKE_MCP_INIT_LOG: initLog, FAKE_MCP_INIT_BARRIER: "3" }));
  const s = await p.openTools(specs, { cwd: dir });
  // In parallel: every server was asked to initialize before the first one answered. Each holds its answer
  // until all three were asked, so a pool that waited for one before starting the next would show
  // `asked answered …` (after the fake's 10 s give-up), whatever the machine's speed.
  const log = readFileSync(initLog, "utf8").trim().split("\n").map((l) => l.split(" ")[0]);
  expect(log.slice(0, 3)).toEqual(["asked", "asked", "asked"]);
  const names = s.tools().map((t) => t.qualifiedName);
  expect(names).toEqual(expect.arrayContaining(["a__echo", "b__sleep", "c__read", "a___Stop"]));
  const tools = Object.fromEntries(s.tools().map((t) => [t.qualifiedName, t]));
  expect(tools["a__read"]?.readOnly).toBe(true);
  expect(tools["a__echo"]?.readOnly).toBe(false);
  expect(tools["a___Stop"]?.hook).toBe(true);
  expect(tools["b__echo"]).toMatchObject({ server: "b", tool: "echo", hook: false });
  const r = await s.call("b__echo", { text: "hello" });
  expect(r).toMatchObject({ isError: false, text: "hello" });
  expect(await s.call("b__nope", {})).toMatchObject({ isError: true, text: "unknown tool: b__nope" });
  await s.close();
});

test("identical servers are shared across sessions (one process); private ones are not", async () => {
  const p = pool();
  const shared = tmp("shared.pid");
  const s1 = await p.openTools([fakeMcpSpec("one", { FAKE_MCP_PID_FILE: shared })], { cwd: dir });
  const s2 = await p.openTools([fakeMcpSpec("two", { FAKE_MCP_PID_FILE: shared })], { cwd: dir });
  expect(readPids(shared).length).toBe(1);
  expect(s2.tools().some((t) => t.qualifiedName === "two__echo")).toBe(true);
  const pid = readPids(shared)[0]!;
  pids.push(pid);
  await s1.close();
  expect((await s2.call("two__echo", { text: "still here" })).text).toBe("still here");
  expect(pidAlive(pid)).toBe(true);
  await s2.close();

  const priv = tmp("private.pid");
  const spec = fakeMcpSpec("dev", { FAKE_MCP_PID_FILE: priv }, { private: true });
  const a = await p.openTools([spec], { cwd: dir });
  const b = await p.openTools([spec], { cwd: dir });
  const both = readPids(priv);
  pids.push(...both);
  expect(both.length).toBe(2);
  await a.close();
  // A private server dies with its session; the other session's copy lives on.
  expect(await waitFor(() => !pidAlive(both[0]!), 1000)).toBe(true);
  expect(pidAlive(both[1]!)).toBe(true);
  await b.close();
  expect(await waitFor(() => !pidAlive(both[1]!), 1000)).toBe(true);
});

test("a different working directory is a different server", async () => {
  const p = pool();
  const file = tmp("cwd.pid");
  const s1 = await p.openTools([fakeMcpSpec("x", { FAKE_MCP_PID_FILE: file })], { cwd: dir });
  const s2 = await p.openTools([fakeMcpSpec("x", { FAKE_MCP_PID_FILE: file })], { cwd: tmpdir() });
  pids.push(...readPids(file));
  expect(readPids(file).length).toBe(2);
  await Promise.all([s1.close(), s2.close()]);
});

test("an unused shared server stops after MCP_IDLE_S", async () => {
  const p = pool({ MCP_IDLE_S: "0.2" });
  const file = tmp("idle.pid");
  const s = await p.openTools([fakeMcpSpec("idle", { FAKE_MCP_PID_FILE: file })], { cwd: dir });
  const pid = await readPidFile(file);
  pids.push(pid);
  await s.close();
  expect(pidAlive(pid)).toBe(true);
  expect(await waitFor(() => !pidAlive(pid), 3000)).toBe(true);
});

test("a server that never answers initialize fails the session within MCP_INIT_TIMEOUT_S and is killed", async () => {
  const p = pool({ MCP_INIT_TIMEOUT_S: "0.3" });
  const file = tmp("hang.pid");
  const t0 = Date.now();
  const err = await p.openTools([fakeMcpSpec("stuck", { FAKE_MCP_HANG: "initialize", FAKE_MCP_PID_FILE: file })], { cwd: dir }).catch((e) => e);
  expect(Date.now() - t0).toBeLessThan(2500);
  expect(err).toBeInstanceOf(McpStartError);
  expect(err.message).toContain("MCP server stuck: did not answer initialize within 0.3 s");
  const pid = await readPidFile(file);
  pids.push(pid);
  expect(await waitFor(() => !pidAlive(pid), 500)).toBe(true);
});

test("a server that never answers tools/list fails likewise, and the servers started with it stop", async () => {
  // The healthy server must start and answer within the bound too: 1.5 s leaves a busy CI machine room to spawn it.
  const p = pool({ MCP_INIT_TIMEOUT_S: "1.5" });
  const hang = tmp("list.pid");
  const ok = tmp("ok.pid");
  const err = await p
    .openTools(
      [fakeMcpSpec("fine", { FAKE_MCP_PID_FILE: ok }), fakeMcpSpec("lister", { FAKE_MCP_HANG: "tools/list", FAKE_MCP_PID_FILE: hang })],
      { cwd: dir },
    )
    .catch((e) => e);
  expect(err).toBeInstanceOf(McpStartError);
  expect(err.message).toContain("MCP server lister: did not answer tools/list within 1.5 s");
  const [hangPid, okPid] = [await readPidFile(hang), await readPidFile(ok)];
  pids.push(hangPid, okPid);
  expect(await waitFor(() => !pidAlive(hangPid) && !pidAlive(okPid), 1000)).toBe(true);
});

test("a command that does not exist fails with an error naming the server and the command", async () => {
  const p = pool();
  const err = await p
    .openTools([{ name: "ghost", transport: "stdio", command: join(dir, "no-such-binary") }], { cwd: dir })
    .catch((e) => e);
  expect(err).toBeInstanceOf(McpStartError);
  expect(err.message).toMatch(/MCP server ghost: .*no-such-binary/);
});

test("more servers than MAX_MCP_SERVERS is refused up front", async () => {
  const p = pool({ MAX_MCP_SERVERS: "2" });
  const file = tmp("cap.pid");
  const specs = ["a", "b", "c"].map((n) => fakeMcpSpec(n, { FAKE_MCP_PID_FILE: file }));
  const before = liveGroupCount();
  const err = await p.openTools(specs, { cwd: dir }).catch((e) => e);
  expect(err).toBeInstanceOf(LimitError);
  expect(err.message).toContain("at most 2 MCP servers");
  expect(liveGroupCount()).toBe(before);
  expect(readPids(file)).toEqual([]);
});

test("cancel sends notifications/cancelled and the call returns at once as `cancelled`", async () => {
  const p = pool();
  const cancelLog = tmp("cancel.log");
  const s = await p.openTools([fakeMcpSpec("sl", { FAKE_MCP_CANCEL_LOG: cancelLog })], { cwd: dir });
  const ac = new AbortController();
  const t0 = Date.now();
  setTimeout(() => ac.abort(), 150);
  const r = await s.call("sl__sleep", { ms: 10000 }, { signal: ac.signal });
  expect(Date.now() - t0).toBeLessThan(1500);
  expect(r).toMatchObject({ isError: true, text: "cancelled" });
  expect(await waitFor(() => /^cancelled \d+$/m.test(readText(cancelLog)), 2000)).toBe(true);
  const t = await s.call("sl__sleep", { ms: 5000 }, { timeoutMs: 300 });
  expect(t).toMatchObject({ isError: true, text: "tool timed out after 0.3 s" });
  await s.close();
});

test("closing a session kills the server's whole process group, SIGTERM-proof grandchild included, within 1 s", async () => {
  const p = pool();
  const gc = tmp("grandchild.pid");
  const file = tmp("gc-server.pid");
  const s = await p.openTools([fakeMcpSpec("gc", { FAKE_MCP_GRANDCHILD: gc, FAKE_MCP_PID_FILE: file }, { private: true })], { cwd: dir });
  const [grandchild, server] = [await readPidFile(gc), await readPidFile(file)];
  pids.push(grandchild, server);
  const t0 = Date.now();
  await s.close();
  expect(Date.now() - t0).toBeLessThan(1000);
  expect(await waitFor(() => !pidAlive(grandchild) && !pidAlive(server), 1000 - (Date.now() - t0))).toBe(true);
});

test("descriptions are clamped with a marker, big schemas and tools over MAX_TOOLS are dropped", async () => {
  const p = pool({ MAX_TOOL_DESCRIPTION_BYTES: "200", MAX_TOOL_SCHEMA_BYTES: "1000", MAX_TOOLS: "6" });
  const s = await p.openTools(
    [fakeMcpSpec("big", { FAKE_MCP_DESC_BYTES: "5000", FAKE_MCP_BIG_SCHEMA_BYTES: "2000", FAKE_MCP_TOOLS: "5", FAKE_MCP_STOP: "x" })],
    { cwd: dir },
  );
  const tools = s.tools();
  for (const t of tools) {
    expect(Buffer.byteLength(t.description)).toBeLessThanOrEqual(200);
    expect(t.description.endsWith(DESCRIPTION_MARKER)).toBe(true);
  }
  expect(tools.some((t) => t.tool === "big_schema")).toBe(false);
  expect(logLines.some((l) => l.includes("input schema over MAX_TOOL_SCHEMA_BYTES") && l.includes("big_schema"))).toBe(true);
  // 4 fixed + 5 extra = 9 offerable tools, 6 kept; the hook is not counted and kept.
  expect(tools.filter((t) => !t.hook).length).toBe(6);
  expect(tools.some((t) => t.hook && t.tool === "_Stop")).toBe(true);
  expect(logLines.some((l) => l.includes("over MAX_TOOLS"))).toBe(true);
  await s.close();
});

test("odd server and tool names are sanitised, bounded to 64 bytes and kept unique", async () => {
  const p = pool();
  const long = "x".repeat(80);
  const s = await p.openTools([fakeMcpSpec("my server!", { FAKE_MCP_EXTRA_TOOLS: `a.b,a_b,${long}` })], { cwd: dir });
  const names = s.tools().map((t) => t.qualifiedName);
  for (const n of names) {
    expect(n).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  }
  expect(new Set(names).size).toBe(names.length);
  const byTool = (name: string) => s.tools().find((t) => t.tool === name)!;
  expect(byTool("a.b").qualifiedName).toBe("my_server___a_b");
  const other = byTool("a_b");
  expect(other.qualifiedName).toMatch(/^my_server___a_b_[0-9a-f]{6}$/);
  const longTool = s.tools().find((t) => t.tool === long)!;
  expect(longTool.qualifiedName.length).toBe(64);
  expect((await s.call(longTool.qualifiedName, { text: "long ok" })).text).toBe("long ok");
  expect((await s.call(other.qualifiedName, { text: "other ok" })).text).toBe("other ok");
  await s.close();
});

test("a crashed server restarts on next use", async () => {
  const p = pool();
  const file = tmp("crash.pid");
  const s = await p.openTools([fakeMcpSpec("cr", { FAKE_MCP_EXIT_AFTER: "1", FAKE_MCP_PID_FILE: file })], { cwd: dir });
  const events: string[] = [];
  s.onServerEvent?.((e) => events.push(e.kind));
  const first = await readPidFile(file);
  pids.push(first);
  expect((await s.call("cr__echo", { text: "one" })).text).toBe("one");
  expect(await waitFor(() => !pidAlive(first) && events.includes("died"), 10_000)).toBe(true);
  expect(await s.call("cr__echo", { text: "two" })).toMatchObject({ isError: false, text: "two" });
  const all = readPids(file);
  pids.push(...all);
  expect(all.length).toBe(2);
  await s.close();
});

test("a server that cannot restart is given up after 3 tries and its tools are withdrawn", async () => {
  const p = pool({ MCP_BACKOFF_FIRST_S: "0.01" });
  const file = tmp("gone.pid");
  const s = await p.openTools([fakeMcpSpec("gn", { FAKE_MCP_EXIT_AFTER: "1", FAKE_MCP_PID_FILE: file, FAKE_MCP_MAX_STARTS: "1" })], { cwd: dir });
  let changed = 0;
  s.onToolsChanged(() => changed++);
  const events: string[] = [];
  s.onServerEvent?.((e) => events.push(e.kind));
  pids.push(await readPidFile(file));
  expect((await s.call("gn__echo", { text: "one" })).text).toBe("one");
  expect(await waitFor(() => !pidAlive(readPids(file)[0]!) && events.includes("died"), 10_000)).toBe(true);
  const r = await s.call("gn__echo", { text: "two" });
  expect(r.isError).toBe(true);
  expect(r.text).toMatch(/MCP server gn is gone .*its tools are withdrawn/);
  expect(s.tools().length).toBe(0);
  expect(changed).toBeGreaterThan(0);
  expect((await s.call("gn__echo", {})).text).toContain("MCP server gn is gone");
  await s.close();
});

test("notifications/tools/list_changed refreshes the session's tools; instructions are reported", async () => {
  const p = pool();
  const s = await p.openTools([fakeMcpSpec("lc", { FAKE_MCP_LIST_CHANGED: "1", FAKE_MCP_INSTRUCTIONS: "use grow" })], { cwd: dir });
  expect(s.instructions()).toEqual({ lc: "use grow" });
  let changed = 0;
  s.onToolsChanged(() => changed++);
  expect((await s.call("lc__grow", {})).text).toBe("added grown0");
  expect(await waitFor(() => changed > 0, 2000)).toBe(true);
  expect(s.tools().map((t) => t.qualifiedName)).toContain("lc__grown0");
  expect((await s.call("lc__grown0", {})).text).toBe("grown0 ran");
  await s.close();
});

test("non-JSON stdout noise is skipped; an over-long line ends that server, not the pool", async () => {
  const p = pool({ MAX_LINE_BYTES: "65536" });
  const s = await p.openTools([fakeMcpSpec("noisy", { FAKE_MCP_STDOUT_NOISE: "1", FAKE_MCP_RESULT_BYTES: "100000" })], { cwd: dir });
  expect(logLines.some((l) => l.includes("non-JSON-RPC line") && l.includes("noisy"))).toBe(true);
  const r = await s.call("noisy__echo", { text: "x" });
  expect(r.isError).toBe(true);
  expect(r.text).toContain("noisy");
  expect(logLines.some((l) => l.includes("too large") && l.includes("noisy"))).toBe(true);
  await s.close();
});

test("closeAll stops every server of every session", async () => {
  const p = pool();
  const file = tmp("all.pid");
  await p.openTools([fakeMcpSpec("p1", { FAKE_MCP_PID_FILE: file, A: "1" }), fakeMcpSpec("p2", { FAKE_MCP_PID_FILE: file, A: "2" })], {
    cwd: dir,
  });
  const started = readPids(file);
  pids.push(...started);
  expect(started.length).toBe(2);
  await p.closeAll();
  expect(await waitFor(() => started.every((pid) => !pidAlive(pid)), 1000)).toBe(true);
  await expect(p.openTools([], { cwd: dir })).rejects.toThrow(/closed/);
});

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
