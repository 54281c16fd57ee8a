// One way to build a ShellTool for the shell's unit tests (tools/dev/shell.test.ts, background.test.ts):
// the workspace, a HOME and an artifact folder of the test's own, and the limits a test changes over
// generous defaults.
import { join } from "node:path";
import { ShellTool, type ShellOptions } from "../tools/dev/shell.ts";

export type ShellLimits = ShellOptions["limits"];

/** A shell over `root`, with HOME `home` and artifacts under `artifactDir` (default: `home`/artifacts). */
export function testShell(root: string, home: string, over: Partial<ShellLimits> = {}, artifactDir = join(home, "artifacts")): ShellTool {
  return new ShellTool({
    root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
    artifactDir,
    limits: {
      inlineBytes: 50 * 1024,
      inlineLines: 2000,
      tailBytes: 8 * 1024,
      captureBytes: 10 * 1024 * 1024,
      defaultTimeoutS: 30,
      maxTimeoutS: 60,
      artifacts: 8,
      maxRunning: 8,
      ...over,
    },
  });
}
