// Owns the release's smoke test of a built binary: `--version` prints the release's version, the
// built-in `rg` finds a line, and `tendril prompt` replays the demo cassette through `tendril agent`
// (real tools on a copy of the demo workspace). Runs natively, or under qemu-user-static for another
// Linux CPU when it and that CPU's C library (Debian's libc6-ARCH-cross) are installed.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { hostPlatform, type Platform } from "./platforms.ts";
import { runCommand, tail } from "./run-command.ts";

const STEP_TIMEOUT_MS = 120_000;
/** Per CPU: qemu's user-mode emulator and where Debian's cross C library puts that CPU's loader. */
const QEMU: Record<Platform["cpu"], { emulator: string; sysroot: string; loader: string }> = {
  arm64: { emulator: "qemu-aarch64-static", sysroot: "/usr/aarch64-linux-gnu", loader: "lib/ld-linux-aarch64.so.1" },
  x64: { emulator: "qemu-x86_64-static", sysroot: "/usr/x86_64-linux-gnu", loader: "lib64/ld-linux-x86-64.so.2" },
};

/** How to run a platform's binary here: a command prefix ([] natively), or why it cannot run. */
export type Runner = { prefix: string[]; how: string } | { skip: string };

export function runnerFor(p: Platform): Runner {
  const host = hostPlatform();
  if (host?.id === p.id) return { prefix: [], how: "natively" };
  if (p.os !== "linux" || host?.os !== "linux") return { skip: `cannot run ${p.os} binaries on ${process.platform}` };
  const q = QEMU[p.cpu];
  const emulator = onPath(q.emulator);
  if (emulator === undefined) return { skip: `${q.emulator} is not installed (Debian package qemu-user-static)` };
  if (!existsSync(join(q.sysroot, q.loader))) return { skip: `no ${p.cpu} C library in ${q.sysroot} (Debian package libc6-${p.cpu}-cross)` };
  return { prefix: [emulator, "-L", q.sysroot], how: `under ${q.emulator}` };
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const file = join(dir, name);
    if (dir.startsWith("/") && existsSync(file)) return file;
  }
  return undefined;
}

function shQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Runs the three checks; resolves to undefined when all pass, else to what failed. */
export async function smokeTest(bin: string, prefix: readonly string[], version: string, root: string): Promise<string | undefined> {
  const work = mkdtempSync(join(tmpdir(), "tendril-release-smoke-"));
  const env = { ...process.env, HOME: work, XDG_CONFIG_HOME: join(work, "config"), XDG_STATE_HOME: join(work, "state"), XDG_CACHE_HOME: join(work, "cache") };
  const run = (args: string[], cwd: string, extra: Record<string, string> = {}) =>
    runCommand(prefix[0] ?? bin, [...prefix.slice(1), ...(prefix.length > 0 ? [bin] : []), ...args], { cwd, env: { ...env, ...extra }, timeoutMs: STEP_TIMEOUT_MS });
  try {
    const v = await run(["--version"], work);
    if (v.code !== 0 || v.stdout.trim() !== version) return `--version printed ${JSON.stringify(v.stdout.trim())} (exit ${v.code}), not ${version}: ${tail(v, 3)}`;

    writeFileSync(join(work, "f.txt"), "alpha\nneedle\n");
    const rg = await run(["rg", "-n", "needle", "f.txt"], work, { TENDRIL_RG_BUILTIN: "1" });
    if (rg.code !== 0 || rg.stdout !== "2:needle\n") return `the built-in rg printed ${JSON.stringify(rg.stdout)} (exit ${rg.code}): ${tail(rg, 3)}`;

    const ws = join(work, "workspace");
    cpSync(join(root, "scripts", "demo", "workspace"), ws, { recursive: true });
    const agent = [...prefix, bin, "agent"].map(shQuote).join(" ");
    const prompt = "greet.sh prints a misspelled greeting. Fix it and make sure check.sh passes.";
    const p = await run(["prompt", "--cwd", ws, "--approve", "all", "--agent", agent, prompt], work, {
      TENDRIL_PROVIDER: "replay",
      TENDRIL_REPLAY: join(root, "scripts", "demo", "fix-greeting.jsonl"),
    });
    const fixed = readFileSync(join(ws, "greet.sh"), "utf8").includes('echo "Hello, ');
    if (p.code !== 0 || !fixed) return `tendril prompt replaying the demo cassette exited ${p.code}${fixed ? "" : " without fixing greet.sh"}: ${tail(p, 4)}`;
    return undefined;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
