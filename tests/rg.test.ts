// The `rg` shim (a link named `rg` to the binary). Its built-in search must print what ripgrep prints on a
// fixture (one table of cases, run in this process: stdout, exit code, stderr's first word; ripgrep is
// required in CI), and the binary what the in-process run prints; the refusals, the output cap and the
// hand-over to a real ripgrep are checked through the binary regardless.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, runBin } from "./binary.ts";
import { both, bothInMemory, builtinInMemory, realRg, shimEnv, untimed, writeTree } from "./rg-compare.ts";

let base: string;
let root: string;
let shimDir: string;
let home: string;

function write(rel: string, content: string | Buffer): void {
  const path = join(root, rel);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
}

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "tendril-rg-"));
  root = join(base, "repo");
  home = join(base, "home");
  shimDir = join(base, "shims");
  mkdirSync(home);
  mkdirSync(shimDir);
  symlinkSync(BIN, join(shimDir, "rg"));
  mkdirSync(join(root, ".git", "info"), { recursive: true });
  write(".git/info/exclude", "excluded.txt\n");
  write(".git/HEAD", "foo in git\n");
  write(".gitignore", "build/\n*.log\n!keep.log\n/anchored.txt\n");
  write(".ignore", "dotignored.txt\n");
  write("anchored.txt", "foo anchored at root\n");
  write("sub/anchored.txt", "foo anchored below\n");
  write("sub/.gitignore", "*.tmp\n!important.tmp\n");
  write("sub/x.tmp", "foo tmp\n");
  write("sub/important.tmp", "foo important\n");
  write("sub/deeper/notes.md", "# Notes\nfoo in notes\nFoo upper\nfoobar\n");
  write("build/out.txt", "foo built\n");
  write("app.log", "foo log\n");
  write("keep.log", "foo kept log\n");
  write("excluded.txt", "foo excluded\n");
  write("dotignored.txt", "foo dotignored\n");
  write(".hidden.txt", "foo hidden secret\n");
  write(".hdir/inner.txt", "foo in hidden dir\n");
  write(".env", "SECRET=foo\n");
  write("bin.dat", Buffer.from("foo\0binary foo\n"));
  write("uni.txt", "Grüße aus Köln\nnaïve café\nSTRASSE straße\n日本語 foo テキスト\nemoji 🎉 foo\n");
  write("crlf.txt", "one\r\nfoo two\r\nthree\r\n");
  write("noeol.txt", "first\nlast foo");
  write("empty.txt", "");
  write("src/main.rs", "fn main() {\n    let foo = 1;\n    println!(\"{}\", foo);\n}\n\nfn helper_2(x: u32) {}\n");
  write("src/lib.ts", "export const foo = 42;\n// a.b literal\nexport function bar() { return foo; }\n");
  write("src/deep/a/b/c.py", "def foo():\n    return 'bar'\n\n\n\nfoo()\n");
  write("docs/read me.md", "Some foo\nlines\nmore\nlines\nfoo again\nand\nthe\nend\nfoo\n");
  write("pats.txt", "println\nlet\n");
  write("cfg/extra.ignore", "*.py\ncount.txt\n");
  write("long.txt", `short foo\n${"x".repeat(60)} foo ${"y".repeat(40)} foo\nctx\n`);
  write("utf16.txt", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("hello foo\nbar\nfoo end\n", "utf16le")]));
  write("linked/real/x.txt", "foo linked\n");
  symlinkSync("real", join(root, "linked", "to-real"));
  symlinkSync("nowhere", join(root, "linked", "broken"));
  symlinkSync("..", join(root, "linked", "real", "loop"));
  symlinkSync("real/x.txt", join(root, "linked", "file-link"));
  write("docs/count.txt", Array.from({ length: 30 }, (_, i) => `line ${i} ${i % 3 === 0 ? "foo" : "bar"}`).join("\n") + "\n");
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: `${shimDir}:/usr/bin:/bin`, HOME: home, XDG_CONFIG_HOME: home, TENDRIL_RG_BUILTIN: "1", ...extra };
}

function shim(args: string[], extra: Record<string, string> = {}, cwd = root) {
  return runBin(args, { bin: join(shimDir, "rg"), cwd, env: env(extra), stdio: ["ignore", "pipe", "pipe"] });
}


