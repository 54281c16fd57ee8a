// Regression tests of the tools side, each named after the bug it pins, run through the built binary:
// the str_replace symlink race, leaked shim folders, orphaned shell groups after SIGKILL, dev-mcp's
// answers to malformed lines, and temp files left by interrupted edits.
import { afterAll, afterEach, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { BIN } from "./binary.ts";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callTool, editTempFileAppears, entryAppears, startDevMcp, stopDevMcps, textOf } from "./dev-mcp-harness.ts";
import { pidAlive, waitFor } from "./fake-mcp-helpers.ts";
import { type RawAgent, spawnRawMode } from "./raw-harness.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-regress-tools-")));
const raws: RawAgent[] = [];
afterEach(async () => {
  for (const r of raws.splice(0)) r.kill();
  await stopDevMcps();
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A fresh directory under the test's base. */
function scratch(name: string): string {
  const dir = join(base, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

// Swaps `sub` between the real directory and a symlink to ../outside as fast as it can.
const SWAPPER = `
const { existsSync, renameSync, symlinkSync, unlinkSync } = require("node:fs");
const [root, stop, until] = process.argv.slice(2);
process.chdir(root);
let swaps = 0;
while (Date.now() < Number(until) && !existsSync(stop)) {
  try {
    renameSync("sub", "sub.real");
    symlinkSync("../outside", "sub");
    unlinkSync("sub");
    renameSync("sub.real", "sub");
    swaps++;
  } catch {}
}
console.log(swaps);
`;

test("regression: str_replace could write outside the root when a workspace process swapped sub/ for a symlink to ../outside", async () => {
  const dir = scratch("race");
  const root = join(dir, "root");
  const outside = join(dir, "outside");
  mkdirSync(join(root, "sub"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, "sub", "victim.txt"), "aaa\n");
  writeFileSync(join(outside, "victim.txt"), "aaa\n");
  const script = join(dir, "swapper.cjs");
  writeFileSync(script, SWAPPER);
  const stop = join(dir, "stop");
  const { client } = await startDevMcp(root, scratch("race-home"));
  const swapper = spawn(process.execPath, [script, root, stop, String(Date.now() + 30_000)], { stdio: ["ignore", "pipe", "inherit"] });
  let swaps = "";
  swapper.stdout.on("data", (b: Buffer) => (swaps += b.toString()));
  const done = new Promise<void>((r) => swapper.once("exit", () => r()));
  try {
    const t0 = Date.now();
    for (let i = 0; i < 120 && Date.now() - t0 < 6_000; i++) {
      const [from, to] = i % 2 === 0 ? ["aaa", "bbb"] : ["bbb", "aaa"];
      await callTool(client, "str_replace", { path: "sub/victim.txt", old_str: from, new_str: to });
      await callTool(client, "str_replace", { path: "sub/victim.txt", old_str: to, new_str: from });
      await callTool(client, "str_replace", { path: `sub/new-${i}.txt`, old_str: "", new_str: "new\n" });
      await callTool(client, "str_replace", { path: `sub/deep-${i}/x.txt`, old_str: "", new_str: "deep\n" });
    }
  } finally {
    writeFileSync(stop, "");
    await done;
  }
  expect(Number(swaps)).toBeGreaterThan(0);
  expect(readdirSync(outside)).toEqual(["victim.txt"]);
  expect(readFileSync(join(outside, "victim.txt"), "utf8")).toBe("aaa\n");
}, 60_000);

const tempFiles = (dir: string) => readdirSync(dir).filter((n) => /\.tendril-.*\.tmp$/.test(n));

test("regression: temp files of interrupted edits stayed in the workspace after kill -9 mid-edit (now the next edit sweeps them)", async () => {
  const dir = scratch("interrupted");
  const root = join(dir, "root");
  mkdirSync(root);
  const home = scratch("interrupted-home");
  const big = Array.from({ length: 150_000 }, (_, i) => `line ${i} of a large file edited back and forth`).join("\n");
  writeFileSync(join(root, "big.txt"), `MARKER_A\n${big}\n`);
  // What a kill -9 during the write leaves when it lands: the sweep must take it whatever the timing.
  writeFileSync(join(root, ".big.txt.tendril-4194303-0123abcd.tmp"), "partial");
  const env = { TENDRIL_EDIT_TEMP_STALE_S: "0.05" };
  for (let round = 0; round < 3; round++) {
    const { client, pid } = await startDevMcp(root, home, env);
    let stop = false;
    const loop = (async () => {
      for (let i = 0; !stop && i < 1000; i++) {
        const [from, to] = i % 2 === 0 ? ["MARKER_A", "MARKER_B"] : ["MARKER_B", "MARKER_A"];
        await callTool(client, "str_replace", { path: "big.txt", old_str: from, new_str: to }).catch(() => {});
      }
    })();
    // Each round kills at another edit's write, once its temp file exists: the hard case every time.
    expect(await editTempFileAppears(root, 1 + round * 2)).toBe(true);
    process.kill(pid, "SIGKILL");
    stop = true;
    await loop;
  }
  const past = new Date(Date.now() - 60_000); // older than TENDRIL_EDIT_TEMP_STALE_S
  for (const f of tempFiles(root)) utimesSync(join(root, f), past, past);
  const { client } = await startDevMcp(root, home, env);
  const r = await callTool(client, "str_replace", { path: "note.txt", old_str: "", new_str: "x\n" });
  expect(r.isError).toBeFalsy();
  expect(tempFiles(root)).toEqual([]);
}, 60_000);

/** A dev-mcp on a raw pipe, with its own HOME and TMPDIR under `dir`. */
function rawDevMcp(dir: string, env: Record<string, string> = {}): RawAgent {
  const raw = spawnRawMode("dev-mcp", { HOME: dir, TMPDIR: dir, XDG_CACHE_HOME: join(dir, "cache"), ...env }, ["--root", dir]);
  raws.push(raw);
  return raw;
}

test("regression: dev-mcp ignored malformed lines ('{' now gets -32700 with id null, a wrong jsonrpc -32600, as from the agent)", async () => {
  const raw = rawDevMcp(scratch("malformed"));
  raw.writeLine("{");
  expect(await raw.nextMessage()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
  raw.writeLine({ jsonrpc: "1.0", id: 1, method: "initialize", params: {} });
  expect(await raw.nextMessage()).toMatchObject({ id: 1, error: { code: -32600 } });
  raw.writeLine({ jsonrpc: "2.0" });
  expect(await raw.nextMessage()).toMatchObject({ id: null, error: { code: -32600 } });
  raw.writeLine("[]");
  expect(await raw.nextMessage()).toMatchObject({ id: null, error: { code: -32600 } });
  raw.writeLine({ jsonrpc: "2.0", id: 2, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
  expect((await raw.response(2)).result?.serverInfo?.name).toBe("tendril-dev");
  raw.writeLine({ jsonrpc: "2.0", id: 3, method: "no/such" });
  expect((await raw.response(3)).error?.code).toBe(-32601);
});

test("regression: dev-mcp ignored an over-long line (now it exits non-zero within 5 s, as the agent does)", async () => {
  const raw = rawDevMcp(scratch("oversize"), { TENDRIL_MAX_LINE_BYTES: "256" });
  raw.writeLine({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(1000) } });
  const code = await raw.exited(5000);
  expect(code).not.toBe(0);
  expect(typeof code).toBe("number");
  expect(raw.stderr()).toContain("MAX_LINE_BYTES");
});

/** Pids of live processes whose environment holds `mark` (a dev-mcp passes its environment on). */
function processesMarked(mark: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, "latin1").includes(mark) && pidAlive(pid)) found.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

test("regression: kill -9 of dev-mcp during shell 'sleep 30' left the sleep and other processes behind", async () => {
  const dir = scratch("orphans");
  const mark = `TENDRIL_TEST_MARK=orphans-${process.pid}-${Date.now()}`;
  const [k, v] = mark.split("=") as [string, string];
  const { client, pid } = await startDevMcp(dir, dir, { [k]: v });
  const pidFile = join(dir, "sleep.pid");
  const pending = callTool(client, "shell", { command: `sleep 30 & echo $! > ${pidFile}; wait`, timeout_s: 60 }).catch((e: Error) => e);
  expect(await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", 5000)).toBe(true);
  const sleepPid = Number(readFileSync(pidFile, "utf8"));
  expect(processesMarked(mark).length).toBeGreaterThan(1);
  process.kill(pid, "SIGKILL");
  expect(await waitFor(() => !pidAlive(sleepPid), 5000)).toBe(true);
  expect(await waitFor(() => processesMarked(mark).length === 0, 5000)).toBe(true);
  await pending;
});

/**
 * Starts a dev-mcp, ends it with `how` `after` ms of its start-up or during a `sleep 300` call (once
 * the call made its shim folder), and resolves once it has exited (≤ 10 s).
 * `ladder` is how the agent stops its tool server: stdin EOF and SIGTERM, SIGKILL 200 ms later.
 */
async function startAndEnd(tmp: string, how: "stdin" | "SIGTERM" | "ladder", after: number | "in-sleep-call"): Promise<void> {
  const child = spawn(BIN, ["dev-mcp", "--root", tmp], {
    stdio: ["pipe", "pipe", "ignore"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmp, TMPDIR: tmp, XDG_CACHE_HOME: join(tmp, "cache") },
  });
  child.stdin.on("error", () => {});
  child.stdout.resume();
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  let madeShims = true;
  if (after === "in-sleep-call") {
    const shims = entryAppears(tmp, /^tendril-shims-/, 1, 10_000);
    const init = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } };
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: init }) + "\n");
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
    // A command that ignores SIGTERM makes the server's own kill ladder take its whole grace.
    const command = how === "ladder" ? `trap "" TERM; sleep 300` : "sleep 300";
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "shell", arguments: { command } } }) + "\n");
    madeShims = await shims;
  } else {
    // No event marks a moment of start-up: a random one, so the batches cover it.
    await Bun.sleep(after);
  }
  if (how !== "SIGTERM") child.stdin.end();
  if (how !== "stdin") child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), how === "ladder" ? 200 : 10_000);
  await exited;
  clearTimeout(timer);
  expect(madeShims).toBe(true);
}

