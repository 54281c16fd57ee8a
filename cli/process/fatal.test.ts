import { expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");

/** Runs `body` in a fresh process with the exit policy installed; its stdout, stderr and exit code. */
function withPolicy(body: string): { code: number | null; stdout: string; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), "tendril-fatal-"));
  try {
    const script = join(dir, "run.ts");
    writeFileSync(script, `import { installExitPolicy } from ${JSON.stringify(join(ROOT, "cli", "process", "fatal.ts"))};\ninstallExitPolicy();\n${body}\n`);
    const r = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 20_000, env: { ...process.env, TENDRIL_LOG: "error" } });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("B1: under the one exit policy a stray rejection is logged and the mode goes on; an uncaught exception exits 1", () => {
  const stray = withPolicy(`Promise.reject(new Error("stray one"));\nsetTimeout(() => { process.stdout.write("went on\\n"); process.exit(0); }, 50);`);
  expect(stray.code).toBe(0);
  expect(stray.stdout).toBe("went on\n");
  expect(stray.stderr).toContain("unhandled rejection (continuing)");
  expect(stray.stderr).toContain("stray one");
  const thrown = withPolicy(`setTimeout(() => { throw new Error("nobody catches this"); }, 10);\nsetTimeout(() => process.stdout.write("still here\\n"), 2000);`);
  expect(thrown.code).toBe(1);
  expect(thrown.stdout).toBe("");
  expect(thrown.stderr).toContain("uncaught exception; stopping");
  expect(thrown.stderr).toContain("nobody catches this");
});

test("one exit hook: under the exit policy every live process group is killed at exit, whichever path exits", () => {
  const kill = `installExitPolicy({ killAllGroups: () => require("node:fs").writeSync(1, "every group killed\\n") });`;
  const exited = withPolicy(`${kill}\nprocess.exit(3);`);
  expect(exited.code).toBe(3);
  expect(exited.stdout).toBe("every group killed\n");
  const ended = withPolicy(`${kill}\nprocess.stdout.write("done\\n");`);
  expect(ended.code).toBe(0);
  expect(ended.stdout).toBe("done\nevery group killed\n");
});

test("B1: every protocol mode installs the one exit policy (prompt and conductor included), and no code has its own", () => {
  const modes = ["agent-run.ts", "prompt-run.ts", "conductor-run.ts", "dev-mcp-run.ts", "crate-fetch-mcp.ts", "crate-fetch-proxy.ts"];
  for (const m of modes) expect([m, readFileSync(join(ROOT, "cli", "modes", m), "utf8").includes("installExitPolicy(")]).toEqual([m, true]);
  const own: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const rel = join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") && rel !== join("cli", "process", "fatal.ts")) {
        const text = readFileSync(join(ROOT, rel), "utf8");
        if (/process\.on\(\s*["'](?:unhandledRejection|uncaughtException)["']/.test(text)) own.push(rel);
        // Exit hooks: the policy's (every group killed) and the stop releases' (stop-signals.ts) only.
        if (/process\.(?:on|once)\(\s*["']exit["']/.test(text) && rel !== join("cli", "process", "stop-signals.ts")) own.push(rel);
      }
    }
  };
  for (const d of ["cli", "core", "tools"]) walk(d);
  expect(own).toEqual([]);
});
