// PinnedDir's `checked-path` mode, the one used where there is no /proc (macOS), run here on Linux:
// the same refusals as the /proc mode, a directory swapped after it was pinned is refused instead of
// written through, and str_replace edits and creates files as usual.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PinnedDir, setPinMode } from "./pinned-dir.ts";
import { StrReplaceTool } from "./str-replace.ts";

const systemMode = setPinMode("checked-path");

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-pinned-fallback-test-")));
const root = join(base, "root");
mkdirSync(join(root, "sub"), { recursive: true });
mkdirSync(join(base, "outside"));
symlinkSync(join(root, "sub"), join(root, "inner-link"));
afterAll(() => {
  setPinMode(systemMode);
  rmSync(base, { recursive: true, force: true });
});

test("a symlinked component is refused, even one pointing inside the root", async () => {
  await expect(PinnedDir.open(root, join(root, "inner-link"), false)).rejects.toThrow("not a directory inside the workspace root");
});

test("a directory outside the root is refused", async () => {
  await expect(PinnedDir.open(root, join(base, "outside"), false)).rejects.toThrow("outside the workspace root");
});

test("names resolve to the real path while it is still the opened directory", async () => {
  const dir = await PinnedDir.open(root, join(root, "sub"), false);
  try {
    expect(dir.path("file.txt")).toBe(join(root, "sub", "file.txt"));
    writeFileSync(dir.path("file.txt"), "inside\n");
    expect(readFileSync(join(root, "sub", "file.txt"), "utf8")).toBe("inside\n");
  } finally {
    await dir.close();
    rmSync(join(root, "sub", "file.txt"));
  }
});

test("a directory swapped for a symlink to outside after it was pinned is refused, nothing written outside", async () => {
  const dir = await PinnedDir.open(root, join(root, "sub"), false);
  try {
    renameSync(join(root, "sub"), join(root, "sub.real"));
    symlinkSync("../outside", join(root, "sub"));
    expect(() => dir.path("file.txt")).toThrow("changed while it was in use");
    expect(() => dir.self).toThrow("changed while it was in use");
    expect(existsSync(join(base, "outside", "file.txt"))).toBe(false);
  } finally {
    await dir.close();
    rmSync(join(root, "sub"));
    renameSync(join(root, "sub.real"), join(root, "sub"));
  }
});

test("a directory replaced by another real directory after it was pinned is refused", async () => {
  const dir = await PinnedDir.open(root, join(root, "sub"), false);
  try {
    renameSync(join(root, "sub"), join(root, "sub.real"));
    mkdirSync(join(root, "sub"));
    expect(() => dir.path("file.txt")).toThrow("changed while it was in use");
  } finally {
    await dir.close();
    rmSync(join(root, "sub"), { recursive: true });
    renameSync(join(root, "sub.real"), join(root, "sub"));
  }
});

test("with create, missing components are made", async () => {
  const dir = await PinnedDir.open(root, join(root, "a", "b", "c"), true);
  await dir.close();
  expect(existsSync(join(root, "a", "b", "c"))).toBe(true);
  expect(dir.real).toBe(join(root, "a", "b", "c"));
});

test("str_replace edits and creates files through the fallback", async () => {
  const editor = new StrReplaceTool({ root, maxFileBytes: 4096, maxReplyBytes: 50 * 1024, tempStaleMs: 60_000 });
  writeFileSync(join(root, "sub", "a.txt"), "one\ntwo\n");
  const edited = await editor.call({ path: "sub/a.txt", old_str: "two", new_str: "2" });
  expect(edited.isError).toBeUndefined();
  expect(readFileSync(join(root, "sub", "a.txt"), "utf8")).toBe("one\n2\n");
  const created = await editor.call({ path: "new/dir/b.txt", old_str: "", new_str: "fresh\n" });
  expect(created.isError).toBeUndefined();
  expect(readFileSync(join(root, "new", "dir", "b.txt"), "utf8")).toBe("fresh\n");
});
