// Background shell commands (SPEC §3.3), with real processes: a loopback HTTP server started in the
// background answers a later curl; a REPL answers what is written to it; `yield_ms` answers a quick
// command as a plain call and hands a slow one over; a chatty command stays within its output bound;
// the budget is enforced with a clear error; ending the session (stopAll) leaves no process alive.
import { afterAll, afterEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ShellTool } from "./shell.ts";
import { type ShellLimits, testShell } from "../../tests/test-shell.ts";
import { OutputRing } from "./background.ts";
import { freePort, pidAlive as alive } from "../../tests/fake-mcp-helpers.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-bg-test-")));
const root = join(base, "root");
mkdirSync(root, { recursive: true });
afterAll(() => rmSync(base, { recursive: true, force: true }));

const shells: ShellTool[] = [];
afterEach(async () => {
  await Promise.all(shells.splice(0).map((s) => s.stopAll()));
});

function makeShell(background: Partial<NonNullable<ShellLimits["background"]>> = {}): ShellTool {
  const s = testShell(root, base, { maxRunning: 16, background: { max: 4, outputBytes: 64 * 1024, readWaitMaxMs: 10_000, ...background } });
  shells.push(s);
  return s;
}

const live = () => new AbortController().signal;
const idOf = (r: { structured?: Record<string, unknown> }) => r.structured!.background_id as string;


/** Reads `id` until `ok` holds on everything read so far (bounded), `first` included (the output the
 *  start's own answer carried); what was read. */
async function readUntil(s: ShellTool, id: string, ok: (all: string) => boolean, what: string, first = ""): Promise<string> {
  let all = first;
  const t0 = Date.now();
  while (!ok(all)) {
    if (Date.now() - t0 > 20_000) throw new Error(`no ${what} within 20 s; read: ${all.slice(-500)}`);
    const r = await s.read({ id, wait_ms: 500 });
    if (r.isError) throw new Error(r.text);
    all += r.structured!.output as string;
    if (r.structured!.running === false && !ok(all)) throw new Error(`${id} ended before ${what}: ${r.text}`);
  }
  return all;
}

test("a loopback HTTP server started in the background answers a later curl call, then ends on shell_kill", async () => {
  const s = makeShell();
  const port = await freePort();
  const started = await s.call({ command: `exec python3 -u -m http.server ${port} --bind 127.0.0.1`, background: true }, live());
  expect(started.isError).toBeUndefined();
  const id = idOf(started);
  expect(id).toBe("bg1");
  expect(started.structured!.running).toBe(true);
  expect(started.text).toContain("shell_read");
  await readUntil(s, id, (all) => all.includes("Serving HTTP"), "server banner", started.structured!.output as string);
  // a plain call, later, in the same session
  const got = await s.call({ command: `curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:${port}/` }, live());
  expect(got.structured).toMatchObject({ exit_code: 0, stdout: "200" });
  // the server logged the request; it is still running
  const log = await readUntil(s, id, (all) => all.includes("GET / "), "request log line");
  expect(log).toContain("GET / ");
  const killed = await s.kill({ id });
  expect(killed.structured).toMatchObject({ background_id: id, running: false });
  expect(killed.text).toContain(`${id} ended`);
  // and it is forgotten
  expect((await s.read({ id })).isError).toBe(true);
  const after = await s.call({ command: `curl -s -m 2 -o /dev/null -w '%{http_code}' http://127.0.0.1:${port}/ || true` }, live());
  expect(after.structured!.stdout).not.toBe("200");
});

test("a REPL answers what is written to its stdin; eof ends it and its exit code is read", async () => {
  const s = makeShell();
  const id = idOf(await s.call({ command: "exec python3 -i -q -u", background: true }, live()));
  const wrote = await s.write({ id, text: "print(6 * 7)\n" });
  expect(wrote.isError).toBeUndefined();
  expect(await readUntil(s, id, (all) => all.includes("42"), "the answer")).toContain("42");
  await s.write({ id, text: "import sys; sys.exit(3)\n", eof: true });
  let end: Record<string, unknown> | undefined;
  for (let i = 0; i < 40 && !end; i++) {
    const r = await s.read({ id, wait_ms: 500 });
    if (r.structured!.running === false) end = r.structured;
  }
  expect(end).toMatchObject({ running: false, exit_code: 3 });
  // writing to an unknown id says which ones exist
  const none = await s.write({ id: "bg9", text: "x" });
  expect(none.isError).toBe(true);
  expect(none.text).toContain("bg9");
});

