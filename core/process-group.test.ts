// The one owner of process groups: spawn errors named before anything runs, the kill ladder, the
// registry, and the watchdog that takes a group down when its owner dies by SIGKILL.
import { expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { childrenOf, pidAlive, processGroup, readPidFile, waitFor } from "../tests/fake-mcp-helpers.ts";
import { blanked, hasPerl, killRun, markers, sleeping, survivors } from "../tests/orphan-kinds.ts";
import { findCommand, killAllGroupsNow, killGroup, liveGroupCount, setSubreaper, SpawnError, spawnGroup } from "./process-group.ts";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

/** An owner process running `script(pg)` from `dir`, where `pg` is this module's path as a JS string literal. */
function startOwner(dir: string, script: (pg: string) => string): ReturnType<typeof spawn> {
  const owner = join(dir, "owner.ts");
  writeFileSync(owner, script(JSON.stringify(new URL("./process-group.ts", import.meta.url).pathname)));
  return spawn(process.execPath, [owner], { stdio: "ignore" });
}

test("a missing command or working directory is named before anything starts", () => {
  expect(() => spawnGroup({ label: "MCP server x", command: "no-such-cmd-xyz", env, stdin: "pipe" })).toThrow(
    /MCP server x: "no-such-cmd-xyz": not found on PATH/,
  );
  expect(() => spawnGroup({ label: "agent", command: "/nope/bin", env, stdin: "pipe" })).toThrow(SpawnError);
  expect(() => spawnGroup({ label: "agent", command: "sh", env, cwd: "/nonexistent-dir", stdin: "pipe" })).toThrow(
    /working directory \/nonexistent-dir/,
  );
  expect(findCommand("sh", env.PATH)).toMatch(/\/sh$/);
});

test("the command leads its own group and sees its arguments", async () => {
  const child = spawnGroup({ label: "t", command: "sh", args: ["-c", 'echo "$0 $1"', "a", "b"], env, stdin: "ignore" });
  let out = "";
  child.stdout!.on("data", (b) => (out += b));
  await new Promise((r) => child.once("close", r)); // exited and its stdout drained
  expect(out.split("\n")[0]).toBe("a b");
  expect(processGroup(child.pid!) ?? child.pid).toBe(child.pid!);
  await killGroup(child.pid!);
});

test("the ladder kills a group that ignores SIGTERM, and the registry forgets it", async () => {
  const before = liveGroupCount();
  const child = spawnGroup({ label: "t", command: "sh", args: ["-c", "trap '' TERM; echo ready; sleep 30 & wait"], env, stdin: "ignore" });
  expect(liveGroupCount()).toBe(before + 1);
  await new Promise((r) => child.stdout!.once("data", r)); // the trap is set
  const t0 = Date.now();
  await killGroup(child.pid!, 50);
  expect(Date.now() - t0).toBeLessThan(1000);
  expect(await waitFor(() => !pidAlive(child.pid!), 1000)).toBe(true);
  expect(liveGroupCount()).toBe(before);
});

test("killAllGroupsNow kills every live group synchronously", async () => {
  const a = spawnGroup({ label: "a", command: "sleep", args: ["30"], env, stdin: "ignore" });
  const b = spawnGroup({ label: "b", command: "sleep", args: ["30"], env, stdin: "pipe" });
  killAllGroupsNow();
  expect(liveGroupCount()).toBe(0);
  expect(await waitFor(() => !pidAlive(a.pid!) && !pidAlive(b.pid!), 2000)).toBe(true);
});

test("regression: a tool's group dies within 1 s of its owner dying by SIGKILL (orphans after kill -9)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tendril-pg-"));
  const pidFile = join(dir, "pid");
  const proc = startOwner(
    dir,
    (pg) => `import { spawnGroup } from ${pg};
const c = spawnGroup({ label: "t", command: "sh", args: ["-c", "sleep 30 & echo $! > ${pidFile}; wait"], env: { PATH: process.env.PATH }, stdin: "ignore" });
setInterval(() => {}, 1000);`,
  );
  const sleeper = await readPidFile(pidFile, 5000);
  expect(pidAlive(sleeper)).toBe(true);
  proc.kill("SIGKILL");
  expect(await waitFor(() => !pidAlive(sleeper), 5000)).toBe(true);
}, 30_000);

