// End-to-end tests of `tendril crate-fetch` through the built binary against a loopback fake registry:
// output forms, exit codes per failure, one download for two concurrent processes, and the --mcp server.
// Every URL is 127.0.0.1; caches and CARGO_HOME are temp dirs. Needs `npm run build` first.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, runBinAsync } from "./binary.ts";
import { crateRunEnv, FakeRegistry, rawTarball } from "./fake-crates-registry.ts";

const tmp = mkdtempSync(join(tmpdir(), "tendril-crate-fetch-e2e-"));
const reg = new FakeRegistry()
  .add("serde", { vers: "1.0.0" }, { vers: "1.1.0" })
  .add("anyhow", { vers: "1.0.5" })
  .add("slow", { vers: "0.1.0", files: { "big.bin": randomBytes(200_000) } })
  .add("badsum", { vers: "0.1.0", cksum: "11".repeat(32) })
  .add("evil", { vers: "0.1.0", tarball: rawTarball([{ path: "evil-0.1.0/../../escape", body: "x" }]) });
beforeAll(() => reg.start());
afterAll(async () => {
  await reg.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const env = crateRunEnv(tmp, reg);

const fetchCrates = (args: string[], e = env()) => runBinAsync(["crate-fetch", ...args], { env: e, cwd: e.HOME });

test("prints the checkout path, one line per crate, in argument order", async () => {
  const r = await fetchCrates(["serde", "anyhow@1"]);
  expect(r.code).toBe(0);
  const lines = r.stdout.trim().split("\n");
  expect(lines.length).toBe(2);
  expect(lines[0]).toEndWith("/serde-1.1.0");
  expect(lines[1]).toEndWith("/anyhow-1.0.5");
  expect(readdirSync(lines[0]!)).toContain("Cargo.toml");
  expect(r.stderr).toBe("");
});

test("--json prints one object for one crate and an array for several", async () => {
  const one = await fetchCrates(["serde@~1.0", "--json"]);
  expect(one.code).toBe(0);
  const obj = JSON.parse(one.stdout);
  expect(Object.keys(obj).sort()).toEqual(["checkout_path", "crate_name", "message", "version"]);
  expect(obj.version).toBe("1.0.0");
  const many = await fetchCrates(["serde", "nope", "--json"]);
  expect(many.code).toBe(3);
  const arr = JSON.parse(many.stdout);
  expect(arr.length).toBe(2);
  expect(arr[1]).toMatchObject({ crate_name: "nope", checkout_path: null, error: "not-found" });
});

test("exit codes: usage 2, no such crate 3, no match 4, offline 5, checksum 6, hostile archive 7", async () => {
  const dead = new FakeRegistry();
  await dead.start();
  await dead.stop();
  const cases: [string[], number, string, Record<string, string>?][] = [
    [["9bad"], 2, "invalid crate name"],
    [[], 2, "missing crate name"],
    [["--mcp", "serde"], 2, "--mcp takes no crate names"],
    [["serde"], 2, "TENDRIL_CRATES_INDEX must be an http(s) URL", { TENDRIL_CRATES_INDEX: "index.crates.io" }],
    [["--proxy", "serde"], 2, "--proxy takes no crate names"],
    [["nope"], 3, "no crate named nope"],
    [["serde@^2"], 4, "nearest: 1.0.0, 1.1.0"],
    [["serde"], 5, `${dead.base}/index/se/rd/serde`, { TENDRIL_CRATES_INDEX: dead.indexUrl }],
    [["badsum"], 6, "checksum mismatch"],
    [["evil"], 7, "evil-0.1.0/../../escape"],
  ];
  for (const [args, code, text, over] of cases) {
    const e = env(over);
    const r = await fetchCrates(args, e);
    expect({ args, code: r.code }).toEqual({ args, code });
    expect(r.stderr).toContain(text);
    expect(r.stdout).toBe("");
    if (code >= 6) expect(existsSync(join(e.HOME!, "escape"))).toBe(false);
  }
});

test("offline with a cached copy: the registry goes away and the crate is still served", async () => {
  const own = new FakeRegistry().add("tokio", { vers: "1.2.3" });
  await own.start();
  const e = env({ TENDRIL_CRATES_INDEX: own.indexUrl });
  const online = await fetchCrates(["tokio@1"], e);
  await own.stop();
  const offline = await fetchCrates(["tokio@1", "--json"], e);
  expect(online.code).toBe(0);
  expect(offline.code).toBe(0);
  const got = JSON.parse(offline.stdout);
  expect(got.checkout_path).toBe(online.stdout.trim());
  expect(got.message).toContain("registry unreachable");
});

test("two processes fetching one crate at once download it once", async () => {
  reg.downloadDelayMs = 300;
  try {
    const shared = env();
    const before = reg.count("/dl/slow/");
    const [a, b] = await Promise.all([fetchCrates(["slow"], shared), fetchCrates(["slow"], shared)]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(a.stdout).toBe(b.stdout);
    expect(reg.count("/dl/slow/") - before).toBe(1);
  } finally {
    reg.downloadDelayMs = 0;
  }
});

test("Ctrl-C mid-download exits 130 and leaves no lock file or temp folder", async () => {
  reg.trickleMs = 1000;
  try {
    const e = env();
    const child = spawn(BIN, ["crate-fetch", "slow"], { env: e, cwd: e.HOME, stdio: ["ignore", "pipe", "pipe"] });
    const before = reg.count("/dl/slow/");
    const root = join(e.XDG_CACHE_HOME!, "tendril", "crates");
    // Mid-download: the request came and the extraction's temp folder (which must not stay) is there.
    const extracting = () => reg.count("/dl/slow/") > before && existsSync(root) && readdirSync(root).some((s) => existsSync(join(root, s, ".tmp")) && readdirSync(join(root, s, ".tmp")).length > 0);
    for (let i = 0; i < 1000 && !extracting(); i++) await new Promise((r) => setTimeout(r, 10));
    const midDownload = extracting();
    const t0 = Date.now();
    child.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(midDownload).toBe(true);
    expect(code).toBe(130);
    expect(Date.now() - t0).toBeLessThan(2500);
    const store = join(root, readdirSync(root)[0]!);
    expect(readdirSync(join(store, ".locks"))).toEqual([]);
    expect(readdirSync(join(store, ".tmp"))).toEqual([]);
    expect(readdirSync(store).filter((x) => !x.startsWith("."))).toEqual([]);
  } finally {
    reg.trickleMs = 0;
  }
});

const hasScript = spawnSync("script", ["--version"]).status === 0;

test.skipIf(!hasScript)("a progress line is drawn on a terminal stderr (and none on a pipe, see above)", async () => {
  reg.trickleMs = 100;
  try {
    const e = env();
    // `script` runs the binary on a pseudo-terminal and copies what the terminal showed to its stdout.
    const shown = await new Promise<string>((resolve) => {
      const child = spawn("script", ["-qec", `${BIN} crate-fetch slow`, "/dev/null"], { env: e, cwd: e.HOME, stdio: ["ignore", "pipe", "ignore"] });
      let out = "";
      child.stdout.on("data", (b: Buffer) => (out += b.toString()));
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      child.on("close", () => {
        clearTimeout(timer);
        resolve(out);
      });
    });
    expect(shown).toContain("0/1 crates  slow 0.1.0");
    expect(shown).toMatch(/\[#*\.*\] \d+ KiB \/ \d+ KiB/);
    expect(shown).toContain("/slow-0.1.0");
  } finally {
    reg.trickleMs = 0;
  }
});

test("--mcp serves get_rust_crate_source with the path and the top-level entries", async () => {
  const transport = new StdioClientTransport({ command: BIN, args: ["crate-fetch", "--mcp"], env: env(), stderr: "pipe" });
  const client = new Client({ name: "crate-fetch-e2e", version: "1" });
  await client.connect(transport);
  try {
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(["get_rust_crate_source"]);
    const ok = (await client.callTool({ name: "get_rust_crate_source", arguments: { crate_name: "serde", version: "1.0" } })) as unknown as {
      content: { text: string }[];
      structuredContent: { checkout_path: string; files: string[]; version: string };
    };
    expect(ok.structuredContent.version).toBe("1.0.0");
    expect(ok.structuredContent.files).toEqual(["Cargo.toml", "src/"]);
    expect(ok.content[0]!.text).toContain(ok.structuredContent.checkout_path);
    const bad = (await client.callTool({ name: "get_rust_crate_source", arguments: { crate_name: "nope" } })) as { isError?: boolean; content: { text: string }[] };
    expect(bad.isError).toBe(true);
    expect(bad.content[0]!.text).toContain("no crate named nope");
  } finally {
    await client.close();
  }
});
