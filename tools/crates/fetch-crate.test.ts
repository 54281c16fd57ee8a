import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_LIMITS } from "../../core/limits.ts";
import { crateTarball, FakeRegistry, rawTarball, sha256 } from "../../tests/fake-crates-registry.ts";
import { CrateError } from "./errors.ts";
import { CrateFetcher, type FetcherOptions } from "./fetch-crate.ts";

const tmp = mkdtempSync(join(tmpdir(), "tendril-fetch-"));
const reg = new FakeRegistry()
  .add("serde", { vers: "1.0.0" }, { vers: "1.0.1" }, { vers: "1.0.2", yanked: true })
  .add("anyhow", { vers: "1.0.5", files: { "README.md": "anyhow" } })
  .add("flaky", { vers: "0.1.0" })
  .add("badsum", { vers: "0.1.0", cksum: "00".repeat(32) })
  .add("locked", { vers: "0.3.0" }, { vers: "0.4.0" });
beforeAll(() => reg.start());
afterAll(async () => {
  await reg.stop();
  rmSync(tmp, { recursive: true, force: true });
});

let n = 0;
function fetcher(over: Partial<FetcherOptions> = {}): CrateFetcher {
  const dir = join(tmp, `case-${n++}`);
  mkdirSync(dir);
  return new CrateFetcher({
    cacheDir: join(dir, "cache"),
    cargoHome: join(dir, "cargo"),
    cwd: dir,
    indexUrl: reg.indexUrl,
    limits: { ...DEFAULT_LIMITS, CRATES_RETRY_BACKOFF_S: 0.01 },
    userAgent: "tendril-test",
    ...over,
  });
}

async function failure(p: Promise<unknown>): Promise<CrateError> {
  const err = await p.then(() => new Error("succeeded"), (e: unknown) => e);
  expect(err).toBeInstanceOf(CrateError);
  return err as CrateError;
}

test("downloads the highest stable non-yanked version, then serves it from the cache", async () => {
  const f = fetcher();
  const first = await f.fetch("serde");
  expect(first.version).toBe("1.0.1");
  expect(first.message).toContain("downloaded from");
  expect(readFileSync(join(first.checkout_path, "Cargo.toml"), "utf8")).toContain('version = "1.0.1"');
  const before = reg.count("/dl/");
  const again = await f.fetch("serde@^1");
  expect(again.checkout_path).toBe(first.checkout_path);
  expect(reg.count("/dl/")).toBe(before);
});

test("cargo's unpacked sources are used as they are, without asking the registry for an exact pin", async () => {
  const f = fetcher();
  const src = join(tmp, `case-${n - 1}`, "cargo", "registry", "src", "index.crates.io-1949cf8c6b5b557f", "serde-1.0.0");
  mkdirSync(src, { recursive: true });
  writeFileSync(join(src, ".cargo-ok"), '{"v":1}');
  const before = reg.requests.length;
  const got = await f.fetch("serde@=1.0.0");
  expect(got.checkout_path).toBe(src);
  expect(got.message).toContain("cargo's unpacked sources");
  expect(reg.requests.length).toBe(before);
});

test("cargo's downloaded .crate is verified and extracted; a corrupt one is skipped for a download", async () => {
  const f = fetcher();
  const cacheDir = join(tmp, `case-${n - 1}`, "cargo", "registry", "cache", "index.crates.io-1949cf8c6b5b557f");
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(join(cacheDir, "anyhow-1.0.5.crate"), crateTarball("anyhow", "1.0.5", { "README.md": "anyhow" }));
  writeFileSync(join(cacheDir, "serde-1.0.1.crate"), crateTarball("serde", "1.0.1", { "README.md": "tampered" }));
  const a = await f.fetch("anyhow");
  expect(a.message).toContain("extracted from cargo's download");
  expect(readFileSync(join(a.checkout_path, "README.md"), "utf8")).toBe("anyhow");
  expect(reg.count("/dl/anyhow/")).toBe(0);
  const before = reg.count("/dl/serde/");
  const s = await f.fetch("serde");
  expect(s.message).toContain("downloaded from");
  expect(reg.count("/dl/serde/")).toBe(before + 1);
});

test("Cargo.lock found upward from cwd pins the version when no range is given", async () => {
  const ws = join(tmp, "ws");
  mkdirSync(join(ws, "crates", "app"), { recursive: true });
  writeFileSync(
    join(ws, "Cargo.lock"),
    'version = 4\n\n[[package]]\nname = "app"\nversion = "0.1.0"\n\n[[package]]\nname = "locked"\nversion = "0.3.0"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n',
  );
  const f = fetcher({ cwd: join(ws, "crates", "app") });
  expect((await f.fetch("locked")).version).toBe("0.3.0");
  expect((await f.fetch("locked")).message).toContain("locked by Cargo.lock");
  expect((await f.fetch("locked@>=0.4")).version).toBe("0.4.0");
});