const CASES: string[][] = [
  ["foo"], ["-n", "foo"], ["-i", "grüße"], ["-S", "foo"], ["-S", "Foo"], ["-s", "FOO"], ["-F", "a.b"], ["-F", "(x"],
  ["-w", "foo"], ["-l", "foo"], ["-c", "foo"], ["--count", "--ignore-case", "FOO"], ["-g", "*.rs", "fn"],
  ["-g", "!*.md", "foo"], ["--glob=*.{rs,py}", "foo"], ["-g", "src/**", "-l", "foo"], ["-t", "rust", "fn"],
  ["-t", "py", "-t", "md", "foo"], ["--type=ts", "-n", "foo"], ["-C", "1", "-n", "foo"], ["-A", "2", "foo"],
  ["-B1", "-n", "foo"], ["--context=2", "foo", "docs"], ["-e", "foo", "-e", "println"], ["--regexp=let", "-n"],
  ["--files"], ["--files", "--hidden", "-g", "!.git"], ["--no-ignore", "--files"], ["--files", "sub"],
  ["-m", "1", "-n", "foo"], ["--max-count=2", "-c", "foo"], ["-n", "foo", "sub"], ["-n", "foo", "./sub/"],
  ["foo", "src/main.rs"], ["-n", "foo", "src/main.rs"], ["-c", "foo", "src/main.rs", "docs"], ["-n", "(?i)FOO"],
  ["-n", "\\bfoo\\w*"], ["-n", "^foo"], ["-n", "foo$"], ["-n", "caf."], ["-n", "[[:digit:]]+"], ["-n", "é"],
  ["-n", "\\p{Han}+"], ["-n", "fn \\w+_\\d+\\("], ["-ni", "strasse"], ["--hidden", "-n", "secret", "-g", "!.git"],
  ["-n", "foo", "."], ["-l", "-w", "naïve"], ["-N", "--no-heading", "--color", "never", "foo"],
  ["--line-number", "--fixed-strings", "--word-regexp", "foo"], ["--files-with-matches", "--smart-case", "foo"],
  ["-lu", "foo"], ["-uu", "-l", "foo", "-g", "!.git"], ["nomatchanywhere"], ["-n", "foo", "crlf.txt", "noeol.txt"],
  ["-n", "two\\s*$", "crlf.txt"], ["-v", "-n", "foo", "src/main.rs"], ["-o", "-n", "fo+"], ["foo", "bin.dat"],
  ["-n", "", "noeol.txt", "empty.txt"], ["-n", "foo\\sagain"], ["-n", "lines\\smore"], ["-A1", "-m1", "-n", "foo", "docs/count.txt"],
  ["-n", "-C1", "foo", "docs/count.txt", "src/lib.ts"], ["-H", "foo", "src/lib.ts"], ["-I", "-n", "foo", "src"],
  ["--max-depth", "1", "--files"], ["-T", "md", "-l", "foo"], ["--files-without-match", "println"], ["-n", "\\w+_\\d+\\("], ["-o", "\\w+o"],
  ["-n", ".*again"], ["-o", "-n", "[a-z]+\\s+foo"], ["-c", "\\S*oo"],
];

