// End-to-end tests of `tendril dev-mcp` through the built binary, driven by the MCP SDK client:
// tools and hooks as listed, shell kills on every exit path, output caps, edits that survive kill -9.
// Needs `npm run build` first (dist/tendril).
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { BIN } from "./binary.ts";
import { callTool as call, type DevMcp, editTempFileAppears, startDevMcp, stopDevMcps, textOf } from "./dev-mcp-harness.ts";
import { pidAlive as alive, waitFor } from "./fake-mcp-helpers.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-dev-mcp-e2e-")));
const root = join(base, "root");
const cache = join(base, "cache");

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error("dist/tendril is missing: run `npm run build` first");
  mkdirSync(root);
  writeFileSync(join(root, "Cargo.toml"), "[package]\nname = \"demo\"\n");
});

afterEach(stopDevMcps);
afterAll(() => rmSync(base, { recursive: true, force: true }));

const start = (env: Record<string, string> = {}): Promise<DevMcp> => startDevMcp(root, base, env);

/** The shell command: a grandchild that ignores SIGTERM, its pid written to `file`. */
const stubborn = (file: string) => `bash -c 'trap "" TERM; sleep 60' & echo $! > ${file}; wait`;
async function grandchildPid(file: string): Promise<number> {
  expect(await waitFor(() => existsSync(file) && readFileSync(file, "utf8").trim() !== "", 5000)).toBe(true);
  return Number(readFileSync(file, "utf8"));
}

test("lists the tools and hooks with their hints, and names root, tools and stack in the instructions", async () => {
  const { client } = await start();
  const text = client.getInstructions() ?? "";
  for (const word of [root, "shell", "str_replace", "todo", "Rust"]) expect(text).toContain(word);
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  expect(Object.keys(byName).sort()).toEqual(["_PostCompact", "_Stop", "shell", "shell_kill", "shell_read", "shell_write", "str_replace", "todo"]);
  expect(byName.shell_read!.annotations?.readOnlyHint).toBe(true);
  expect(byName.shell_write!.annotations?.readOnlyHint).toBe(false);
  expect(byName.shell!.annotations?.readOnlyHint).toBe(false);
  expect(byName.str_replace!.annotations?.readOnlyHint).toBe(false);
  expect(byName.todo!.annotations?.readOnlyHint).toBe(true);
  expect(byName._Stop!.description?.toLowerCase()).toContain("lifecycle hook");
  expect(byName._PostCompact!.description?.toLowerCase()).toContain("lifecycle hook");
});

test("rg and tree resolve into a 0700 shim dir first on PATH, removed when the server exits", async () => {
  const { client } = await start();
  const r = await call(client, "shell", { command: 'command -v rg; command -v tree; echo "${PATH%%:*}"' });
  const [rg, tree, first] = String(r.structuredContent?.stdout).trim().split("\n");
  const dir = dirname(rg!);
  expect(dirname(tree!)).toBe(dir);
  expect(first).toBe(dir);
  expect(statSync(dir).mode & 0o777).toBe(0o700);
  await client.close();
  expect(await waitFor(() => !existsSync(dir), 2000)).toBe(true);
});

test("stdin is closed: cat returns at once", async () => {
  const { client } = await start();
  const t0 = Date.now();
  const r = await call(client, "shell", { command: "cat; echo after-cat", timeout_s: 20 });
  expect(r.structuredContent?.stdout).toBe("after-cat\n");
  expect(Date.now() - t0).toBeLessThan(3000);
});

test("timeout: exit code 124, and a grandchild ignoring SIGTERM is dead within 1 s", async () => {
  const { client } = await start();
  const file = join(base, "timeout.pid");
  const r = await call(client, "shell", { command: stubborn(file), timeout_s: 0.5 });
  expect(r.structuredContent?.exit_code).toBe(124);
  expect(r.structuredContent?.timed_out).toBe(true);
  expect(textOf(r)).toContain("exit_code: 124");
  expect(await waitFor(() => !alive(Number(readFileSync(file, "utf8"))), 1000)).toBe(true);
});