test("a Cargo.lock checksum that differs from the index's is refused, as cargo refuses it", async () => {
  const ws = join(tmp, "ws-sum");
  mkdirSync(ws);
  writeFileSync(
    join(ws, "Cargo.lock"),
    `version = 4\n\n[[package]]\nname = "locked"\nversion = "0.4.0"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "${"ab".repeat(32)}"\n`,
  );
  const err = await failure(fetcher({ cwd: ws }).fetch("locked"));
  expect(err.kind).toBe("checksum");
  expect(err.message).toContain("Cargo.lock's checksum");
});

test("a checksum mismatch fails and leaves nothing behind", async () => {
  const f = fetcher();
  const err = await failure(f.fetch("badsum"));
  expect(err.kind).toBe("checksum");
  expect(err.message).toContain("00".repeat(32));
  const root = join(tmp, `case-${n - 1}`, "cache", "crates");
  const store = join(root, readdirSync(root)[0]!);
  expect(readdirSync(store).filter((e) => !e.startsWith("."))).toEqual([]);
  expect(readdirSync(join(store, ".locks"))).toEqual([]);
});

test("a refused archive fails at once (no retry) and leaves nothing in the cache", async () => {
  reg.add("evil", { vers: "0.1.0", tarball: rawTarball([{ path: "evil-0.1.0/ok.rs", body: "x" }, { path: "evil-0.1.0/../../out", body: "x" }]) });
  const f = fetcher();
  const err = await failure(f.fetch("evil"));
  expect(err.kind).toBe("hostile");
  expect(err.message).toContain('"evil-0.1.0/../../out"');
  expect(reg.count("/dl/evil/")).toBe(1);
  const root = join(tmp, `case-${n - 1}`, "cache", "crates");
  const store = join(root, readdirSync(root)[0]!);
  expect(readdirSync(store).filter((e) => !e.startsWith("."))).toEqual([]);
  expect(readdirSync(join(store, ".tmp"))).toEqual([]);
});

test("a registry answering 500 (or 429) then 200 is retried", async () => {
  reg.failures.set("/index/fl/ak/flaky", [500, 429]);
  reg.failures.set("/dl/flaky/0.1.0/download", [503]);
  const got = await fetcher().fetch("flaky");
  expect(got.version).toBe("0.1.0");
  expect(reg.count("/index/fl/ak/flaky")).toBe(3);
  expect(reg.count("/dl/flaky/")).toBe(2);
});

test("a download cut off half-way starts over and ends complete", async () => {
  reg.add("halfway", { vers: "1.0.0", files: { "data.bin": randomBytes(300_000) } });
  reg.cutOffs.set("/dl/halfway/1.0.0/download", 1);
  const got = await fetcher().fetch("halfway");
  expect(reg.count("/dl/halfway/")).toBe(2);
  expect(readFileSync(join(got.checkout_path, "data.bin")).length).toBe(300_000);
});

test("persistent 5xx ends with the URL and the attempts", async () => {
  reg.failures.set("/index/fl/ak/flaky", [500, 500, 500, 500]);
  const err = await failure(fetcher().fetch("flaky"));
  expect(err.kind).toBe("offline");
  expect(err.message).toContain("/index/fl/ak/flaky: HTTP 500 (after 4 attempts)");
});

test("a registry that never answers times out after CRATES_HTTP_TIMEOUT_S per attempt", async () => {
  reg.hangs.add("/index/fl/ak/flaky");
  try {
    const t0 = Date.now();
    const limits = { ...DEFAULT_LIMITS, CRATES_HTTP_TIMEOUT_S: 0.2, CRATES_HTTP_RETRIES: 1, CRATES_RETRY_BACKOFF_S: 0.01 };
    const err = await failure(fetcher({ limits }).fetch("flaky"));
    expect(err.kind).toBe("offline");
    expect(err.message).toContain("timed out: nothing received for 0.2 s (after 2 attempts)");
    expect(Date.now() - t0).toBeLessThan(5000);
  } finally {
    reg.hangs.delete("/index/fl/ak/flaky");
  }
});