test("one watchdog serves every group of an owner; groups still listed die with it, a dealt-with one is not touched", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tendril-pg-"));
  const pidsFile = join(dir, "pids");
  const proc = startOwner(
    dir,
    (pg) => `import { spawnGroup, killGroup } from ${pg};
import { writeFileSync } from "node:fs";
const env = { PATH: process.env.PATH };
const kids = [0, 1, 2].map((i) => spawnGroup({ label: "t" + i, command: "sleep", args: ["30"], env, stdin: "ignore" }));
await killGroup(kids[1].pid, 5000);
writeFileSync(${JSON.stringify(pidsFile)}, kids.map((k) => k.pid).join(" "));
setInterval(() => {}, 1000);`,
  );
  expect(await waitFor(() => { try { return readFileSync(pidsFile, "utf8").length > 0; } catch { return false; } }, 5000)).toBe(true);
  const [a, b, c] = readFileSync(pidsFile, "utf8").split(" ").map(Number) as [number, number, number];
  expect(pidAlive(b)).toBe(false);
  expect(pidAlive(a) && pidAlive(c)).toBe(true);
  // One watchdog: the owner's only child besides its groups' leaders.
  const dogs = childrenOf(proc.pid!).filter((p) => ![a, b, c].includes(p));
  expect(dogs.length).toBe(1);
  proc.kill("SIGKILL");
  expect(await waitFor(() => !pidAlive(a) && !pidAlive(c), 5000)).toBe(true);
}, 30_000);

test("a watchdog killed while its owner lives is started again with the next group and told every live group", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tendril-pg-"));
  const first = join(dir, "first");
  const next = join(dir, "next");
  const second = join(dir, "second");
  const proc = startOwner(
    dir,
    (pg) => `import { spawnGroup } from ${pg};
import { existsSync, writeFileSync } from "node:fs";
const env = { PATH: process.env.PATH };
const a = spawnGroup({ label: "a", command: "sleep", args: ["30"], env, stdin: "ignore" });
writeFileSync(${JSON.stringify(first)}, String(a.pid));
const poll = setInterval(() => {
  if (!existsSync(${JSON.stringify(next)})) return;
  clearInterval(poll);
  const b = spawnGroup({ label: "b", command: "sleep", args: ["30"], env, stdin: "ignore" });
  writeFileSync(${JSON.stringify(second)}, String(b.pid));
}, 10);
setInterval(() => {}, 1000);`,
  );
  const a = await readPidFile(first, 20_000);
  const dogsOf = (skip: number[]) => childrenOf(proc.pid!).filter((p) => !skip.includes(p) && pidAlive(p));
  expect(await waitFor(() => dogsOf([a]).length === 1, 20_000)).toBe(true);
  process.kill(dogsOf([a])[0]!, "SIGKILL");
  expect(pidAlive(a)).toBe(true); // a dead watchdog kills nothing
  writeFileSync(next, "");
  const b = await readPidFile(second, 20_000);
  expect(await waitFor(() => dogsOf([a, b]).length === 1, 20_000)).toBe(true);
  proc.kill("SIGKILL");
  expect(await waitFor(() => !pidAlive(a) && !pidAlive(b), 20_000)).toBe(true);
}, 30_000);

test("regression: a group started just after the watchdog died (before its death was seen) was lost; now a new watchdog answers for it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tendril-pg-"));
  const ran = join(dir, "ran");
  const pids = join(dir, "pids");
  const proc = startOwner(
    dir,
    (pg) => `import { spawnGroup } from ${pg};
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
const env = { PATH: process.env.PATH };
const a = spawnGroup({ label: "a", command: "sleep", args: ["30"], env, stdin: "ignore" });
const findDog = () => readdirSync("/proc").find((e) => {
  try {
    const st = readFileSync("/proc/" + e + "/stat", "utf8");
    return Number(st.slice(st.lastIndexOf(")") + 2).split(" ")[1]) === process.pid && readFileSync("/proc/" + e + "/cmdline", "utf8").includes("groups=");
  } catch {
    return false;
  }
});
// Until the watchdog answered for a: a's gate then lets it exec its command.
const runs = () => { try { return readFileSync("/proc/" + a.pid + "/cmdline", "utf8").split(String.fromCharCode(0))[0].endsWith("/sleep"); } catch { return false; } };
for (let i = 0; i < 500 && !runs(); i++) await new Promise((r) => setTimeout(r, 10));
const dog = findDog();
process.kill(Number(dog), "SIGKILL");
// the same turn of the event loop: the watchdog's death cannot have been seen yet
const b = spawnGroup({ label: "b", command: "sh", args: ["-c", "echo ran > " + ${JSON.stringify(ran)} + "; exec sleep 30"], env, stdin: "ignore" });
writeFileSync(${JSON.stringify(pids)}, a.pid + " " + b.pid);
setInterval(() => {}, 1000);`,
  );
  expect(await waitFor(() => existsSync(ran), 5000)).toBe(true);
  const [a, b] = readFileSync(pids, "utf8").split(" ").map(Number) as [number, number];
  proc.kill("SIGKILL");
  // the new watchdog was told both groups: the owner's death takes both down
  expect(await waitFor(() => !pidAlive(a) && !pidAlive(b), 5000)).toBe(true);
}, 30_000);

