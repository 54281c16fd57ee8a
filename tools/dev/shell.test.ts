// Unit tests of the shell tool: results, stdin, time bounds, process-group kills, output caps, workdir rule.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ShellTool } from "./shell.ts";
import { type ShellLimits, testShell } from "../../tests/test-shell.ts";
import { pruneStaleSessions } from "./shell-capture.ts";
import { killAllGroups } from "../../core/process-group.ts";
import { pidAlive as alive, waitFor } from "../../tests/fake-mcp-helpers.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-shell-test-")));
const root = join(base, "root");
mkdirSync(join(root, "sub"), { recursive: true });
mkdirSync(join(base, "outside"));
symlinkSync(join(base, "outside"), join(root, "escape"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function makeShell(over: Partial<ShellLimits> = {}, artifactDir = join(base, "artifacts")): ShellTool {
  return testShell(root, base, over, artifactDir);
}

/** Starts a grandchild that ignores SIGTERM and records its pid in `file`. */
const stubborn = (file: string) => `bash -c 'trap "" TERM; sleep 60' & echo $! > ${file}; wait`;

test("reports exit code, stdout and stderr separately, as text and structured", async () => {
  const r = await makeShell().call({ command: "echo out; echo err >&2; exit 7" }, new AbortController().signal);
  expect(r.isError).toBeUndefined();
  expect(r.structured).toEqual({ exit_code: 7, stdout: "out\n", stderr: "err\n", timed_out: false });
  expect(r.text).toContain("exit_code: 7");
  expect(r.text).toContain("stdout:\nout\n");
  expect(r.text).toContain("stderr:\nerr\n");
});

test("a command a signal ended reports 128 + the signal's number (node:os loaded only then) and the signal's name, which the terminal's exit carries", async () => {
  const r = await makeShell().call({ command: "kill -TERM $$" }, new AbortController().signal);
  expect(r.structured).toMatchObject({ exit_code: 143, signal: "SIGTERM", timed_out: false });
  expect(r.text).toContain("exit_code: 143 (ended by SIGTERM)");
  // an exit code of its own is no signal
  const plain = await makeShell().call({ command: "exit 143" }, new AbortController().signal);
  expect((plain.structured as Record<string, unknown>).signal).toBeUndefined();
});

test("stdin is closed: cat returns at once", async () => {
  const t0 = Date.now();
  const r = await makeShell().call({ command: "cat; echo done", timeout_s: 10 }, new AbortController().signal);
  expect(r.structured?.stdout).toBe("done\n");
  expect(Date.now() - t0).toBeLessThan(2000);
});

test("timeout kills the whole group, a SIGTERM-ignoring grandchild included, with exit code 124", async () => {
  const pidFile = join(base, "timeout.pid");
  const t0 = Date.now();
  const r = await makeShell().call({ command: stubborn(pidFile), timeout_s: 0.5 }, new AbortController().signal);
  const after = Date.now() - t0;
  expect(r.structured?.exit_code).toBe(124);
  expect(r.structured?.timed_out).toBe(true);
  const pid = Number(readFileSync(pidFile, "utf8"));
  expect(await waitFor(() => !alive(pid), 1000)).toBe(true);
  expect(after).toBeLessThan(1500);
});

test("timeout_s above the maximum is clamped to it", async () => {
  const r = await makeShell({ maxTimeoutS: 0.3 }).call({ command: "sleep 5", timeout_s: 100 }, new AbortController().signal);
  expect(r.structured?.timed_out).toBe(true);
  expect(r.text).toContain("the largest timeout allowed");
});

test("aborting the call kills the whole group", async () => {
  const pidFile = join(base, "abort.pid");
  const ac = new AbortController();
  const pending = makeShell().call({ command: stubborn(pidFile), timeout_s: 30 }, ac.signal);
  expect(await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", 5000)).toBe(true);
  const pid = Number(readFileSync(pidFile, "utf8"));
  ac.abort();
  const r = await pending;
  expect(r.structured?.cancelled).toBe(true);
  expect(await waitFor(() => !alive(pid), 1000)).toBe(true);
});

test("killAllGroups (server exit) kills running shell groups", async () => {
  const pidFile = join(base, "exit.pid");
  const shell = makeShell();
  const pending = shell.call({ command: stubborn(pidFile), timeout_s: 30 }, new AbortController().signal);
  expect(await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", 5000)).toBe(true);
  const pid = Number(readFileSync(pidFile, "utf8"));
  await killAllGroups();
  expect(await waitFor(() => !alive(pid), 1000)).toBe(true);
  await pending;
});

test("background jobs do not outlive the command nor hold the call open", async () => {
  const pidFile = join(base, "bg.pid");
  const t0 = Date.now();
  const r = await makeShell().call({ command: `sleep 30 & echo $! > ${pidFile}; echo started` }, new AbortController().signal);
  expect(r.structured?.stdout).toBe("started\n");
  expect(Date.now() - t0).toBeLessThan(2000);
  expect(await waitFor(() => !alive(Number(readFileSync(pidFile, "utf8"))), 1000)).toBe(true);
});

test("output over the line cap keeps the tail and saves the full capture", async () => {
  const dir = join(base, "artifacts-lines");
  const r = await makeShell({ inlineLines: 100, tailBytes: 64 }, dir).call({ command: "seq 1 5000" }, new AbortController().signal);
  const s = r.structured!;
  expect(s.truncated).toBe(true);
  expect(String(s.stdout).endsWith("4999\n5000\n")).toBe(true);
  expect(String(s.stdout).length).toBeLessThanOrEqual(64);
  expect(String(s.stdout).startsWith("\n")).toBe(false);
  const artifact = String(s.artifact);
  expect(artifact.startsWith(dir)).toBe(true);
  expect(r.text).toContain(artifact);
  const full = Array.from({ length: 5000 }, (_, i) => `${i + 1}\n`).join("");
  expect(readFileSync(artifact, "utf8")).toBe(full);
});

test("output over the byte cap is cut at the capture cap, and only the newest artifacts stay", async () => {
  const dir = join(base, "artifacts-bytes");
  const shell = makeShell({ inlineBytes: 1000, tailBytes: 100, captureBytes: 5000, artifacts: 2 }, dir);
  let last = "";
  for (let i = 0; i < 4; i++) {
    const r = await shell.call({ command: "head -c 20000 /dev/zero | tr '\\0' x; echo; echo tail-marker >&2" }, new AbortController().signal);
    last = String(r.structured?.artifact);
    expect(r.structured?.stderr).toBe("tail-marker\n");
    expect(r.text).toContain("cut at");
  }
  expect(readdirSync(dir).sort()).toEqual(["shell-3.log", "shell-4.log"]);
  expect(readFileSync(last).length).toBe(5000);
});

test("workdir outside the root is refused: '..', absolute elsewhere, through a symlink", async () => {
  const shell = makeShell();
  for (const workdir of ["..", join(base, "outside"), "escape", "sub/../../outside", "missing-dir"]) {
    const r = await shell.call({ command: "pwd", workdir }, new AbortController().signal);
    expect(r.isError).toBe(true);
  }
  const ok = await shell.call({ command: "pwd", workdir: "sub" }, new AbortController().signal);
  expect(ok.structured?.stdout).toBe(join(root, "sub") + "\n");
});

test("stale artifact directories of other sessions are pruned, recent ones kept", async () => {
  const parent = join(base, "sessions");
  mkdirSync(join(parent, "old"), { recursive: true });
  mkdirSync(join(parent, "new"));
  const past = new Date(Date.now() - 3 * 86_400_000);
  utimesSync(join(parent, "old"), past, past);
  expect(await pruneStaleSessions(parent, 86_400_000)).toBe(1);
  expect(readdirSync(parent)).toEqual(["new"]);
});

test("a long build or test output reaches the model digested; the whole output as printed is in the artifact it names; a file read and `raw` reach it as printed", async () => {
  const { cargoLog, vitestLog } = await import("../../tests/log-samples.ts");
  const { writeFileSync } = await import("node:fs");
  const cargo = cargoLog();
  writeFileSync(join(root, "cargo.txt"), cargo.text);
  writeFileSync(join(root, "vitest.txt"), vitestLog(400).text);
  const digesting = makeShell({ digestAboveBytes: 8 * 1024 });
  // a test run (not a file read): digested, every failure in view, the raw output saved whole
  const run = await digesting.call({ command: "cat cargo.txt; exit 101" }, new AbortController().signal);
  expect(run.text).toContain("[output digested:");
  for (const m of cargo.mustSee) expect(run.text).toContain(m);
  expect(run.text).not.toContain("test tests::case_77 ... ok");
  expect(run.text.length).toBeLessThan(cargo.text.length / 2);
  const artifact = (run.structured as Record<string, unknown>).artifact as string;
  expect(readFileSync(artifact, "utf8")).toBe(cargo.text);
  expect(run.text).toContain(artifact);
  // colours and redraws never reach the model
  const colours = await digesting.call({ command: "cat vitest.txt | cat" }, new AbortController().signal);
  expect(colours.text).toContain("expected 100 to be 250");
  expect(colours.text).not.toContain("\x1b[");
  // a file the model reads: as printed
  const read = await digesting.call({ command: "cat cargo.txt" }, new AbortController().signal);
  expect((read.structured as Record<string, unknown>).stdout).toBe(cargo.text);
  expect(read.text).not.toContain("[output digested:");
  // shell_output = "raw": as printed
  const raw = await makeShell().call({ command: "cat cargo.txt; exit 101" }, new AbortController().signal);
  expect(raw.text).not.toContain("[output digested:");
  expect(raw.text).toContain("test tests::case_77 ... ok");
});

test("regression: a cancelled command whose kill outlasted its timeout was reported timed out too; it is cancelled alone", async () => {
  const abort = new AbortController();
  // SIGTERM is ignored (once the trap is set: the cancel waits for the command's word): the ladder waits
  // its grace (200 ms), past the command's 0.1 s timeout, before SIGKILL
  const r = await makeShell().call({ command: "trap '' TERM; echo set; sleep 5", timeout_s: 0.1 }, abort.signal, false, () => abort.abort());
  // whichever came first ended it (the cancel, unless the machine is slow to start the command); never both
  const s = r.structured as { timed_out: boolean; cancelled?: boolean };
  expect([s.timed_out, s.cancelled === true].filter(Boolean)).toEqual([true]);
});
