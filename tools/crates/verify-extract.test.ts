import { afterAll, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crateTarball, rawTarball, sha256, type TarEntry } from "../../tests/fake-crates-registry.ts";
import { linkStaysInside } from "./archive-paths.ts";
import { fromBytes, installCrate } from "./cache.ts";
import { CrateError } from "./errors.ts";
import { verifyChecksum } from "./checksum.ts";
import { CrateExtraction, extractCrate } from "./verify-extract.ts";

const tmp = mkdtempSync(join(tmpdir(), "tendril-extract-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const LIMITS = { maxUnpackedBytes: 1024 * 1024, maxFiles: 50 };
const TOP = "demo-1.0.0";
let n = 0;

/** Installs into a fresh store inside a fresh sandbox; returns the error and what the sandbox holds after. */
async function install(entries: TarEntry[], limits = LIMITS): Promise<{ error?: CrateError; sandbox: string[] }> {
  const sandbox = join(tmp, `case-${n++}`);
  const root = join(sandbox, "store");
  mkdirSync(root, { recursive: true });
  let error: CrateError | undefined;
  try {
    await installCrate({ root }, "demo", "1.0.0", fromBytes(rawTarball(entries)), limits);
  } catch (err) {
    error = err as CrateError;
  }
  const list = (dir: string, rel = ""): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => [rel + e.name, ...(e.isDirectory() ? list(join(dir, e.name), `${rel}${e.name}/`) : [])]);
  return { error, sandbox: list(sandbox) };
}

async function expectRefused(entries: TarEntry[], entry: string, why: string, limits = LIMITS): Promise<void> {
  const { error, sandbox } = await install(entries, limits);
  expect(error).toBeInstanceOf(CrateError);
  expect(error!.kind).toBe("hostile");
  expect(error!.message).toContain(entry);
  expect(error!.message).toContain(why);
  // Nothing outside the store, nothing left inside it but the (empty) temp folder's parent.
  expect(sandbox.filter((p) => p !== "store" && p !== "store/.tmp")).toEqual([]);
}

const ok = (path: string, body = "x"): TarEntry => ({ path: `${TOP}/${path}`, body });

test("a well-formed crate extracts with modes, inside symlinks and hard links as copies", async () => {
  const dest = join(tmp, "good");
  mkdirSync(dest);
  const gz = rawTarball([
    { path: `${TOP}/`, type: "Directory" },
    ok("Cargo.toml", "[package]\n"),
    { path: `${TOP}/run.sh`, body: "#!/bin/sh\n", mode: 0o755 },
    { path: `${TOP}/README`, type: "SymbolicLink", linkpath: "docs/README.md" },
    ok("docs/README.md", "hello"),
    { path: `${TOP}/copy.md`, type: "Link", linkpath: `${TOP}/docs/README.md` },
  ]);
  extractCrate(gz, dest, TOP, LIMITS);
  expect(readFileSync(join(dest, TOP, "README"), "utf8")).toBe("hello");
  expect(readlinkSync(join(dest, TOP, "README"))).toBe("docs/README.md");
  expect(lstatSync(join(dest, TOP, "copy.md")).isFile()).toBe(true);
  expect(statSync(join(dest, TOP, "run.sh")).mode & 0o111).not.toBe(0);
  expect(statSync(join(dest, TOP, "Cargo.toml")).mode & 0o111).toBe(0);
});

test("installCrate renames a complete folder into place and leaves no temp folder", async () => {
  const root = join(tmp, "store-ok");
  const path = await installCrate({ root }, "demo", "1.0.0", fromBytes(crateTarball("demo", "1.0.0")), LIMITS);
  expect(path).toBe(join(root, TOP));
  expect(readdirSync(path).sort()).toEqual(["Cargo.toml", "src"]);
  expect(readdirSync(join(root, ".tmp"))).toEqual([]);
});

test("fewer calls: an extraction writes the crate's folder as the folder it is given (the temp folder renamed into place whole)", async () => {
  const into = join(tmp, "as-top", "x@host.1.ab");
  const x = new CrateExtraction(into, TOP, LIMITS);
  x.write(rawTarball([{ path: `${TOP}/`, type: "Directory" }, ok("Cargo.toml", "[package]\n"), ok("src/lib.rs"), { path: `${TOP}/lib`, type: "SymbolicLink", linkpath: "src/lib.rs" }]));
  x.finish();
  expect(readdirSync(into).sort()).toEqual(["Cargo.toml", "lib", "src"]);
  expect(readFileSync(join(into, "lib"), "utf8")).toBe("x");
  // a name that is `top` with a backslash lies beside the crate's folder: never written, never installed
  const root = join(tmp, "store-backslash");
  await installCrate({ root }, "demo", "1.0.0", fromBytes(rawTarball([ok("Cargo.toml"), { path: `${TOP}\\x`, body: "x" }])), LIMITS);
  expect(readdirSync(root).sort()).toEqual([".tmp", TOP]);
  expect(readdirSync(join(root, TOP))).toEqual(["Cargo.toml"]);
  expect(readdirSync(join(root, ".tmp"))).toEqual([]);
});

test("refused: `..`, absolute paths, entries outside the crate folder", async () => {
  await expectRefused([ok("a"), { path: "../evil", body: "x" }], '"../evil"', "`..`");
  await expectRefused([{ path: `${TOP}/../../evil`, body: "x" }], "evil", "`..`");
  await expectRefused([{ path: "/tmp/tendril-abs-evil", body: "x" }], "/tmp/tendril-abs-evil", "absolute");
  await expectRefused([{ path: "other-1.0.0/x", body: "x" }], "other-1.0.0/x", "outside the crate folder");
  expect(existsSync("/tmp/tendril-abs-evil")).toBe(false);
});

test("refused: symlinks out, including through another symlink, and entries below a symlink", async () => {
  await expectRefused([ok("a"), { path: `${TOP}/link`, type: "SymbolicLink", linkpath: "../../etc" }], `${TOP}/link`, "points outside");
  await expectRefused([{ path: `${TOP}/abs`, type: "SymbolicLink", linkpath: "/etc/passwd" }], `${TOP}/abs`, "points outside");
  await expectRefused(
    [
      { path: `${TOP}/a`, type: "SymbolicLink", linkpath: "." },
      { path: `${TOP}/s`, type: "SymbolicLink", linkpath: "a/../x" },
    ],
    `${TOP}/s`,
    "points outside",
  );
  await expectRefused(
    [{ path: `${TOP}/l`, type: "SymbolicLink", linkpath: "sub" }, ok("l/x")],
    `${TOP}/l/x`,
    "below the symlink",
  );
});

test("refused: a symlink at a path the archive also wrote a folder at", async () => {
  await expectRefused([ok("d/x"), { path: `${TOP}/d`, type: "SymbolicLink", linkpath: "." }], `${TOP}/d`, "EEXIST");
});

test("refused: hard links out of the crate or to nothing the archive wrote", async () => {
  await expectRefused([{ path: `${TOP}/h`, type: "Link", linkpath: "/etc/passwd" }], `${TOP}/h`, "absolute");
  await expectRefused([{ path: `${TOP}/h`, type: "Link", linkpath: `${TOP}/../../x` }], `${TOP}/h`, "`..`");
  await expectRefused([{ path: `${TOP}/h`, type: "Link", linkpath: `${TOP}/later` }, ok("later")], `${TOP}/h`, "not a file earlier");
});

test("refused: devices and FIFOs", async () => {
  await expectRefused([ok("a"), { path: `${TOP}/dev`, type: "CharacterDevice" }], `${TOP}/dev`, "CharacterDevice");
  await expectRefused([{ path: `${TOP}/fifo`, type: "FIFO" }], `${TOP}/fifo`, "FIFO");
});

test("refused: a size bomb and too many files, named by the entry that crosses the cap", async () => {
  const zeros = Buffer.alloc(2 * 1024 * 1024);
  await expectRefused([ok("small"), { path: `${TOP}/bomb`, body: zeros }], `${TOP}/bomb`, "MAX_CRATE_UNPACKED_BYTES");
  const many = Array.from({ length: 60 }, (_, i) => ok(`f${i}`));
  await expectRefused(many, `${TOP}/f50`, "MAX_CRATE_FILES (50)");
});

test("refused: bytes that are not a gzip archive", async () => {
  const root = join(tmp, "store-junk");
  mkdirSync(root);
  const err = await installCrate({ root }, "demo", "1.0.0", fromBytes(Buffer.from("not gzip at all")), LIMITS).catch((e) => e);
  expect(err).toBeInstanceOf(CrateError);
  expect((err as CrateError).kind).toBe("hostile");
  expect(readdirSync(root)).toEqual([".tmp"]);
});

test("checksums: a mismatch names both sums", () => {
  const bytes = Buffer.from("crate");
  expect(() => verifyChecksum(bytes, sha256(bytes).toUpperCase(), "x")).not.toThrow();
  expect(() => verifyChecksum(bytes, "00".repeat(32), "x")).toThrow(`got ${sha256(bytes)}`);
});

test("link resolution follows the archive's own symlinks", () => {
  const links = new Map([[`${TOP}/d`, "sub/deeper"]]);
  expect(linkStaysInside(`${TOP}/s`, "d/..", TOP, links)).toBe(true);
  expect(linkStaysInside(`${TOP}/s`, "d/../../..", TOP, links)).toBe(false);
  const loop = new Map([[`${TOP}/a`, "b"], [`${TOP}/b`, "a"]]);
  expect(linkStaysInside(`${TOP}/s`, "a", TOP, loop)).toBe(false);
});
