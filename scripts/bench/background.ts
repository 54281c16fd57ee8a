// Benchmark: background commands (SPEC §3.3). What a background start costs (`shell` with
// `background: true` of `sleep`, answered with its id) and what one read of its output costs
// (`shell_read`), side by side with a plain call of `true` (the same process-group start, waited to
// its end) and the floor of spawning `true` at all. `npm run bench -- background`.
import { spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ShellTool } from "../../tools/dev/shell.ts";
import { compareFns, note } from "./harness.ts";

export async function run(): Promise<void> {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-bench-bg-")));
  const shell = new ShellTool({
    root: base,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base },
    artifactDir: join(base, "artifacts"),
    limits: { inlineBytes: 50 * 1024, inlineLines: 2000, tailBytes: 8 * 1024, captureBytes: 1024 * 1024, defaultTimeoutS: 30, maxTimeoutS: 60, artifacts: 8, maxRunning: 64, background: { max: 64, outputBytes: 256 * 1024, readWaitMaxMs: 1000 } },
  });
  const live = new AbortController().signal;
  try {
    // One long-lived command that prints a line every 10 ms: each read finds a little new output.
    const ticker = await shell.call({ command: "while :; do echo tick; sleep 0.01; done", background: true }, live);
    const tickerId = ticker.structured!.background_id as string;
    const rows = await compareFns("background commands: a start, a read, against a plain call and a bare spawn", [
      { name: "spawn `true` (node, the floor)", fn: async () => void spawnSync("true") },
      { name: "shell `true` (a plain call)", fn: async () => void (await shell.call({ command: "true" }, live)) },
      {
        name: "shell `sleep 30` background + shell_kill",
        fn: async () => {
          const r = await shell.call({ command: "sleep 30", background: true }, live);
          await shell.kill({ id: r.structured!.background_id as string });
        },
      },
      { name: "shell_read of a running command", fn: async () => void (await shell.read({ id: tickerId })) },
    ], 20);
    const [floor, plain, start, read] = rows.map((r) => r.medianMs);
    await shell.kill({ id: tickerId });
    note(`  a background start and its kill ×${(start! / plain!).toFixed(2)} of a plain call (×${(start! / floor!).toFixed(2)} of the spawn floor); a read ${read!.toFixed(3)} ms (×${(read! / plain!).toFixed(3)} of a plain call)`);
  } finally {
    await shell.stopAll();
    rmSync(base, { recursive: true, force: true });
  }
}
