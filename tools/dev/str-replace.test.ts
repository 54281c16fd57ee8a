// Unit tests of str_replace: the one-match rule and its diagnostics, creation, line endings, modes,
// size cap, and the workspace rule with symlinks.
import { afterAll, expect, test } from "bun:test";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StrReplaceTool } from "./str-replace.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-edit-test-")));
const root = join(base, "root");
mkdirSync(root);
mkdirSync(join(base, "outside"));
writeFileSync(join(base, "outside", "secret.txt"), "secret\n");
symlinkSync(join(base, "outside"), join(root, "linkdir"));
symlinkSync(join(base, "outside", "secret.txt"), join(root, "link.txt"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const editor = new StrReplaceTool({ root, maxFileBytes: 4096, maxReplyBytes: 50 * 1024, tempStaleMs: 60_000 });
const file = (name: string, text: string) => {
  writeFileSync(join(root, name), text);
  return name;
};
const read = (name: string) => readFileSync(join(root, name), "utf8");

test("replaces the one match and answers with a unified diff", async () => {
  const p = file("a.ts", "const a = 1;\nconst b = 2;\nconst c = 3;\n");
  const r = await editor.call({ path: p, old_str: "const b = 2;", new_str: "const b = 20;" });
  expect(r.isError).toBeUndefined();
  expect(read(p)).toBe("const a = 1;\nconst b = 20;\nconst c = 3;\n");
  expect(r.text).toContain("--- a.ts");
  expect(r.text).toContain("-const b = 2;\n+const b = 20;");
});

test("absolute paths inside the root work", async () => {
  const p = file("abs.txt", "one\n");
  const r = await editor.call({ path: join(root, p), old_str: "one", new_str: "two" });
  expect(r.isError).toBeUndefined();
  expect(read(p)).toBe("two\n");
});

test("several matches: error with the count and line numbers, file untouched", async () => {
  const p = file("many.txt", "x = 1\ny = 2\nx = 1\nx = 1\n");
  const r = await editor.call({ path: p, old_str: "x = 1", new_str: "x = 9" });
  expect(r.isError).toBe(true);
  expect(r.text).toContain("matches 3 times");
  expect(r.text).toContain("lines 1, 3, 4");
  expect(read(p)).toBe("x = 1\ny = 2\nx = 1\nx = 1\n");
});

test("no match: error names the nearest line with its number", async () => {
  const p = file("near.py", "def alpha():\n    return 1\n\ndef beta(x, y):\n    return x + y\n");
  const r = await editor.call({ path: p, old_str: "def beta(x, z):\n    return x + z", new_str: "pass" });
  expect(r.isError).toBe(true);
  expect(r.text).toContain("not found");
  expect(r.text).toContain("line 4");
  expect(r.text).toContain("def beta(x, y):");
});

test("no match because of indentation: error says where it diverges and that only whitespace differs", async () => {
  const p = file("indent.py", "if x:\n    call()\n    other()\n");
  const r = await editor.call({ path: p, old_str: "if x:\n  call()", new_str: "if y:\n  call()" });
  expect(r.isError).toBe(true);
  expect(r.text).toContain("old_str line 2 differs from file line 2 (they differ only in whitespace)");
});

test("CRLF files keep CRLF when old_str and new_str use \\n", async () => {
  const p = file("win.txt", "first\r\nsecond\r\nthird\r\n");
  const r = await editor.call({ path: p, old_str: "first\nsecond\n", new_str: "first\nmiddle\nsecond\n" });
  expect(r.isError).toBeUndefined();
  expect(read(p)).toBe("first\r\nmiddle\r\nsecond\r\nthird\r\n");
});

test("the file mode is kept", async () => {
  const p = file("run.sh", "#!/bin/sh\necho hi\n");
  chmodSync(join(root, p), 0o754);
  await editor.call({ path: p, old_str: "echo hi", new_str: "echo bye" });
  expect(statSync(join(root, p)).mode & 0o7777).toBe(0o754);
  expect(read(p)).toBe("#!/bin/sh\necho bye\n");
  expect(readdirSync(root).filter((n) => n.includes(".tmp"))).toEqual([]);
});

test("empty old_str creates a missing file, parent directories included", async () => {
  const r = await editor.call({ path: "new/deep/file.md", old_str: "", new_str: "# Title\n" });
  expect(r.isError).toBeUndefined();
  expect(r.text).toContain("created new/deep/file.md");
  expect(read("new/deep/file.md")).toBe("# Title\n");
});

test("empty old_str on an existing non-empty file is an error; on an empty file it fills it", async () => {
  const p = file("full.txt", "content\n");
  const r = await editor.call({ path: p, old_str: "", new_str: "other\n" });
  expect(r.isError).toBe(true);
  expect(r.text).toContain("already has");
  expect(read(p)).toBe("content\n");
  const e = file("empty.txt", "");
  expect((await editor.call({ path: e, old_str: "", new_str: "filled\n" })).isError).toBeUndefined();
  expect(read(e)).toBe("filled\n");
});

test("a missing file with a non-empty old_str says how to create it", async () => {
  const r = await editor.call({ path: "nope.txt", old_str: "a", new_str: "b" });
  expect(r.isError).toBe(true);
  expect(r.text).toContain("empty old_str");
});

test("paths escaping the root are refused: '..', absolute, symlinked file, symlinked parent", async () => {
  const tries = [
    { path: "../outside/secret.txt", old_str: "secret", new_str: "owned" },
    { path: join(base, "outside", "secret.txt"), old_str: "secret", new_str: "owned" },
    { path: "link.txt", old_str: "secret", new_str: "owned" },
    { path: "linkdir/secret.txt", old_str: "secret", new_str: "owned" },
    { path: "linkdir/created.txt", old_str: "", new_str: "owned" },
    { path: "linkdir/sub/created.txt", old_str: "", new_str: "owned" },
  ];
  for (const args of tries) {
    const r = await editor.call(args);
    expect(r.isError).toBe(true);
    expect(r.text).toContain("outside the workspace root");
  }
  expect(readFileSync(join(base, "outside", "secret.txt"), "utf8")).toBe("secret\n");
  expect(readdirSync(join(base, "outside"))).toEqual(["secret.txt"]);
});

test("files over MAX_EDIT_FILE_BYTES are refused", async () => {
  const p = file("big.txt", "y".repeat(5000));
  const r = await editor.call({ path: p, old_str: "yy", new_str: "z" });
  expect(r.isError).toBe(true);
  expect(r.text).toContain("MAX_EDIT_FILE_BYTES");
});

test("binary files and directories are refused", async () => {
  writeFileSync(join(root, "bin.dat"), Buffer.from([1, 0, 2, 3]));
  expect((await editor.call({ path: "bin.dat", old_str: "\u0001", new_str: "x" })).text).toContain("binary");
  mkdirSync(join(root, "dir"));
  expect((await editor.call({ path: "dir", old_str: "a", new_str: "b" })).text).toContain("directory");
});

test("parallel edits of one file are all applied", async () => {
  const p = file("par.txt", "a1\na2\na3\na4\n");
  const rs = await Promise.all([1, 2, 3, 4].map((i) => editor.call({ path: p, old_str: `a${i}`, new_str: `b${i}` })));
  expect(rs.every((r) => !r.isError)).toBe(true);
  expect(read(p)).toBe("b1\nb2\nb3\nb4\n");
});

test("a dangling symlink as the target of a create is refused, not replaced", async () => {
  symlinkSync(join(base, "outside", "planted.txt"), join(root, "dangling.txt"));
  const r = await editor.call({ path: "dangling.txt", old_str: "", new_str: "payload\n" });
  expect(r.isError).toBe(true);
  expect(r.text).toContain("symlink");
  expect(lstatSync(join(root, "dangling.txt")).isSymbolicLink()).toBe(true);
  expect(readdirSync(join(base, "outside"))).toEqual(["secret.txt"]);
});

test("an edit sweeps stale temp files of interrupted edits in its directory, and only those", async () => {
  mkdirSync(join(root, "swept"));
  mkdirSync(join(root, "other"));
  const old = Date.now() / 1000 - 120;
  const stale = join(root, "swept", ".f.txt.tendril-99999-deadbeef.tmp");
  const fresh = join(root, "swept", ".f.txt.tendril-99999-0badf00d.tmp");
  const elsewhere = join(root, "other", ".g.txt.tendril-99999-deadbeef.tmp");
  const lookalike = join(root, "swept", ".f.txt.tmp");
  for (const p of [stale, fresh, elsewhere, lookalike]) writeFileSync(p, "partial");
  for (const p of [stale, elsewhere, lookalike]) utimesSync(p, old, old);
  const r = await editor.call({ path: "swept/f.txt", old_str: "", new_str: "f\n" });
  expect(r.isError).toBeUndefined();
  expect(readdirSync(join(root, "swept")).sort()).toEqual([".f.txt.tendril-99999-0badf00d.tmp", ".f.txt.tmp", "f.txt"]);
  expect(readdirSync(join(root, "other"))).toEqual([".g.txt.tendril-99999-deadbeef.tmp"]);
});

test("a create through a dangling directory symlink is refused and makes nothing outside", async () => {
  symlinkSync(join(base, "outside", "missing-dir"), join(root, "dangling-dir"));
  const r = await editor.call({ path: "dangling-dir/x.txt", old_str: "", new_str: "payload\n" });
  expect(r.isError).toBe(true);
  expect(readdirSync(join(base, "outside"))).toEqual(["secret.txt"]);
});

test("regression: git's own files are never written (a planted hook or core.fsmonitor would run at the user's next git command, sandbox or not); .github is an ordinary folder", async () => {
  mkdirSync(join(root, ".git", "hooks"), { recursive: true });
  writeFileSync(join(root, ".git", "config"), "[core]\n\tbare = false\n");
  mkdirSync(join(root, "vendor", "lib"), { recursive: true });
  writeFileSync(join(root, "vendor", "lib", ".git"), "gitdir: ../../.git/modules/lib\n");
  const attempts = [
    { path: ".git/config", old_str: "bare = false", new_str: "bare = false\n\tfsmonitor = touch /tmp/pwned" },
    { path: ".git/hooks/pre-commit", old_str: "", new_str: "#!/bin/sh\ntouch /tmp/pwned\n" },
    { path: "vendor/lib/.git", old_str: "gitdir: ../../.git/modules/lib", new_str: "gitdir: /tmp/evil" },
    { path: ".GIT/hooks/post-checkout", old_str: "", new_str: "x" },
  ];
  for (const a of attempts) {
    const r = await editor.call(a);
    expect({ path: a.path, isError: r.isError, said: r.text.includes("git's own files") }).toEqual({ path: a.path, isError: true, said: true });
  }
  expect(readFileSync(join(root, ".git", "config"), "utf8")).toBe("[core]\n\tbare = false\n");
  expect(readdirSync(join(root, ".git", "hooks"))).toEqual([]);
  expect(read("vendor/lib/.git")).toBe("gitdir: ../../.git/modules/lib\n");
  const workflow = await editor.call({ path: ".github/workflows/ci.yml", old_str: "", new_str: "on: push\n" });
  expect(workflow.isError).toBeUndefined();
});

test("regression: a hook created in the folder core.hooksPath names (husky's .husky/_) ran at the user's next commit; refused, the project's other files stay editable", async () => {
  mkdirSync(join(root, "husky-proj", ".git", "hooks"), { recursive: true });
  writeFileSync(join(root, "husky-proj", ".git", "config"), "[core]\n\thooksPath = .husky/_\n");
  mkdirSync(join(root, "husky-proj", ".husky", "_"), { recursive: true });
  const hook = await editor.call({ path: "husky-proj/.husky/_/pre-commit", old_str: "", new_str: "#!/bin/sh\ntouch /tmp/pwned\n" });
  expect({ isError: hook.isError, said: hook.text.includes("husky-proj/.husky/_, the folder whose files git runs as hooks") }).toEqual({ isError: true, said: true });
  expect(readdirSync(join(root, "husky-proj", ".husky", "_"))).toEqual([]);
  expect((await editor.call({ path: "husky-proj/.husky/notes.md", old_str: "", new_str: "x\n" })).isError).toBeUndefined();
  expect((await editor.call({ path: "husky-proj/src/a.ts", old_str: "", new_str: "x\n" })).isError).toBeUndefined();
});

test("regression: four creates made src/ a git directory by shape (HEAD, objects/, refs/, a config with core.worktree and core.fsmonitor); the one that completes the shape and any file inside such a folder are refused", async () => {
  const steps = [
    { path: "shaped/objects/info/x", old_str: "", new_str: "x" },
    { path: "shaped/refs/heads/main", old_str: "", new_str: "0000000000000000000000000000000000000000\n" },
  ];
  for (const s of steps) expect((await editor.call(s)).isError).toBeUndefined();
  const head = await editor.call({ path: "shaped/HEAD", old_str: "", new_str: "ref: refs/heads/main\n" });
  expect({ isError: head.isError, said: head.text.includes("git's own files") }).toEqual({ isError: true, said: true });
  mkdirSync(join(root, "bare", "objects"), { recursive: true });
  mkdirSync(join(root, "bare", "refs"), { recursive: true });
  writeFileSync(join(root, "bare", "HEAD"), "ref: refs/heads/main\n");
  const config = await editor.call({ path: "bare/config", old_str: "", new_str: "[core]\n\tworktree = ..\n" });
  expect({ isError: config.isError, said: config.text.includes("git's own files") }).toEqual({ isError: true, said: true });
  expect(readdirSync(join(root, "shaped")).sort()).toEqual(["objects", "refs"]);
});

test("regression: a file written as a git config that runs a program (an include.path target) is refused; an ordinary INI file and a config's existing programs are not", async () => {
  const planted = await editor.call({ path: "dot.gitconfig", old_str: "", new_str: "[core]\n\tfsmonitor = touch /tmp/pwned\n" });
  expect({ isError: planted.isError, said: planted.text.includes("core.fsmonitor") }).toEqual({ isError: true, said: true });
  expect((await editor.call({ path: "setup.cfg", old_str: "", new_str: "[metadata]\nname = x\n" })).isError).toBeUndefined();
  const p = file("aliases.gitconfig", "[alias]\n\tst = !git status\n");
  expect((await editor.call({ path: p, old_str: "[alias]", new_str: "# mine\n[alias]" })).isError).toBeUndefined();
});