test("regression: shim folders leaked when stdin closed or SIGTERM came (alone or as the agent's kill ladder) during start-up or a sleep 300 call", async () => {
  // One TMPDIR per server: the start-up sweep of one must not hide what another left.
  const tmps: string[] = [];
  const t0 = Date.now();
  for (let batch = 0; batch < 5 && Date.now() - t0 < 30_000; batch++) {
    await Promise.all(
      Array.from({ length: 5 }, (_, i) => {
        const tmp = scratch(`shims-leak/${batch}-${i}`);
        tmps.push(tmp);
        const how = (["stdin", "SIGTERM", "ladder"] as const)[(batch + i) % 3]!;
        return startAndEnd(tmp, how, i >= 3 ? "in-sleep-call" : Math.random() * 150);
      }),
    );
  }
  const left = tmps.flatMap((t) => readdirSync(t).filter((n) => n.startsWith("tendril-shims-")).map((n) => join(t, n)));
  expect(left).toEqual([]);
}, 90_000);

test("regression: shim folders of servers that died by SIGKILL stayed forever (now swept when the next server makes its folder, live owners' kept)", async () => {
  const tmp = scratch("shims-stale");
  const gone = spawn("true");
  await new Promise((r) => gone.once("exit", r));
  const stale = join(tmp, `tendril-shims-${gone.pid}-AbC123`);
  const live = join(tmp, `tendril-shims-${process.pid}-XyZ789`);
  mkdirSync(join(stale, "inner"), { recursive: true });
  mkdirSync(live);
  const { client, pid } = await startDevMcp(tmp, tmp);
  const own = () => readdirSync(tmp).filter((n) => n.startsWith(`tendril-shims-${pid}-`));
  // No shell command yet: no folder of its own, and nothing swept.
  await callTool(client, "todo");
  expect([own(), existsSync(stale)]).toEqual([[], true]);
  // The first command makes the folder (the shims first on PATH), sweeping the dead owner's first.
  const r = await callTool(client, "shell", { command: 'printf %s "$PATH" | cut -d: -f1' });
  expect(own()).toHaveLength(1);
  expect(textOf(r)).toContain(join(tmp, own()[0]!));
  expect(existsSync(stale)).toBe(false);
  expect(existsSync(live)).toBe(true);
});