/** The flags issue 15 asked for, alone and combined; `--sort path` or one file where the order matters. */
const NEW_CASES: string[][] = [
  ["-c", "-o", "foo"], ["-c", "-o", "foo", "docs/read me.md"], ["--count-matches", "foo"], ["-uuu", "-l", "foo", "-g", "!.git"],
  ["-uuu", "foo", "-g", "!.git"], ["--binary", "foo"], ["-a", "-n", "foo", "bin.dat"], ["--text", "-c", "binary"],
  ["--files-without-match", "foo"], ["--files-without-match", "zzz"], ["--files-without-match", "foo", "src/main.rs"],
  ["--hidden", "--files"], ["--hidden", "-l", "foo"], ["--no-mmap", "-n", "foo"], ["--mmap", "-c", "foo"], ["-j", "1", "-n", "foo"],
  ["-j2", "-l", "foo"], ["--threads=4", "-c", "foo"], ["--sort", "path", "-n", "foo"], ["--sort=path", "--files"],
  ["--sortr", "path", "-l", "foo"], ["--sortr=path", "--files"], ["--sort", "none", "-c", "foo"], ["--passthru", "-n", "foo", "src/main.rs"],
  ["--passthru", "foo", "docs/read me.md"], ["--passthrough", "-n", "let", "src/main.rs"], ["-f", "pats.txt", "-n"], ["-f", "pats.txt", "src"],
  ["--file=pats.txt", "-e", "def", "src"], ["--ignore-file", "cfg/extra.ignore", "-l", "foo"], ["--ignore-file=cfg/extra.ignore", "--files"],
  ["-r", "X", "foo", "src/lib.ts"], ["--replace=[$0]", "-n", "fo+", "src/lib.ts"], ["-r", "$1-$1", "(f)oo", "src"],
  ["-r", "${w}!", "-n", "(?P<w>\\w+)_2", "src/main.rs"], ["-o", "-r", "<$1>", "f(o+)", "src"], ["-r", "$$", "foo", "src/lib.ts"],
  ["--column", "-n", "foo", "src"], ["--column", "foo", "src/lib.ts"], ["--column", "-o", "fo", "src/lib.ts"], ["--null", "-l", "foo"],
  ["--null", "-n", "foo", "src"], ["-0", "--files", "src"], ["-0", "-c", "foo", "src"], ["--max-filesize", "20", "-l", "foo"],
  ["--max-filesize=1K", "--files"], ["--max-filesize", "0", "foo"], ["-M", "20", "foo", "long.txt"], ["--max-columns=20", "-C1", "foo", "long.txt"],
  ["-M", "20", "--max-columns-preview", "foo", "long.txt"], ["--stats", "foo", "src/lib.ts"], ["--stats", "-c", "zzz"],
  ["--field-context-separator", "@", "-C1", "-n", "foo", "src/main.rs"], ["--field-match-separator=##", "-n", "foo", "src"],
  ["--context-separator", "***", "-C1", "foo", "docs/read me.md"], ["--no-context-separator", "-A1", "foo", "docs/read me.md"],
  ["--vimgrep", "foo", "src"], ["--vimgrep", "fo", "docs/read me.md"], ["-c", "--include-zero", "println"], ["--include-zero", "-c", "zzz", "src"],
  ["--crlf", "-n", "two$", "crlf.txt"], ["--crlf", "-c", "e$"], ["-x", "foo"], ["--line-regexp", "-n", "lines", "docs/read me.md"],
  ["-x", "-c", "foo\\S*"], ["-U", "-n", "foo\\nlines", "docs/read me.md"], ["--multiline", "-c", "fn main\\(\\) \\{\\n\\s+let"],
  ["-U", "--multiline-dotall", "-n", "main.*println", "src/main.rs"], ["-U", "-o", "again\\nand", "docs/read me.md"], ["-U", "-l", "\\}\\n\\nfn"], ["-U", "-l", "}\n\nfn"],
  ["-n", "foo", "utf16.txt"], ["-c", "foo", "utf16.txt"], ["--path-separator", "\\", "-l", "foo", "src"], ["--path-separator=#", "--files", "src"],
  ["--no-config", "-n", "foo", "src"], ["-m1", "--passthru", "foo", "docs/read me.md"], ["-v", "-c", "foo", "src"], ["-w", "-x", "foo"],
  ["-x", "-w", "-c", "foo"], ["-F", "-x", "first", "noeol.txt"], ["-i", "-r", "Z", "FOO", "uni.txt"], ["-A1", "--column", "-n", "let", "src/main.rs"],
  ["-l", "--sort", "path", "foo"], ["--sort", "path", "-c", "foo"], ["-q", "foo"], ["-q", "zzz"], ["--json", "-e", "zzz"],
  ["--no-ignore-vcs", "--files"], ["--no-ignore-dot", "-l", "foo"], ["--no-ignore-exclude", "--files"], ["--no-ignore-parent", "--files", "sub"],
  ["--no-ignore-files", "--ignore-file", "cfg/extra.ignore", "--files"], ["--no-ignore-global", "--no-ignore-messages", "-l", "foo"],
  ["--iglob", "*.RS", "fn"], ["--glob-case-insensitive", "-g", "*.MD", "-l", "foo"], ["--iglob=!*.PY", "-l", "foo"],
  ["--trim", "-n", "foo", "src"], ["--trim", "-C1", "let", "src/main.rs"], ["--trim", "-o", "fo+", "src/main.rs"],
  ["--type-add", "web:*.{md,ts}", "-t", "web", "-l", "foo"], ["--type-add=src:include:rust,py", "-tsrc", "foo"],
  ["--type-clear", "md", "--type-add", "md:*.txt", "-t", "md", "-l", "foo"], ["--type-add", "bad", "foo"],
  ["-L", "foo", "linked"], ["-L", "--files", "linked"], ["--follow", "-c", "foo", "linked"], ["foo", "linked"], ["-L", "-l", "linked"],
  ["--json", "foo", "src"], ["--json", "-C1", "foo", "docs/read me.md"], ["--json", "-n", "foo", "uni.txt", "crlf.txt"],
  ["-e", "("], ["-t", "nope", "x"], ["-f", "nofile.txt"], ["foo", "nonexist", "src/lib.ts"], ["--stats", "-q", "foo", "src"],
];

