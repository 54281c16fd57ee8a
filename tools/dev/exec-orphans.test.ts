// Regression tests: a shell command's processes that left its group (setsid, a double fork, nohup and
// disown, a daemon that closes its fds) end when the call ends, whether it returned, timed out or was
// cancelled; unconfined, confined, and with the `ps` fallback that macOS uses; and, on Linux, one that
// also emptied or blanked its environment (its mark gone). Each case runs 50 times, 16 at once, so a
// race shows. Markers are `sleep 1000.<run><n>` durations, unique to this run.
import { afterAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { markSource, setMarkSource, setSubreaper, subreaperOn } from "../../core/process-group.ts";
import { adoptedZombies, blanked, hasPerl, KINDS, killRun, markers, sleeping, survivors } from "../../tests/orphan-kinds.ts";
import { type Executor, GroupExecutor } from "./exec.ts";
import { sandboxLauncher } from "./sandbox.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-orphans-test-")));
const root = join(base, "root");
mkdirSync(root);
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
const { run, next: marker } = markers();
const ROUNDS = 50;
/** Calls at once: two sessions' worth of parallel tool calls (MAX_PARALLEL_TOOLS each). */
const AT_ONCE = 16;

afterAll(() => {
  killRun(run);
  rmSync(base, { recursive: true, force: true });
});

const ENDINGS = ["return", "timeout", "cancel"] as const;
type Ending = (typeof ENDINGS)[number];

/** One call of `kind` ending by `ending`; resolves to the survivors of its escapee 1 s after the call. */
async function oneCall(ex: Executor, kind: string, ending: Ending, i: number): Promise<number[]> {
  const m = marker();
  const escape = KINDS[kind]!(m);
  // Half the returns leave no time for the escape: the group kill races it. A tenth of the timeouts come
  // after a second, when every process is read (younger commands have only the pids after theirs read).
  const command = `${escape}\n${ending !== "return" ? "sleep 30" : i % 2 === 0 ? "sleep 0.05" : "true"}`;
  const abort = new AbortController();
  if (ending === "cancel") setTimeout(() => abort.abort(), 20 + (i % 5) * 30);
  let output = "";
  const outcome = await ex.run({ command, cwd: root, env, timeoutMs: ending !== "timeout" ? 20_000 : i % 10 === 0 ? 1200 : 300, signal: abort.signal, onOutput: (_stream, chunk) => void (output += chunk.toString()) });
  // How it ended, with what it printed and what the launcher said when it is not what was meant (a
  // sandbox that could not start says so here).
  const ended = { timedOut: outcome.timedOut, cancelled: outcome.cancelled };
  const meant = { timedOut: ending === "timeout", cancelled: ending === "cancel" };
  if (ended.timedOut !== meant.timedOut || ended.cancelled !== meant.cancelled) {
    expect({ kind, ending, ...ended, exitCode: outcome.exitCode, signal: outcome.signal, stopped: outcome.stopped, output: output.slice(-600) }).toEqual({ kind, ending, ...meant } as never);
  }
  return survivors(m, 1000);
}

/** `rounds` calls of each ending, for every kind (`perKind`) or the kinds in turn, AT_ONCE at a time; what survived. */
async function loop(ex: Executor, perKind: boolean, rounds = ROUNDS): Promise<string[]> {
  const kinds = Object.keys(KINDS);
  const chosen: [string, Ending, number][] = [];
  for (const ending of ENDINGS) {
    for (let i = 0; i < rounds; i++) {
      if (perKind) for (const kind of kinds) chosen.push([kind, ending, i]);
      else chosen.push([kinds[i % kinds.length]!, ending, i]);
    }
  }
  const left: string[] = [];
  for (let at = 0; at < chosen.length; at += AT_ONCE) {
    await Promise.all(
      chosen.slice(at, at + AT_ONCE).map(async ([kind, ending, i]) => {
        const pids = await oneCall(ex, kind, ending, i);
        if (pids.length > 0) left.push(`${kind} after ${ending} #${i}: ${pids.join(",")}`);
      }),
    );
  }
  return left;
}