test("regression: dev-mcp showed its hooks to every client, and structuredContent to 2024-11-05 clients", async () => {
  for (const [name, version, hooks, structured] of [
    ["inspector", "2024-11-05", false, false],
    ["inspector", "2025-06-18", false, true],
    ["tendril", "2025-06-18", true, true],
  ] as const) {
    const raw = rawDevMcp(scratch(`client-${name}-${version}`));
    raw.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: version, capabilities: {}, clientInfo: { name, version: "1" } } });
    await raw.response(1);
    raw.writeLine({ jsonrpc: "2.0", method: "notifications/initialized" });
    raw.writeLine({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
    const names = ((await raw.response(2)).result?.tools as { name: string }[]).map((t) => t.name);
    expect([name, version, names.includes("_Stop"), names.includes("_PostCompact")]).toEqual([name, version, hooks, hooks]);
    raw.writeLine({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "shell", arguments: { command: "echo hi" } } });
    const result = (await raw.response(3)).result as { structuredContent?: unknown; content: unknown[] };
    expect([name, version, result.structuredContent !== undefined]).toEqual([name, version, structured]);
    expect(result.content.length).toBe(1);
  }
});

test("regression: bad tools/call arguments (null, a string, name: 5) answered -32603 with a schema dump (now -32602 naming the field)", async () => {
  const raw = rawDevMcp(scratch("bad-call"));
  raw.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
  await raw.response(1);
  const cases: [unknown, string][] = [
    [{ name: "shell", arguments: null }, "arguments must be an object"],
    [{ name: "shell", arguments: "x" }, "arguments must be an object"],
    [{ name: 5 }, "name must be a non-empty string"],
  ];
  for (const [i, [params, why]] of cases.entries()) {
    raw.writeLine({ jsonrpc: "2.0", id: 10 + i, method: "tools/call", params });
    const r = await raw.response(10 + i);
    expect([i, r.error?.code]).toEqual([i, -32602]);
    expect(r.error?.message).toContain(why);
  }
});

test("regression: `tendril dev-mcp --sandbox` served `_ShellUnsandboxed` to any client that named it (a way out of the sandbox); the hook is the in-process agent's alone", async () => {
  const dir = scratch("unsandboxed-hook");
  const root = join(dir, "root");
  mkdirSync(root);
  const { client } = await startDevMcp(root, dir, { TENDRIL_SANDBOX: "workspace-write" });
  const r = await callTool(client, "_ShellUnsandboxed", { command: "touch escaped" });
  expect(r.isError).toBe(true);
  expect(textOf(r)).toMatch(/_ShellUnsandboxed/);
  expect(existsSync(join(root, "escaped"))).toBe(false);
});