describe.skipIf(!realRg)("built-in rg equals ripgrep", () => {
  for (const args of [...CASES, ...NEW_CASES]) {
    test(`rg ${args.join(" ")}`, async () => {
      const { ours, theirs } = await bothInMemory(env(), args, root);
      expect(ours).toEqual(theirs);
    });
  }
  test("every case ran", () => expect(CASES.length + NEW_CASES.length).toBeGreaterThan(150));
  // The cases above run the built-in in this process; through the binary's `rg` link it prints the same.
  test("through the shim link, the binary prints what the in-process run prints, exit codes and stderr included", async () => {
    for (const args of [["-n", "foo"], ["--files"], ["-e", "("], ["-c", "foo", "src/main.rs", "docs"], ["--json", "foo", "src"], ["foo", "nonexist", "src/lib.ts"]]) {
      const bin = shim(args);
      const mem = await builtinInMemory(env(), args, root);
      expect([bin.code, untimed(bin.stdout).split("\n").sort(), bin.stderr]).toEqual([mem.code, untimed(mem.stdout).split("\n").sort(), mem.stderr]);
      const { ours, theirs } = both(join(shimDir, "rg"), env(), args, root);
      expect(ours).toEqual(theirs);
    }
  });
});

/**
 * A tree for the cases below, without `.git` anywhere: `hay` is 90 KB of text with one NUL byte past
 * ripgrep's first 64 KiB read and matches of `mark` before its first read ends, in the read that brings
 * the NUL, and after it; the others are small binary, NUL-separated, CRLF and sized files.
 */
function binaryTree(dir: string): void {
  const filler = (i: number) => `filler line ${i} with some words to pad the file out`;
  const lines = ["The first line has a mark"];
  const until = (bytes: number) => {
    while (lines.join("\n").length < bytes) lines.push(filler(lines.length + 1));
  };
  until(60_000);
  lines.push("an early mark in the first read");
  until(66_000);
  lines.push("a late mark in the read that brings the nul");
  until(77_000);
  lines.push("zzz\0 the nul byte", "after the nul, a mark");
  until(90_000);
  const files: Record<string, string | Buffer> = {
    hay: lines.join("\n") + "\n",
    "small.bin": "foo\0bar\nfoo\0baz\n",
    b2: "a\nfoo\0bar\nfoo\n",
    nd: "foo\0bar\0\0\0baz\0",
    crlf: "one\r\nfoo two\r\nthree\r\n",
    "uni.txt": "Grüße aus Köln\nnaïve café wörld\n",
    prose:
      "For the Doctors of this town, as opposed to the others\nwho must always be lucky in what they do\n" +
      "but a doctor has to have it taken out for him and dusted,\nand exhibited clearly, with a label attached.\n" +
      "café crème brûlée, déjà vu, naïve résumé éclair\n",
    s40: "x".repeat(39) + "\n", s60: "x".repeat(59) + "\n", s3048: "x".repeat(3047) + "\n", s4100: "x".repeat(4099) + "\n",
    "nogit/.gitignore": "ignored.txt\n", "nogit/ignored.txt": "x\n", "nogit/kept.txt": "x\n",
    "globs/[abc": "x\n", "globs/test": "x\n",
    "first.bin": "\nab\nmark\0z\n", em: "a\n\nb\n\n",
    "ign/all": "s*\n", "ign/but-s40": "!s40\n", "ign/rooted": "/kept.txt\nnogit/ignored.txt\n",
  };
  writeTree(dir, files);
}