test("regression: a setsid, double-forked, nohup'd or fd-closing daemon outlived its call (unconfined): none survives return, timeout or cancel", async () => {
  expect(await loop(new GroupExecutor(), true)).toEqual([]);
}, 240_000);

test("the same with the `ps` fallback macOS uses to find a command's processes (no subreaper there)", async () => {
  const was = markSource();
  const reaping = subreaperOn();
  setMarkSource("ps");
  setSubreaper(false);
  try {
    // Fewer rounds: each look runs `ps` over every process, which a busy machine makes slow.
    expect(await loop(new GroupExecutor(), false, 10)).toEqual([]);
  } finally {
    setMarkSource(was);
    setSubreaper(reaping);
  }
}, 240_000);

test.if(process.platform === "linux")("regression: a process that left the group and emptied its environment (its mark gone) survived its call; the subreaper ends it, and waits for it", async () => {
  // The call returns only once the process has left the group (a busy machine could otherwise kill it
  // with the group before its setsid, and nothing would be left to find either way).
  const emptied = (m: string) => {
    const ready = join(base, `left-${m}`);
    return `setsid sh -c 'touch ${ready}; exec env -i sleep ${m}' >/dev/null 2>&1 </dev/null &\nwhile [ ! -e ${ready} ]; do sleep 0.01; done`;
  };
  expect(setSubreaper(true)).toBe(true);
  const ex = new GroupExecutor();
  for (let i = 0; i < 10; i++) {
    const m = marker();
    await ex.run({ command: `${emptied(m)}\nsleep 0.05`, cwd: root, env, timeoutMs: 20_000, onOutput: () => {} });
    expect(await survivors(m, 1000)).toEqual([]);
  }
  expect(adoptedZombies()).toEqual([]);
  // the marks alone do not find it: with no subreaper it survives
  setSubreaper(false);
  try {
    const m = marker();
    await ex.run({ command: `${emptied(m)}\nsleep 0.05`, cwd: root, env, timeoutMs: 20_000, onOutput: () => {} });
    // it is running (its `exec sleep` may take a moment on a busy machine), and stays
    for (const end = Date.now() + 5000; sleeping(m).length === 0 && Date.now() < end; ) await Bun.sleep(20);
    expect((await survivors(m, 500)).length).toBe(1);
  } finally {
    setSubreaper(true);
    killRun(run);
  }
}, 60_000);

test.if(process.platform === "linux" && hasPerl)("an orphan that blanked its mark is ended: one that left its group (setsid) and zeroed its environment in memory outlived its call; now it ends with the call and is waited for", async () => {
  const ex = new GroupExecutor();
  const call = (m: string) => ex.run({ command: blanked(m, join(base, `ready-${m}`)), cwd: root, env, timeoutMs: 20_000, onOutput: () => {} });
  // As it was (no subreaper: the marks alone): it survives, its mark gone from /proc/PID/environ.
  expect(setSubreaper(false)).toBe(false);
  try {
    const m = marker();
    await call(m);
    const left = await survivors(m, 500);
    expect(left.length).toBe(1);
    expect(readFileSync(`/proc/${left[0]}/environ`, "latin1")).not.toContain("TENDRIL_RUN_MARK");
  } finally {
    setSubreaper(true);
    killRun(run);
  }
  for (let i = 0; i < 10; i++) {
    const m = marker();
    await call(m);
    expect(await survivors(m, 1000)).toEqual([]);
  }
  expect(adoptedZombies()).toEqual([]);
}, 60_000);

const bwrap = spawnSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).stdout.trim();
const confinedWorks = bwrap !== "" && spawnSync(bwrap, ["--ro-bind", "/", "/", "--unshare-all", "true"]).status === 0;

test.if(confinedWorks)("confined (the sandbox's PID namespace): none survives return, timeout or cancel", async () => {
  const ctx = { settings: { mode: "workspace-write" as const, network: false, hide: [], allowDomains: [] }, root, pathVar: env.PATH, home: join(base, "home"), configDir: join(base, "config"), stateDir: join(base, "state") };
  expect(await loop(new GroupExecutor(sandboxLauncher(ctx)), false)).toEqual([]);
}, 120_000);
