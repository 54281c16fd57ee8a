// Benchmark: one `shell` call of `true` (the dev tool in process, through the execution seam) unconfined
// and under sandbox = "workspace-write", beside the floor: `bwrap` with the same arguments running `true`
// alone (no process-group gate, no watchdog, no TMPDIR). Goal: the sandbox adds ≤ 1.25× the floor's cost.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GroupExecutor } from "../../tools/dev/exec.ts";
import { bwrapArgs, findBwrap, hiddenPaths, sandboxLauncher, type SandboxSettings } from "../../tools/dev/sandbox.ts";
import { ShellTool } from "../../tools/dev/shell.ts";
import { compareFns, report } from "./harness.ts";

const LIMITS = {
  inlineBytes: 50 * 1024,
  inlineLines: 2000,
  tailBytes: 8192,
  captureBytes: 10 * 1024 * 1024,
  defaultTimeoutS: 60,
  maxTimeoutS: 600,
  artifacts: 8,
  maxRunning: 16,
};

function spawnTrue(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} exited ${code}`))));
  });
}

export async function run(): Promise<void> {
  let bwrap: string;
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), "tendril-bench-sandbox-")));
  const root = join(scratch, "ws");
  const tmp = join(scratch, "tmp");
  mkdirSync(root);
  mkdirSync(tmp);
  const settings: SandboxSettings = { mode: "workspace-write", network: false, hide: [], allowDomains: [] };
  try {
    bwrap = findBwrap(process.env.PATH, root, settings.mode);
  } catch (err) {
    console.log(`\n## sandbox: skipped (${(err as Error).message.split(".")[0]})`);
    return;
  }
  const ctx = { settings, root, pathVar: process.env.PATH, home: process.env.HOME, configDir: join(process.env.HOME ?? "/", ".config", "tendril") };
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/" };
  const plain = new ShellTool({ root, env, artifactDir: join(scratch, "a1"), limits: LIMITS });
  const boxed = new ShellTool({ root, env, artifactDir: join(scratch, "a2"), limits: LIMITS, executor: new GroupExecutor(sandboxLauncher(ctx)) });
  const floorArgs = [...bwrapArgs(settings, { root, cwd: root, tmp, hidden: hiddenPaths(settings, ctx.home, ctx.configDir) }), "--", "true"];
  const signal = new AbortController().signal;
  const call = async (tool: ShellTool) => {
    const r = await tool.call({ command: "true" }, signal);
    if (r.isError || (r.structured?.exit_code as number) !== 0) throw new Error(`shell call failed: ${r.text}`);
  };
  try {
    const rows = await compareFns(
      "sandbox: one `shell` call of `true` (in process)",
      [
        { name: "shell, sandbox = off", fn: () => call(plain) },
        { name: "shell, sandbox = workspace-write", fn: () => call(boxed) },
        { name: "floor: bwrap (same mounts) true", fn: () => spawnTrue(bwrap, floorArgs) },
        { name: "bash -c true (spawn alone)", fn: () => spawnTrue("bash", ["-c", "true"]) },
      ],
      30,
    );
    const [off, on, floor] = rows;
    const added = on!.medianMs - off!.medianMs;
    report("sandbox: cost the sandbox adds to a call, against the floor (goal ≤ ×1.25)", [
      { name: "floor: bwrap … true", medianMs: floor!.medianMs, minMs: floor!.minMs },
      { name: "added by the sandbox (workspace-write − off)", medianMs: added, minMs: on!.minMs - off!.minMs },
    ]);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (import.meta.main) await run();