/** The behaviours of issue 23 (binary files, --null-data, -b, --max-filesize, --no-require-git, -r -o on CRLF, --vimgrep -N, -M previews, -g errors). */
const BINARY_CASES: string[][] = [
  ["--no-mmap", "-n", "mark", "-g", "hay"], ["--no-mmap", "-n", "mark", "hay"], ["--no-mmap", "-n", "--binary", "mark", "-g", "hay"],
  ["--no-mmap", "-n", "--text", "mark", "-g", "hay"], ["--no-mmap", "-l", "mark", "-g", "hay"], ["--no-mmap", "-q", "mark", "-g", "hay"],
  ["--no-mmap", "-c", "mark", "-g", "hay"], ["--no-mmap", "-c", "--binary", "mark", "-g", "hay"], ["--no-mmap", "-c", "mark", "hay"],
  ["--no-mmap", "-n", "after the nul", "-g", "hay"], ["--no-mmap", "-n", "after the nul", "hay"], ["--no-mmap", "--binary", "-n", "after the nul", "-g", "hay"],
  ["--no-mmap", "-n", "late mark", "hay"], ["--no-mmap", "-n", "late mark", "-g", "hay"], ["--no-mmap", "-n", "-m1", "mark", "hay"],
  ["--no-mmap", "--files-without-match", "mark", "-g", "hay"], ["--no-mmap", "--files-without-match", "late mark", "-g", "hay"],
  ["--no-mmap", "-C1", "-n", "mark", "hay"], ["--no-mmap", "-A2", "early mark", "hay"], ["--no-mmap", "-b", "mark", "hay"],
  ["-n", "mark", "hay"], ["-n", "mark|zzz", "hay"], ["--mmap", "-n", "mark", "-g", "hay"], ["--mmap", "--binary", "-n", "mark|zzz", "-g", "hay"],
  ["--mmap", "-n", "zzz|after", "-g", "hay"], ["--mmap", "-n", "mark|zzz", "-g", "hay"], ["--mmap", "-c", "mark|zzz", "-g", "hay"], ["-A1", "early mark", "hay"],
  ["-B1", "foo", "b2"], ["--no-mmap", "-B1", "foo", "b2"], ["-A1", "-n", "a", "b2"], ["-c", "foo", "small.bin"], ["--no-mmap", "-c", "foo", "small.bin"],
  ["^bar", "small.bin"], ["--no-mmap", "^bar", "small.bin"], ["--mmap", "foo", "small.bin"], ["--mmap", "foo", "-gsmall.bin"], ["--no-mmap", "foo", "-gsmall.bin"],
  ["-a", "--mmap", "foo", "small.bin"], ["-a", "--no-mmap", "foo", "small.bin"], ["-c", "--mmap", "foo"], ["--binary", "--mmap", "-c", "foo"], ["--binary", "-c", "foo"],
  ["--null-data", ".+", "nd"], ["--null-data", "-n", "a", "nd"], ["--null-data", "-c", "a", "nd"], ["--null-data", "-l", "a", "nd"], ["--null-data", "-o", "ba."],
  ["--null-data", "foo", "small.bin"], ["--null", "-l", "foo"], ["--null", "-c", "foo"], ["-0", "-n", "o", "crlf", "uni.txt"],
  ["-b", "-o", "o", "crlf"], ["-b", "o", "crlf"], ["-b", "-n", "--column", "o", "crlf"], ["--byte-offset", "-o", "w\\w+", "uni.txt"], ["-b", "--vimgrep", "é", "prose"],
  ["--max-filesize", "50", "--files"], ["--max-filesize", "4K", "--files"], ["--max-filesize", "45k", "x"], ["--max-filesize", "44444444444444444444", "x"],
  ["--max-filesize", "34359738368G", "--files"], ["--max-filesize=1M", "--files"], ["--max-filesize", "", "x"], ["--max-filesize", "18014398509481983K", "x"],
  ["--sort", "path", "--files", "nogit"], ["--sort", "path", "--files", "--no-require-git", "nogit"],
  ["--sort", "path", "--files", "--no-require-git", "--require-git", "nogit"], ["--no-require-git", "-l", "x", "nogit"],
  ["-r", "X", "-o", "o\\s*", "crlf"], ["--crlf", "-o", "-r", "[$0]", "\\w+$", "crlf"], ["-o", "-r", "$0", "e\\r?$", "crlf"], ["-o", "-r", "<$1>", "(\\w+)\\s", "crlf"],
  ["--vimgrep", "-N", "o", "crlf"], ["--vimgrep", "-N", "--no-column", "o", "crlf"], ["--vimgrep", "--no-column", "o", "crlf"],
  ["-M46", "--max-columns-preview", "exhibited|dusted|has to have it", "prose"], ["-M43", "--max-columns-preview", "-rxxx", "exhibited|dusted|has to have it", "prose"],
  ["-M43", "--max-columns-preview", "--column", "exhibited|dusted|has to", "prose"], ["-M30", "--max-columns-preview", "-C1", "dusted", "prose"],
  ["-M20", "--max-columns-preview", "-o", "exhibited.*", "prose"], ["-M20", "-o", "exhibited.*", "prose"], ["-M20", "-r", "x", "a", "prose"],
  ["-M12", "--max-columns-preview", "é", "prose"], ["-M20", "--vimgrep", "--max-columns-preview", "a", "prose"],
  ["-g", "[abc", "x"], ["--files", "-g", "[abc"], ["-g", "!a[", "x"], ["-g", "a{b", "x"], ["-g", "{a,{b}}", "x"], ["-g", "[z-a]", "x"],
  ["-g", "a\\", "x"], ["--sort", "path", "-g", "[]]", "--files"], ["-g", "[!]", "x"], ["--iglob", "**/[a", "x"],
  // Found by scripts/rg-suite.ts: a later --ignore-file wins, its rules anchor where ripgrep anchors them, an
  // unreadable one is named; a bad size is reported after a missing pattern; -U anchors and --vimgrep.
  ["--ignore-file", "ign/all", "--ignore-file", "ign/but-s40", "--files"], ["--ignore-file", "ign/rooted", "--files", "nogit"],
  ["--ignore-file", "ign/rooted", "--files"], ["--ignore-file", "nogit", "x"], ["--ignore-file", "no-such-file", "-l", "x"],
  ["--max-filesize", "45k"], ["--max-filesize", "45k", "x"], ["-U", "\\Afoo", "small.bin"], ["-U", "-c", "(?-m)^filler", "hay"],
  ["-c", "(?-m)^filler", "hay"], ["-U", "--vimgrep", "Doctors.*\\n.*must"], ["-U", "-n", "\\Aan", "prose"],
  // Found by random binary files: ripgrep's first read is 3 bytes (a byte-order mark's), so a short first
  // line is searched before the NUL is seen; -m can end a search first; -q makes --files-without-match a
  // match's status; a binary message counts as output before a later context group; empty matches print.
  ["-n", "^$|ab", "-g", "first.bin"], ["-n", "mark", "-g", "first.bin"], ["-c", "-m1", "^$", "-g", "first.bin"], ["-c", "-m1", "ab", "-g", "first.bin"],
  ["-q", "--files-without-match", "foo", "small.bin"], ["-q", "--files-without-match", "zzz", "prose"], ["--sort", "path", "-A1", "a", "small.bin", "b2", "crlf"],
  ["-n", "-o", "^$", "em"], ["-o", "x*", "em"], ["-r", "X", "x*", "em"], ["--count-matches", "x*", "em"], ["--column", "^$", "em"], ["--vimgrep", "^$", "em"],
  ["-o", "b|x*", "em"], ["--passthru", "zzz", "-g", "first.bin"], ["--passthru", "-n", "ab", "-g", "first.bin"], ["--passthru", "-n", "early mark", "hay"],
  ["--passthru", "--no-mmap", "-n", "mark", "hay"], ["--passthru", "-n", "--mmap", "zzz", "-g", "hay"], ["--passthru", "-n", "foo", "b2"],
  // -U: line by line unless a pattern may match a newline, adjacent lines' matches one block; a match ends
  // at its line's end without -U; a newline needs -U.
  ["-U", "-c", "a\\s", "prose"], ["-U", "-c", "a", "prose"], ["-U", "-n", "--column", "d,\\n|label", "prose"], ["-U", "-m1", "-n", "o\\s", "prose"],
  ["-U", "-n", "mark", "--no-mmap", "-g", "hay"], ["-U", "-n", "mark\\s", "-g", "hay"], ["-o", "the\\s+", "prose"], ["--count-matches", "\\s+", "prose"],
  ["-U", "-n", "Doctors\\p{Any}+?must", "prose"], ["-U", "-c", "\\S+", "prose"], ["-U", "-c", "\\W+", "prose"], ["a\\nb", "prose"], ["-F", "a\nb", "prose"], ["-e", "x", "-e", "[^\\n]\\n", "prose"], ["-c", "[^\\n]x", "prose"],
];