test("yield_ms: a command that ends in time answers as a plain call; one still running goes on under an id with its output so far", async () => {
  const s = makeShell();
  const quick = await s.call({ command: "echo quick", yield_ms: 5000 }, live());
  expect(quick.structured).toMatchObject({ exit_code: 0, stdout: "quick\n" });
  expect(quick.structured!.background_id).toBeUndefined();
  const slow = await s.call({ command: "echo first; sleep 30", yield_ms: 300 }, live());
  expect(slow.structured).toMatchObject({ background_id: "bg1", running: true, output: "first\n" });
  expect(s.background.running).toBe(1);
});

test("regression: a background command ran the user's ~/.bashrc first (its stdin a socket: bash took it for sshd's); now it runs as a plain one does", async () => {
  // HOME is `base`; the environment has no SHLVL, as the agent's commands have none.
  writeFileSync(join(base, ".bashrc"), "echo bashrc-ran\n");
  try {
    const s = makeShell();
    const plain = await s.call({ command: "echo plain-ran" }, live());
    expect(plain.structured!.stdout).toBe("plain-ran\n");
    const started = await s.call({ command: "echo kept-ran; exec sleep 30", background: true }, live());
    const all = await readUntil(s, idOf(started), (text) => text.includes("kept-ran"), "its first line", started.structured!.output as string);
    expect(all).toBe("kept-ran\n");
  } finally {
    rmSync(join(base, ".bashrc"), { force: true });
  }
});

test("a chatty command stays within its output bound: the newest output is kept, the cut is said", async () => {
  const s = makeShell({ outputBytes: 4096 });
  // ~190 KB printed, then quiet: read once, the newest 4 KiB kept and the drop named
  const chatty = await s.call({ command: "for i in $(seq 1 20000); do echo row $i; done; echo printed-all; sleep 30", background: true }, live());
  await readUntil(s, idOf(chatty), (all) => all.includes("printed-all"), "the end of the output", chatty.structured!.output as string);
  const id2 = idOf(await s.call({ command: "for i in $(seq 1 20000); do echo row $i; done; sleep 30", background: true }, live()));
  await new Promise((r) => setTimeout(r, 1500));
  const r = await s.read({ id: id2 });
  const out = r.structured!.output as string;
  expect(Buffer.byteLength(out)).toBeLessThanOrEqual(4096);
  expect(out).toContain("row 20000");
  expect(r.structured!.dropped_bytes as number).toBeGreaterThan(100_000);
  expect(r.text).toContain("dropped unread");
});

test("the budget of background commands is enforced with a clear error naming the limit and the running ones", async () => {
  const s = makeShell({ max: 2 });
  await s.call({ command: "sleep 30", background: true }, live());
  await s.call({ command: "sleep 31", background: true }, live());
  const third = await s.call({ command: "sleep 32", background: true }, live());
  expect(third.isError).toBe(true);
  expect(third.text).toContain("MAX_BACKGROUND_COMMANDS = 2");
  expect(third.text).toContain("bg1 (sleep 30)");
  expect(third.text).toContain("shell_kill");
  // one ended frees a place
  await s.kill({ id: "bg1" });
  expect((await s.call({ command: "sleep 33", background: true }, live())).isError).toBeUndefined();
});

test("the session ending (stopAll) ends every background command and its children: no process left", async () => {
  const s = makeShell();
  const r = await s.call({ command: "sleep 300 & echo $!; wait", background: true }, live());
  const id = idOf(r);
  const pid = Number((await readUntil(s, id, (all) => /\d+\n/.test(all), "the child's pid", r.structured!.output as string)).trim());
  expect(alive(pid)).toBe(true);
  await s.stopAll();
  expect(alive(pid)).toBe(false);
  expect(s.background.running).toBe(0);
});

test("OutputRing: keeps the newest bytes, never half a character, counts what it dropped", () => {
  const ring = new OutputRing(10);
  ring.push(Buffer.from("abcdef"));
  ring.push(Buffer.from("ghéjkl")); // é is two bytes: 13 in all, 3 dropped
  const { text, dropped } = ring.take();
  expect(dropped).toBe(3);
  expect(text).toBe("defghéjkl");
  ring.push(Buffer.from("ééééééx")); // 13 bytes: 3 dropped, the first kept byte is half an é
  const second = ring.take();
  expect(second.dropped).toBe(3);
  expect(second.text).toBe("ééééx");
  expect(ring.take()).toEqual({ text: "", dropped: 0 });
});