test("a command that ends on its own leaves an empty group: the ladder returns at once", async () => {
  const child = spawnGroup({ label: "t", command: "true", env, stdin: "pipe" });
  await new Promise((r) => child.once("exit", r));
  const t0 = Date.now();
  await killGroup(child.pid!, 5000);
  expect(Date.now() - t0).toBeLessThan(1000);
});

test("regression: a process that left its group (setsid) outlived killGroup and killAllGroupsNow; one that ignores SIGTERM gets SIGKILL after the grace", async () => {
  const { run, next } = markers();
  try {
    const stubborn = next();
    const a = spawnGroup({ label: "a", command: "sh", args: ["-c", `setsid sh -c 'trap "" TERM; sleep ${stubborn}' >/dev/null 2>&1 & sleep 30`], env, stdin: "ignore" });
    expect(await waitFor(() => sleeping(stubborn).length > 0, 5000)).toBe(true);
    const t0 = Date.now();
    await killGroup(a.pid!, 100);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(await survivors(stubborn, 500)).toEqual([]);
    const [m1, m2] = [next(), next()];
    spawnGroup({ label: "b", command: "sh", args: ["-c", `setsid sleep ${m1} >/dev/null 2>&1 & sleep 30`], env, stdin: "ignore" });
    spawnGroup({ label: "c", command: "sh", args: ["-c", `(setsid sh -c 'sleep ${m2} & exit 0' >/dev/null 2>&1 &); sleep 30`], env, stdin: "ignore" });
    expect(await waitFor(() => sleeping(m1).length > 0 && sleeping(m2).length > 0, 5000)).toBe(true);
    killAllGroupsNow();
    expect([...(await survivors(m1, 500)), ...(await survivors(m2, 500))]).toEqual([]);
  } finally {
    killRun(run);
  }
});

/** Whether `pid` is this process's child now (an orphan it adopted). */
const adopted = (pid: number) => {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, "latin1").split(") ")[1]!.split(" ")[1]) === process.pid;
  } catch {
    return false;
  }
};

test.if(process.platform === "linux" && hasPerl)("an adopted orphan ends with the group it came from: a running group's (by its session, its mark, or unnamed and older than the command that ended) outlives another group's end; an unnamed one that appeared during a command ends with it", async () => {
  expect(setSubreaper(true)).toBe(true);
  const { run, next } = markers();
  const dir = mkdtempSync(join(tmpdir(), "tendril-pg-"));
  const [named, sameSession, unnamed, late] = [next(), next(), next(), next()];
  try {
    // A server-like group whose orphans come back to us while it runs: one keeps its mark, one blanks
    // it but stays in the group's session, one blanks it after setsid; a fourth comes when told.
    const a = spawnGroup({
      label: "a",
      command: "sh",
      args: ["-c", [`(setsid sleep ${named} >/dev/null 2>&1 </dev/null &)`, blanked(sameSession, join(dir, "r1"), "pgrp"), blanked(unnamed, join(dir, "r2")), "read go", blanked(late, join(dir, "r3")), "sleep 30"].join("\n")],
      env,
      stdin: "pipe",
    });
    const kept = [named, sameSession, unnamed];
    expect(await waitFor(() => kept.every((m) => sleeping(m).some(adopted)), 5000)).toBe(true);
    // A command that starts and ends meanwhile ends none of them.
    const b = spawnGroup({ label: "b", command: "true", env, stdin: "ignore" });
    await new Promise((r) => b.once("exit", r));
    await killGroup(b.pid!);
    expect(kept.map((m) => sleeping(m).length)).toEqual([1, 1, 1]);
    // An unnamed orphan that comes back while a command runs is ended with that command.
    const c = spawnGroup({ label: "c", command: "sleep", args: ["30"], env, stdin: "ignore" });
    a.stdin!.write("go\n");
    expect(await waitFor(() => sleeping(late).some(adopted), 5000)).toBe(true);
    await killGroup(c.pid!);
    expect(await survivors(late, 1000)).toEqual([]);
    expect(kept.map((m) => sleeping(m).length)).toEqual([1, 1, 1]);
    // Its own group's end ends the rest.
    await killGroup(a.pid!);
    expect([...(await survivors(named, 1000)), ...(await survivors(sameSession, 1000)), ...(await survivors(unnamed, 1000))]).toEqual([]);
  } finally {
    killRun(run);
  }
}, 30_000);