test("the timeout is an idle one: a download slower in total than CRATES_HTTP_TIMEOUT_S goes on while bytes come", async () => {
  reg.add("trickle", { vers: "1.0.0", files: { "data.bin": randomBytes(100_000) } });
  // Eight pieces 60 ms apart: 420 ms in all, above the 0.3 s timeout; each gap a fifth of it.
  reg.trickleMs = 60;
  try {
    const limits = { ...DEFAULT_LIMITS, CRATES_HTTP_TIMEOUT_S: 0.3, CRATES_HTTP_RETRIES: 0 };
    const got = await fetcher({ limits }).fetch("trickle");
    expect(got.version).toBe("1.0.0");
    expect(reg.count("/dl/trickle/")).toBe(1);
  } finally {
    reg.trickleMs = 0;
  }
});

test("offline: a cached crate is served; without one the error names the URL that failed", async () => {
  const cacheDir = join(tmp, "offline-cache");
  const online = fetcher({ cacheDir });
  const first = await online.fetch("anyhow");
  const down = new FakeRegistry();
  await down.start();
  await down.stop(); // now a port nothing listens on
  // Same cache and index URL, registry unreachable: every request goes to the dead port.
  const offline = fetcher({ cacheDir, fetch: ((url: string, init?: RequestInit) => fetch(url.replace(reg.base, down.base), init)) as typeof fetch });
  const hit = await offline.fetch("anyhow@1");
  expect(hit.checkout_path).toBe(first.checkout_path);
  expect(hit.message).toContain("registry unreachable");
  const miss = await failure(offline.fetch("serde"));
  expect(miss.kind).toBe("offline");
  expect(miss.message).toContain(`${reg.base}/index/se/rd/serde`);
  expect(miss.message).toContain("no cached copy of serde");
});

test("a saved index copy is revalidated: the registry answers 304 and the copy is used", async () => {
  const cacheDir = join(tmp, "revalidate-cache");
  const first = await fetcher({ cacheDir }).fetch("serde");
  const before = reg.notModified;
  const again = await fetcher({ cacheDir }).fetch("serde@^1");
  expect(again.checkout_path).toBe(first.checkout_path);
  expect(reg.notModified).toBe(before + 1);
});

test("offline with a saved index copy: ranges resolve from it, yanked versions still skipped", async () => {
  const cacheDir = join(tmp, "index-copy-cache");
  await fetcher({ cacheDir }).fetchAll(["serde@=1.0.0", "serde"]);
  const down = new FakeRegistry();
  await down.start();
  await down.stop();
  const offline = fetcher({ cacheDir, fetch: ((url: string, init?: RequestInit) => fetch(url.replace(reg.base, down.base), init)) as typeof fetch });
  const got = await offline.fetch("serde@~1.0");
  expect(got.version).toBe("1.0.1");
  expect(got.message).toContain("used the index copy saved");
  const pinned = await offline.fetch("serde@=1.0.0");
  expect(pinned.message).toBe("found in tendril's cache");
});

test("no such crate, no matching version, and a download the registry lost", async () => {
  const f = fetcher();
  expect((await failure(f.fetch("nope"))).kind).toBe("not-found");
  const spelled = await failure(f.fetch("serde-json"));
  expect(spelled.message).not.toContain("did you mean");
  reg.add("serde_json", { vers: "1.0.0" });
  expect((await failure(fetcher().fetch("serde-json"))).message).toContain("did you mean serde_json?");
  const nm = await failure(f.fetch("serde@^2"));
  expect(nm.kind).toBe("no-match");
  expect(nm.message).toContain("1.0.1");
  reg.failures.set("/dl/serde/1.0.0/download", [404]);
  const lost = await failure(f.fetch("serde@=1.0.0"));
  expect(lost.kind).toBe("failed");
  expect(lost.message).toContain("HTTP 404");
});

test("a registry's config.json dl template with markers is honoured", async () => {
  const other = new FakeRegistry().add("tpl", { vers: "2.0.0" });
  other.dlTemplate = "{base}/dl/{crate}/{version}/download?sum={sha256-checksum}&p={lowerprefix}";
  await other.start();
  try {
    const got = await fetcher({ indexUrl: other.indexUrl }).fetch("tpl");
    expect(got.version).toBe("2.0.0");
    const dl = other.requests.find((r) => r.startsWith("/dl/"))!;
    expect(dl).toBe(`/dl/tpl/2.0.0/download?sum=${sha256(crateTarball("tpl", "2.0.0"))}&p=3/t`);
    expect(other.count("/index/config.json")).toBe(1);
  } finally {
    await other.stop();
  }
});

test("several crates in one call: results in argument order, failures in place", async () => {
  const out = await fetcher().fetchAll(["anyhow", "nope", "serde@1.0.0"]);
  expect(out.map((r) => (r instanceof CrateError ? r.kind : r.version))).toEqual(["1.0.5", "not-found", "1.0.0"]);
  expect(existsSync((out[0] as { checkout_path: string }).checkout_path)).toBe(true);
});