/**
 * The same through standard input (never memory-mapped). A pipe's reads past the first vary in size with
 * timing, so the cases print nothing that depends on them.
 */
const STDIN_CASES: [string[], string][] = [
  [["--no-mmap", "-n", "first line|after the nul"], "hay"], [["-n", "after the nul"], "hay"], [["-c", "mark"], "hay"], [["foo"], "small.bin"],
  [["--null-data", "a"], "nd"],
];

/** ripgrep prints all of `hay` under --passthru: the shim's output cap is lifted for these cases. */
const UNCAPPED = { TENDRIL_SHIM_OUTPUT_LINES: "1000000", TENDRIL_SHIM_OUTPUT_BYTES: "100000000" };

describe.skipIf(!realRg)("built-in rg equals ripgrep on binary files and issue 23's flags", () => {
  let dir: string;
  let shimPath: string;
  let shimEnvFor: (extra?: Record<string, string>) => NodeJS.ProcessEnv;
  beforeAll(() => {
    const top = mkdtempSync(join(tmpdir(), "tendril-rg-bin-"));
    dir = join(top, "tree");
    binaryTree(dir);
    ({ shim: shimPath, env: shimEnvFor } = shimEnv(top));
  });
  afterAll(() => rmSync(join(dir, ".."), { recursive: true, force: true }));
  for (const args of BINARY_CASES) {
    test(`rg ${args.join(" ")}`, async () => {
      const { ours, theirs } = await bothInMemory(shimEnvFor(UNCAPPED), args, dir);
      expect(ours).toEqual(theirs);
    });
  }
  for (const [args, file] of STDIN_CASES) {
    test(`rg ${args.join(" ")} < ${file}`, async () => {
      const { ours, theirs } = await bothInMemory(shimEnvFor(UNCAPPED), args, dir, readFileSync(join(dir, file)));
      expect(ours).toEqual(theirs);
    });
  }
  test("standard input through the shim link: the binary reads the pipe as the in-process run does", () => {
    const [args, file] = STDIN_CASES[0]!;
    const { ours, theirs } = both(shimPath, shimEnvFor(UNCAPPED), args, dir, readFileSync(join(dir, file)));
    expect(ours).toEqual(theirs);
  });
});

