import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findCargoLock, lockedVersion, parseCargoLock } from "./cargo-lock.ts";

const tmp = mkdtempSync(join(tmpdir(), "tendril-lock-file-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const LOCK = `version = 4

[[package]]
name = "app"
version = "0.1.0"

[[package]]
name = "syn"
version = "1.0.109"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "72b64191b275b66ffe2469e8af2c1cfe3bafa67b529ead792a6d0160888b4237"

[[package]]
name = "syn"
version = "2.0.87"
source = "sparse+https://index.crates.io/"

[[package]]
name = "local-git"
version = "0.2.0"
source = "git+https://example.com/x#abc"
`;

test("registry packages only; the highest pin when several versions are locked", () => {
  const pkgs = parseCargoLock(LOCK, "Cargo.lock");
  expect(pkgs.map((p) => `${p.name}@${p.version}`)).toEqual(["syn@1.0.109", "syn@2.0.87"]);
  const lock = { path: "Cargo.lock", packages: pkgs };
  expect(lockedVersion(lock, "SYN")?.version).toBe("2.0.87");
  expect(lockedVersion(lock, "app")).toBeUndefined();
  expect(pkgs[0]!.checksum).toStartWith("72b6");
});

test("found at or above the start directory; a malformed file names itself", async () => {
  mkdirSync(join(tmp, "ws", "a", "b"), { recursive: true });
  writeFileSync(join(tmp, "ws", "Cargo.lock"), LOCK);
  expect((await findCargoLock(join(tmp, "ws", "a", "b")))?.path).toBe(join(tmp, "ws", "Cargo.lock"));
  writeFileSync(join(tmp, "ws", "a", "Cargo.lock"), "[[package]\n");
  await expect(findCargoLock(join(tmp, "ws", "a", "b"))).rejects.toThrow(join(tmp, "ws", "a", "Cargo.lock"));
});