test("MCP cancellation kills the group, the SIGTERM-ignoring grandchild within 1 s", async () => {
  const { client } = await start();
  const file = join(base, "cancel.pid");
  const ac = new AbortController();
  const pending = call(client, "shell", { command: stubborn(file), timeout_s: 60 }, ac.signal).catch((e: Error) => e);
  const pid = await grandchildPid(file);
  ac.abort("user cancelled");
  expect(await pending).toBeInstanceOf(Error);
  expect(await waitFor(() => !alive(pid), 1000)).toBe(true);
  const after = await call(client, "shell", { command: "echo still-serving" });
  expect(after.structuredContent?.stdout).toBe("still-serving\n");
});

test("stdin EOF: the server exits by itself and the grandchild is dead within 1 s", async () => {
  const { client, pid: serverPid } = await start();
  const file = join(base, "eof.pid");
  void call(client, "shell", { command: stubborn(file), timeout_s: 60 }).catch(() => {});
  const pid = await grandchildPid(file);
  const t0 = Date.now();
  await client.close(); // ends stdin; the SDK would only SIGTERM after 2 s
  expect(Date.now() - t0).toBeLessThan(1500);
  expect(await waitFor(() => !alive(pid), Math.max(0, 1000 - (Date.now() - t0)))).toBe(true);
  expect(alive(serverPid)).toBe(false);
});

test("SIGTERM: the server exits and the grandchild is dead within 1 s", async () => {
  const { client, pid: serverPid } = await start();
  const file = join(base, "sigterm.pid");
  void call(client, "shell", { command: stubborn(file), timeout_s: 60 }).catch(() => {});
  const pid = await grandchildPid(file);
  process.kill(serverPid, "SIGTERM");
  expect(await waitFor(() => !alive(pid), 1000)).toBe(true);
  expect(await waitFor(() => !alive(serverPid), 1000)).toBe(true);
});

test("output over the cap keeps the tail and names an artifact file with the full output", async () => {
  const { client } = await start({ TENDRIL_SHIM_OUTPUT_LINES: "50", TENDRIL_SHELL_TAIL_BYTES: "256" });
  const r = await call(client, "shell", { command: "seq 1 3000" });
  const s = r.structuredContent!;
  expect(s.truncated).toBe(true);
  expect(String(s.stdout).endsWith("2999\n3000\n")).toBe(true);
  expect(String(s.stdout).length).toBeLessThanOrEqual(256);
  const artifact = String(s.artifact);
  expect(artifact.startsWith(join(cache, "tendril", "artifacts"))).toBe(true);
  expect(textOf(r)).toContain(artifact);
  expect(readFileSync(artifact, "utf8")).toBe(Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join(""));
});

test("bad input and escaping paths are isError results, and the server keeps serving", async () => {
  const { client } = await start();
  expect((await call(client, "shell", {})).isError).toBe(true);
  expect((await call(client, "shell", { command: "pwd", workdir: ".." })).isError).toBe(true);
  expect((await call(client, "shell", { command: "pwd", workdir: "/" })).isError).toBe(true);
  expect((await call(client, "str_replace", { path: 42, old_str: "a", new_str: "b" })).isError).toBe(true);
  expect((await call(client, "str_replace", { path: "/etc/hostname", old_str: "a", new_str: "b" })).isError).toBe(true);
  expect((await call(client, "todo", { items: "nope" })).isError).toBe(true);
  expect((await call(client, "shell", { command: "echo ok" })).structuredContent?.stdout).toBe("ok\n");
});

test("str_replace edits through the server and answers with a diff", async () => {
  const { client } = await start();
  writeFileSync(join(root, "lib.rs"), "fn main() {\n    println!(\"hi\");\n}\n");
  const r = await call(client, "str_replace", { path: "lib.rs", old_str: '"hi"', new_str: '"hello"' });
  expect(r.isError).toBeFalsy();
  expect(textOf(r)).toContain('-    println!("hi");\n+    println!("hello");');
  expect(readFileSync(join(root, "lib.rs"), "utf8")).toContain('"hello"');
});

