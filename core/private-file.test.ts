import { afterAll, expect, test } from "bun:test";
import { chmodSync, closeSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPrivateFile } from "./private-file.ts";

const dir = mkdtempSync(join(tmpdir(), "tendril-private-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

function write(path: string, flags: "a" | "w", text: string): void {
  const fd = openPrivateFile(path, flags);
  writeSync(fd, text);
  closeSync(fd);
}

test("a new file is made 0600, whatever the umask allows", () => {
  const old = process.umask(0);
  try {
    write(join(dir, "new"), "w", "x");
  } finally {
    process.umask(old);
  }
  expect(modeOf(join(dir, "new"))).toBe("600");
});

test("an existing file with a wider mode is tightened to 0600; appending keeps, writing truncates", () => {
  const path = join(dir, "wide");
  writeFileSync(path, "old\n");
  chmodSync(path, 0o644);
  write(path, "a", "more\n");
  expect([modeOf(path), readFileSync(path, "utf8")]).toEqual(["600", "old\nmore\n"]);
  chmodSync(path, 0o666);
  write(path, "w", "anew\n");
  expect([modeOf(path), readFileSync(path, "utf8")]).toEqual(["600", "anew\n"]);
});

test("a narrower mode is left as it is; a path that cannot be opened throws", () => {
  const path = join(dir, "narrow");
  writeFileSync(path, "");
  chmodSync(path, 0o400);
  if (process.getuid?.() === 0) write(path, "a", "root may\n"); // root opens it anyway; the mode stays
  expect(modeOf(path)).toBe("400");
  expect(() => openPrivateFile(join(dir, "missing", "f"), "w")).toThrow(/ENOENT/);
});
