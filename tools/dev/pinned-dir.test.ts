// Unit tests of PinnedDir: components are opened without following symlinks, names resolve through
// the opened handle even after the path is swapped for a symlink, and creation makes missing parents.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PinnedDir } from "./pinned-dir.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-pinned-test-")));
const root = join(base, "root");
mkdirSync(join(root, "sub"), { recursive: true });
mkdirSync(join(base, "outside"));
symlinkSync(join(root, "sub"), join(root, "inner-link"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

test("a symlinked component is refused, even one pointing inside the root", async () => {
  await expect(PinnedDir.open(root, join(root, "inner-link"), false)).rejects.toThrow("not a directory inside the workspace root");
});

test("a directory outside the root is refused", async () => {
  await expect(PinnedDir.open(root, join(base, "outside"), false)).rejects.toThrow("outside the workspace root");
});

test("names resolve into the opened directory after it is swapped for a symlink to outside", async () => {
  const dir = await PinnedDir.open(root, join(root, "sub"), false);
  try {
    renameSync(join(root, "sub"), join(root, "sub.real"));
    symlinkSync("../outside", join(root, "sub"));
    writeFileSync(dir.path("file.txt"), "inside\n");
    expect(readFileSync(join(root, "sub.real", "file.txt"), "utf8")).toBe("inside\n");
    expect(existsSync(join(base, "outside", "file.txt"))).toBe(false);
  } finally {
    await dir.close();
    rmSync(join(root, "sub"));
    renameSync(join(root, "sub.real"), join(root, "sub"));
  }
});

test("with create, missing components are made", async () => {
  const dir = await PinnedDir.open(root, join(root, "a", "b", "c"), true);
  await dir.close();
  expect(existsSync(join(root, "a", "b", "c"))).toBe(true);
  expect(dir.real).toBe(join(root, "a", "b", "c"));
});

test("a name with a slash or dots is refused", async () => {
  const dir = await PinnedDir.open(root, root, false);
  try {
    for (const bad of ["", ".", "..", "a/b"]) expect(() => dir.path(bad)).toThrow("not a file name");
  } finally {
    await dir.close();
  }
});
