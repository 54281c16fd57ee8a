// Regression tests for `tendril crate-fetch`, each named after the bug it pins, run through the built
// binary against the loopback fake registry (what a user meets). Needs `npm run build` first.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HOST } from "../tools/crates/owner.ts";
import { BIN, runBinAsync } from "./binary.ts";
import { crateRunEnv, FakeRegistry } from "./fake-crates-registry.ts";

const tmp = mkdtempSync(join(tmpdir(), "tendril-crates-regress-"));
const reg = new FakeRegistry()
  .add("serde", { vers: "1.0.0" }, { vers: "1.1.0" })
  .add("zipped", { vers: "0.1.0" }, { vers: "0.2.0", files: { "big.bin": randomBytes(100_000) } })
  .add("slow", { vers: "0.1.0", files: { "big.bin": randomBytes(200_000) } });
beforeAll(() => reg.start());
afterAll(async () => {
  await reg.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const env = crateRunEnv(tmp, reg);

const fetchCrates = (args: string[], e: Record<string, string>) => runBinAsync(["crate-fetch", ...args], { env: e, cwd: e.HOME });

/** tendril's cache folder for the fake registry, in a run's environment. */
function storeOf(e: Record<string, string>): string {
  const root = join(e.XDG_CACHE_HOME!, "tendril", "crates");
  return join(root, readdirSync(root)[0]!);
}

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  for (const t0 = Date.now(); !ok(); ) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A running `crate-fetch` whose stderr is collected as it comes. */
function start(args: string[], e: Record<string, string>): { child: ChildProcess; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(BIN, ["crate-fetch", ...args], { env: e, cwd: e.HOME, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
  child.stdout!.resume();
  const exit = new Promise<number | null>((resolve) => child.on("close", (code, sig) => resolve(code ?? (sig ? -1 : null))));
  const guard = setTimeout(() => child.kill("SIGKILL"), 30_000);
  void exit.then(() => clearTimeout(guard));
  return { child, stderr: () => err, exit };
}

/** A pid that was this host's a moment ago and is no longer alive. */
function deadPid(): number {
  return spawnSync("true").pid!;
}

test("C1: a registry that gzips its index is not reported offline", async () => {
  reg.gzip = true;
  try {
    const before = reg.gzipAnswers;
    const r = await fetchCrates(["zipped", "--json"], env());
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(r.stdout)).toMatchObject({ crate_name: "zipped", version: "0.2.0" });
    expect(readdirSync(JSON.parse(r.stdout).checkout_path)).toContain("big.bin");
    // The index, config.json and the download all went out gzip-encoded.
    expect(reg.gzipAnswers - before).toBe(3);
  } finally {
    reg.gzip = false;
  }
});

test("C1: a gzip-encoded index cut off or truncated is still detected as cut off, retried, never read as a shorter index", async () => {
  reg.gzip = true;
  const path = "/index/se/rd/serde";
  try {
    // The connection drops half-way; a well-framed body holds only half the gzip stream.
    for (const fault of [reg.cutOffs, reg.truncatedGzip]) {
      fault.set(path, 1);
      const before = reg.count(path);
      const ok = await fetchCrates(["serde", "--json"], env());
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout).version).toBe("1.1.0");
      expect(reg.count(path) - before).toBe(2);
    }

    // Truncated on every attempt: an unreachable registry (exit 5) that says the transfer was cut off.
    reg.truncatedGzip.set(path, 10);
    const bad = await fetchCrates(["serde"], env({ TENDRIL_CRATES_HTTP_RETRIES: "1" }));
    expect(bad.code).toBe(5);
    expect(bad.stderr).toContain(`${reg.base}${path}`);
    expect(bad.stderr).toContain("cut off");
  } finally {
    reg.gzip = false;
    reg.cutOffs.delete(path);
    reg.truncatedGzip.delete(path);
  }
});

test("C11: SIGTERM during a Retry-After wait exits 143 at once, not after the wait", async () => {
  const path = "/index/se/rd/serde";
  reg.failures.set(path, [429, 429, 429, 429]);
  reg.retryAfter = "600";
  try {
    const run = start(["serde"], env({ TENDRIL_LOG: "info", TENDRIL_CRATES_HTTP_TIMEOUT_S: "120" }));
    // The retry line is written just before the wait starts.
    await until("the retry wait", () => run.stderr().includes("retrying"));
    const t0 = Date.now();
    run.child.kill("SIGTERM");
    expect(await run.exit).toBe(143);
    expect(Date.now() - t0).toBeLessThan(2500);
    expect(run.stderr()).toContain("wait_s=120");
  } finally {
    reg.failures.delete(path);
    reg.retryAfter = undefined;
  }
});

test("C6: SIGHUP (a closed terminal) aborts crate-fetch like SIGTERM: exit 129, no lock or temp folder left", async () => {
  reg.trickleMs = 1000;
  try {
    const shared = env({ TENDRIL_LOG: "info" });
    const before = reg.count("/dl/slow/");
    const run = start(["slow"], shared);
    await until("the download", () => reg.count("/dl/slow/") > before);
    const tmpDir = join(storeOf(shared), ".tmp");
    await until("the fetch's temp folder", () => existsSync(tmpDir) && readdirSync(tmpDir).length === 1);
    run.child.kill("SIGHUP");
    expect(await run.exit).toBe(129);
    expect(readdirSync(tmpDir)).toEqual([]);
    expect(readdirSync(join(storeOf(shared), ".locks"))).toEqual([]);
  } finally {
    reg.trickleMs = 0;
  }
});

test("C12: a fetch killed by SIGKILL while another waits on its lock leaves no temp folder behind", async () => {
  reg.trickleMs = 1000;
  try {
    const shared = env({ TENDRIL_LOG: "info" });
    const before = reg.count("/dl/slow/");
    const first = start(["slow"], shared);
    await until("the first download", () => reg.count("/dl/slow/") > before);
    const tmpDir = join(storeOf(shared), ".tmp");
    await until("the first fetch's temp folder", () => existsSync(tmpDir) && readdirSync(tmpDir).length === 1);
    const second = start(["slow"], shared);
    await until("the second fetch waiting on the lock", () => second.stderr().includes("waiting for another fetch"));
    reg.trickleMs = 0;
    first.child.kill("SIGKILL");
    expect(await first.exit).toBe(-1);
    expect(await second.exit).toBe(0);
    expect(reg.count("/dl/slow/") - before).toBe(2);
    expect(readdirSync(tmpDir)).toEqual([]);
    expect(readdirSync(join(storeOf(shared), ".locks"))).toEqual([]);
  } finally {
    reg.trickleMs = 0;
  }
});

test("C12, C8: a cache hit sweeps temp folders of dead fetches on this host, and judges another host's only by age", async () => {
  const e = env({ TENDRIL_CRATE_TEMP_STALE_S: "3600" });
  const first = await fetchCrates(["serde@=1.0.0"], e);
  expect(first.code).toBe(0);
  const tmpDir = join(storeOf(e), ".tmp");
  mkdirSync(tmpDir, { recursive: true });
  const dead = deadPid();
  const names = {
    deadHere: `serde-1.1.0@${HOST}.${dead}.aaaaaaaaaaaa`,
    liveHere: `serde-1.1.0@${HOST}.${process.pid}.bbbbbbbbbbbb`,
    // Another host's pid means nothing here: fresh, it may be a live fetch there; old, it is swept.
    otherFresh: `serde-1.1.0@${HOST}-elsewhere.${dead}.cccccccccccc`,
    otherOld: `serde-1.1.0@${HOST}-elsewhere.${process.pid}.dddddddddddd`,
    // An older tendril's name carried no host at all: judged like another host's.
    unnamedOld: `serde-1.1.0.${process.pid}.eeeeeeeeeeee`,
  };
  for (const name of Object.values(names)) mkdirSync(join(tmpDir, name, "serde-1.1.0"), { recursive: true });
  const twoHoursAgo = new Date(Date.now() - 7200_000);
  for (const name of [names.otherOld, names.unnamedOld]) utimesSync(join(tmpDir, name), twoHoursAgo, twoHoursAgo);

  const hit = await fetchCrates(["serde@=1.0.0", "--json"], e);
  expect(hit.code).toBe(0);
  expect(JSON.parse(hit.stdout).message).toContain("found in tendril's cache");
  expect(readdirSync(tmpDir).sort()).toEqual([names.liveHere, names.otherFresh].sort());
});
