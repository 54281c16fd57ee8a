// A session's MCP servers report their deaths, restarts and withdrawal (one event per change, named
// as the session names the server), with real fake-MCP processes through the real pool.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fakeMcpSpec, killGroupsOf, readPidFile, readPids } from "../../tests/fake-mcp-helpers.ts";
import { loadLimits } from "../limits.ts";
import { createMcpPool } from "./pool.ts";
import type { McpPool, McpServerEvent, McpSessionTools } from "./types.ts";
import { WaitList } from "../../tests/wait-list.ts";

const dir = mkdtempSync(join(tmpdir(), "mcp-events-test-"));
const pools: McpPool[] = [];
const pids: number[] = [];
const quiet = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} };
afterAll(async () => {
  await Promise.allSettled(pools.map((p) => p.closeAll()));
  killGroupsOf(pids);
  rmSync(dir, { recursive: true, force: true });
});

function pool(env: Record<string, string> = {}): McpPool {
  const p = createMcpPool({ limits: loadLimits(env), env: process.env, log: quiet });
  pools.push(p);
  return p;
}

/** The session's server events as they come, and `seen(n)`: them once there are `n` (the death is
 *  noticed when the process exits). */
function recordEvents(s: McpSessionTools) {
  const events: McpServerEvent[] = [];
  const waits = new WaitList();
  s.onServerEvent!((e) => {
    events.push(e);
    waits.changed();
  });
  const seen = async (n: number, ms = 5000): Promise<string[]> => {
    await waits.until(() => events.length >= n, () => `${events.length} server events, not ${n}, within ${ms} ms`, ms);
    return events.map((e) => `${e.server} ${e.kind}`);
  };
  return { events, seen };
}

test("a server that dies reports died, and restarted once the next call brings it back", async () => {
  const file = join(dir, "restart.pid");
  const s = await pool().openTools([fakeMcpSpec("rs", { FAKE_MCP_EXIT_AFTER: "1", FAKE_MCP_PID_FILE: file })], { cwd: dir });
  const { seen } = recordEvents(s);
  pids.push(await readPidFile(file));
  expect((await s.call("rs__echo", { text: "one" })).text).toBe("one");
  expect(await seen(1)).toEqual(["rs died"]);
  expect((await s.call("rs__echo", { text: "two" })).text).toBe("two");
  pids.push(...readPids(file));
  expect(await seen(2)).toEqual(["rs died", "rs restarted"]);
  await s.close();
});

test("a server that cannot restart reports died, then gone; a closed session hears nothing more", async () => {
  const file = join(dir, "gone.pid");
  const p = pool({ TENDRIL_MCP_BACKOFF_FIRST_S: "0.01" });
  const s = await p.openTools([fakeMcpSpec("gn", { FAKE_MCP_EXIT_AFTER: "1", FAKE_MCP_PID_FILE: file, FAKE_MCP_MAX_STARTS: "1" })], { cwd: dir });
  const { events, seen } = recordEvents(s);
  pids.push(await readPidFile(file));
  await s.call("gn__echo", { text: "one" });
  expect(await seen(1)).toEqual(["gn died"]);
  expect((await s.call("gn__echo", { text: "two" })).isError).toBe(true);
  expect(await seen(2)).toEqual(["gn died", "gn gone"]);
  expect(events[1]!.detail).toContain("its tools are withdrawn");
  await s.close();
  expect(events.length).toBe(2);
});
