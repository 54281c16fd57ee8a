// Stress test of killing confined commands (SPEC §3.8: process groups and time limits work as without
// the sandbox): a command killed at any moment of bwrap's set-up leaves no process behind (B4). Drives
// the shell's execution seam in process with the real bubblewrap; bounded in count and time.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BWRAP, requireBwrapUnderCi } from "./bwrap.ts";
import { GroupExecutor } from "../tools/dev/exec.ts";
import { sandboxLauncher } from "../tools/dev/sandbox.ts";

requireBwrapUnderCi("tests/sandbox-kill.test.ts");

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-sandbox-kill-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Pids of processes whose command line holds `marker` (unique to this run). */
function survivors(marker: string): number[] {
  return readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(marker);
    } catch {
      return false;
    }
  }).map(Number);
}

describe.skipIf(!BWRAP)("B4: killing a confined command while bwrap sets up", () => {
  test("B4: 50 commands killed at once or within 20 ms of their start (cancel and stopAll) leave no process behind", async () => {
    const ws = join(base, "ws");
    mkdirSync(ws, { recursive: true });
    const ctx = { settings: { mode: "workspace-write" as const, network: false, hide: [], allowDomains: [] }, root: ws, pathVar: process.env.PATH, home: base, configDir: join(base, "config") };
    const executor = new GroupExecutor(sandboxLauncher(ctx));
    const tag = `${process.pid}${Date.now() % 100000}`;
    const t0 = Date.now();
    let found: number[] = [];
    try {
      for (let i = 0; i < 50 && Date.now() - t0 < 60_000; i++) {
        const ac = new AbortController();
        const run = executor.run({ command: `sleep 4${tag}.${i}`, cwd: ws, env: { PATH: "/usr/bin:/bin" }, timeoutMs: 60_000, signal: ac.signal, onOutput: () => {} });
        const delay = i % 5 === 0 ? 0 : (i * 7) % 20; // at once, and spread over bwrap's set-up
        // stopAll kills what is running: repeated until this command is (it may not have started yet)
        let stopper: ReturnType<typeof setInterval> | undefined;
        let settled = false;
        if (i % 2 === 0) setTimeout(() => ac.abort(), delay);
        else setTimeout(() => settled || (stopper = setInterval(() => void executor.stopAll(), 5)), delay);
        const outcome = await run.finally(() => ((settled = true), clearInterval(stopper)));
        expect(outcome.exitCode).not.toBe(0);
      }
      // a survivor is reparented and lingers; give the kernel a moment to finish the kills
      for (let n = 0; n < 50 && survivors(`4${tag}.`).length > 0; n++) await Bun.sleep(20);
      found = survivors(`4${tag}.`);
      expect(found).toEqual([]);
    } finally {
      for (const pid of found) process.kill(pid, "SIGKILL"); // ours: the marker is this run's
    }
  }, 120_000);
});
