// Regression tests: when the process running shell commands is SIGKILLed (a `tendril dev-mcp`, unconfined
// and confined; an owner process on the `ps` fallback macOS uses), every process its commands started
// dies too, those that left their group (setsid, a double fork, a daemon that closed its fds) included.
// 50 owners each, 5 at once; half are killed once all four escapees run, half at a random early moment.
import { afterAll, afterEach, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callTool, startDevMcp, stopDevMcps } from "./dev-mcp-harness.ts";
import { waitFor } from "./fake-mcp-helpers.ts";
import { KINDS, killRun, markers, sleeping, survivors } from "./orphan-kinds.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-orphans-kill-")));
const { run, next: marker } = markers();
const OWNERS = 50;
const AT_ONCE = 5;

afterEach(stopDevMcps);
afterAll(() => {
  killRun(run);
  rmSync(base, { recursive: true, force: true });
});

/** Runs `owners` owners AT_ONCE at a time: `start(i)` starts one and its commands, resolving to its pid and
 *  markers; each is SIGKILLed (once its escapees run, for even i) and what survives it 5 s later is listed. */
async function killOwners(start: (i: number, ms: string[]) => Promise<number>): Promise<string[]> {
  const left: string[] = [];
  for (let at = 0; at < OWNERS; at += AT_ONCE) {
    await Promise.all(
      Array.from({ length: Math.min(AT_ONCE, OWNERS - at) }, async (_, j) => {
        const i = at + j;
        const ms = Object.keys(KINDS).map(() => marker());
        const pid = await start(i, ms);
        if (i % 2 === 0) expect(await waitFor(() => ms.every((m) => sleeping(m).length > 0), 10_000)).toBe(true);
        else await Bun.sleep(Math.random() * 60);
        process.kill(pid, "SIGKILL");
        for (const [k, m] of ms.entries()) {
          const pids = await survivors(m, 5000);
          if (pids.length > 0) left.push(`${Object.keys(KINDS)[k]} after owner #${i} was SIGKILLed: ${pids.join(",")}`);
        }
      }),
    );
  }
  return left;
}

/** A dev-mcp under `sandbox`, running the four escapes as one call each (then `sleep 30`); its pid. */
async function devMcpWithEscapes(sandbox: string, i: number, ms: string[]): Promise<number> {
  const dir = join(base, `mcp-${sandbox}-${i}`);
  // The workspace is not HOME (which a confined setting refuses to make writable).
  mkdirSync(join(dir, "ws"), { recursive: true });
  const { client, pid } = await startDevMcp(join(dir, "ws"), dir, { TENDRIL_SANDBOX: sandbox });
  Object.values(KINDS).forEach((escape, k) => void callTool(client, "shell", { command: `${escape(ms[k]!)}\nsleep 30`, timeout_s: 60 }).catch(() => {}));
  return pid;
}

test("regression: escapees of a dev-mcp's shell commands (setsid, double fork, nohup, fd-closing daemon) outlived its SIGKILL", async () => {
  expect(await killOwners((i, ms) => devMcpWithEscapes("off", i, ms))).toEqual([]);
}, 180_000);

const bwrap = spawnSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).stdout.trim();
const confinedWorks = bwrap !== "" && spawnSync(bwrap, ["--ro-bind", "/", "/", "--unshare-all", "true"]).status === 0;

test.if(confinedWorks)("the same confined (sandbox = workspace-write)", async () => {
  expect(await killOwners((i, ms) => devMcpWithEscapes("workspace-write", i, ms))).toEqual([]);
}, 180_000);

test("the same for an owner that finds its commands' processes with `ps` (the macOS fallback), its watchdog included", async () => {
  const exec = JSON.stringify(new URL("../tools/dev/exec.ts", import.meta.url).pathname);
  const marks = JSON.stringify(new URL("../core/process-marks.ts", import.meta.url).pathname);
  const left = await killOwners(async (i, ms) => {
    const dir = join(base, `owner-${i}`);
    mkdirSync(dir);
    const owner = join(dir, "owner.ts");
    const cmds = JSON.stringify(Object.values(KINDS).map((escape, k) => `${escape(ms[k]!)}\nsleep 30`));
    writeFileSync(
      owner,
      `import { GroupExecutor } from ${exec};\nimport { setMarkSource } from ${marks};\nsetMarkSource("ps");\nconst ex = new GroupExecutor();\n` +
        `for (const command of ${cmds}) void ex.run({ command, cwd: ${JSON.stringify(dir)}, env: { PATH: ${JSON.stringify(process.env.PATH ?? "/usr/bin:/bin")} }, timeoutMs: 60_000, onOutput: () => {} });\n` +
        "setInterval(() => {}, 1000);\n",
    );
    const child = spawn(process.execPath, [owner], { stdio: "ignore" });
    return child.pid!;
  });
  expect(left).toEqual([]);
}, 180_000);