test("kill -9 in the middle of edits leaves the old or the new file, never a mix", async () => {
  const lines = Array.from({ length: 60_000 }, (_, i) => `line ${i} of a large file that is edited back and forth`);
  const versionA = ["MARKER_A", ...lines].join("\n") + "\n";
  const versionB = ["MARKER_B", ...lines].join("\n") + "\n";
  const path = join(root, "big.txt");
  for (let round = 0; round < 3; round++) {
    writeFileSync(path, versionA);
    const { client, pid } = await start();
    let stop = false;
    let edits = 0;
    let firstEdit = () => {};
    const edited = new Promise<void>((r) => (firstEdit = r));
    const loop = (async () => {
      for (let i = 0; !stop && i < 10_000; i++) {
        const [from, to] = i % 2 === 0 ? ["MARKER_A", "MARKER_B"] : ["MARKER_B", "MARKER_A"];
        const r = await call(client, "str_replace", { path: "big.txt", old_str: from, new_str: to });
        if (!r.isError && ++edits === 1) firstEdit();
      }
    })().catch(() => {});
    // Round 0 kills between two edits (right after one answered), the others in the middle of a write
    // (its temp file exists): the moments a torn file could come from.
    if (round === 0) await Promise.race([edited, Bun.sleep(20_000)]);
    else expect(await editTempFileAppears(root, round * 3)).toBe(true);
    process.kill(pid, "SIGKILL");
    stop = true;
    await loop;
    if (round === 0) expect(edits).toBeGreaterThan(0); // later rounds saw an edit's temp file: edits were flowing
    const now = readFileSync(path, "utf8");
    expect(now === versionA || now === versionB).toBe(true);
  }
});

test("kill -9 of the server ends its background commands too: the watchdog leaves nothing alive", async () => {
  const { client, pid } = await start();
  const file = join(base, "bg-pid");
  const started = await call(client, "shell", { command: `bash -c 'trap "" TERM; sleep 300' & echo $! > ${file}; wait`, background: true });
  expect(started.structuredContent).toMatchObject({ background_id: "bg1", running: true });
  const child = await grandchildPid(file);
  expect(alive(child)).toBe(true);
  process.kill(pid, "SIGKILL");
  expect(await waitFor(() => !alive(child), 10_000)).toBe(true);
});

test("a background command over MCP: started, written to, read, killed", async () => {
  const { client } = await start();
  const id = (await call(client, "shell", { command: "exec cat", background: true })).structuredContent?.background_id as string;
  await call(client, "shell_write", { id, text: "ping\n" });
  let out = "";
  for (let i = 0; i < 20 && !out.includes("ping"); i++) out += String((await call(client, "shell_read", { id, wait_ms: 500 })).structuredContent?.output ?? "");
  expect(out).toBe("ping\n");
  const killed = await call(client, "shell_kill", { id });
  expect(killed.structuredContent).toMatchObject({ running: false });
});

test("todo and the hooks: _Stop objects while items are open, _PostCompact returns the list", async () => {
  const { client } = await start();
  expect(textOf(await call(client, "_Stop"))).toBe("");
  const set = await call(client, "todo", { items: [{ text: "write the parser", done: false }, { text: "plan", done: true }] });
  expect(textOf(set)).toContain("[ ] write the parser\n[x] plan");
  expect(textOf(await call(client, "_Stop"))).toContain("[ ] write the parser");
  expect(textOf(await call(client, "_PostCompact"))).toContain("[ ] write the parser");
  const dropped = await call(client, "todo", { items: [{ text: "plan", done: true }] });
  expect(textOf(dropped)).toContain("removed without being marked done");
  expect(textOf(await call(client, "_Stop"))).toBe("");
});

test("artifact folders of other sessions older than ARTIFACTS_STALE_S are deleted at start-up, younger ones kept", async () => {
  const parent = join(cache, "tendril", "artifacts");
  const old = join(parent, "old-session");
  const young = join(parent, "young-session");
  mkdirSync(old, { recursive: true });
  mkdirSync(young, { recursive: true });
  const hourAgo = Date.now() / 1000 - 3600;
  utimesSync(old, hourAgo, hourAgo);
  const { client } = await start({ TENDRIL_ARTIFACTS_STALE_S: "600" });
  await call(client, "todo");
  expect(await waitFor(() => !existsSync(old), 2000)).toBe(true);
  expect(existsSync(young)).toBe(true);
});