describe("rg shim", () => {
  test("an unknown flag exits 2 with one line naming it and the nearest known flag", () => {
    const r = shim(["--fixed-string", "foo"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("--fixed-string");
    expect(r.stderr).toContain("nearest known flag: --fixed-strings");
  });

  test("a ripgrep flag the built-in lacks is refused by name with exit 2, never answered differently", () => {
    for (const flag of ["--pcre2", "-P", "--search-zip", "-z", "--one-file-system", "--encoding=latin1"]) {
      const r = shim([flag, "foo"]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^rg: flag --[a-z0-9-]+ is not supported by the built-in search; install ripgrep for it\n$/);
    }
  });

  test("RIPGREP_CONFIG_PATH adds its arguments (comments and blank lines skipped) unless --no-config", () => {
    const config = join(base, "rgconfig");
    writeFileSync(config, "# search settings\n\n--line-number\n--glob=*.rs\n");
    expect(shim(["foo"], { RIPGREP_CONFIG_PATH: config }).stdout).toBe("src/main.rs:2:    let foo = 1;\nsrc/main.rs:3:    println!(\"{}\", foo);\n");
    expect(shim(["--no-config", "-c", "foo", "src/main.rs"], { RIPGREP_CONFIG_PATH: config }).stdout).toBe("2\n");
  });

  test("-f - reads the patterns from standard input", () => {
    const r = runBin(["-f", "-", "src/main.rs"], { bin: join(shimDir, "rg"), cwd: root, env: env(), input: "println\nhelper\n" });
    expect(r.stdout).toBe('    println!("{}", foo);\nfn helper_2(x: u32) {}\n');
  });

  test("worker threads in the compiled binary print what one thread prints, in the same order", () => {
    const many = { TENDRIL_RG_PARALLEL_MIN_FILES: "1", TENDRIL_RG_BATCH_FILES: "2" };
    const cases = [["-n", "foo"], ["-C1", "foo"], ["--heading", "-n", "foo"], ["-c", "foo"], ["-l", "o"], ["--files-without-match", "foo"], ["--crlf", "-C1", "foo"]];
    for (const args of cases) {
      const one = shim(["-j1", ...args]);
      const par = shim(["-j3", ...args], many);
      expect(par.stdout).toBe(one.stdout);
      expect(par.code).toBe(one.code);
      expect(par.stderr).toBe(one.stderr);
    }
  });

  test("output stops at the line cap with a marker line, and the search still counts as a match", () => {
    const r = shim(["-n", "line", "docs/count.txt"], { TENDRIL_SHIM_OUTPUT_LINES: "5" });
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines.slice(0, 5)).toEqual(["1:line 0 foo", "2:line 1 bar", "3:line 2 bar", "4:line 3 foo", "5:line 4 bar"]);
    expect(lines[5]).toBe("[rg: output capped at 5 lines; narrow the search with -g/-t or a path]");
    expect(lines).toHaveLength(6);
    expect(r.code).toBe(0);
  });

  test("the byte cap ends output on a whole line", () => {
    const r = shim(["line", "docs/count.txt"], { TENDRIL_SHIM_OUTPUT_BYTES: "40" });
    expect(r.stdout).toBe("line 0 foo\nline 1 bar\nline 2 bar\n[rg: output capped at 40 bytes; narrow the search with -g/-t or a path]\n");
  });

  test("no match exits 1; a missing path exits 2 and names it", () => {
    expect(shim(["zzz-no-such-text"]).code).toBe(1);
    const r = shim(["foo", "missing-dir"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("missing-dir: No such file or directory");
  });

  test("stdin is searched when it is a pipe and no path is given", () => {
    const r = runBin(["-n", "b"], { bin: join(shimDir, "rg"), cwd: root, env: env(), input: "a\nb\nc\n" });
    expect(r.stdout).toBe("2:b\n");
  });

  test("stdin is read to its end: input larger than one read, and lines that come late", () => {
    const big = runBin(["-n", "b"], { bin: join(shimDir, "rg"), cwd: root, env: env(), input: "x\n".repeat(100_000) + "b last\n" });
    expect(big.stdout).toBe("100001:b last\n");
    const script = `{ printf 'a\\n'; sleep 0.3; printf 'b late\\n'; } | "$0" -n b`;
    const late = spawnSync("sh", ["-c", script, join(shimDir, "rg")], { cwd: root, env: env(), encoding: "utf8", timeout: 20_000 });
    expect(late.stdout).toBe("2:b late\n");
    expect(late.status).toBe(0);
  });

  test("a real ripgrep on PATH gets the same argv and its exit code is passed on", () => {
    const fake = join(base, "fake-bin");
    mkdirSync(fake, { recursive: true });
    writeFileSync(join(fake, "rg"), '#!/bin/sh\necho "real rg:" "$@"\nexit 3\n');
    chmodSync(join(fake, "rg"), 0o755);
    const r = runBin(["-n", "foo bar", "src"], {
      bin: join(shimDir, "rg"),
      cwd: root,
      env: { PATH: `${shimDir}:${fake}:/usr/bin:/bin`, HOME: home },
    });
    expect(r.stdout).toBe("real rg: -n foo bar src\n");
    expect(r.code).toBe(3);
  });

  test("a PATH entry that is this binary itself is not taken for ripgrep", () => {
    const r = runBin(["-n", "println", "src/main.rs"], { bin: join(shimDir, "rg"), cwd: root, env: { PATH: shimDir, HOME: home } });
    expect(r.stdout).toBe('3:    println!("{}", foo);\n');
    expect(r.code).toBe(0);
  });
});
