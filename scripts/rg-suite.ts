// Dev-only measure of the built-in rg's fidelity: reads ripgrep's integration tests (`rgtest!` cases in a
// checkout's `tests/*.rs`), replays each case's files and commands in a scratch folder through the installed
// ripgrep and through the built-in, and prints the share of in-scope cases whose every command agrees
// (stdout, lines sorted unless --sort; exit code; stderr's first word). In scope: cases this script can
// follow whose arguments the built-in's parser accepts. Not used by CI or the tests. One file over 400
// lines: its Rust tokenizer, replay of the cases' calls and runner serve only each other.
//   bun scripts/rg-suite.ts PATH/TO/ripgrep/tests [--bin dist/tendril] [--only NAME] [-v]
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseRgArgs } from "../tools/search/rg-args.ts";

type Tok = { k: "str"; v: Buffer } | { k: "id"; v: string } | { k: "num"; v: number } | { k: "p"; v: string };

class Unfollowable extends Error {}

function unescape(body: string, bytes: boolean): Buffer {
  const out: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\") {
      out.push(...Buffer.from(c));
      continue;
    }
    const e = body[++i]!;
    if (e === "\n") {
      while (/\s/.test(body[i + 1] ?? "")) i++;
    } else if (e === "x") {
      const b = parseInt(body.slice(i + 1, i + 3), 16);
      out.push(...(bytes || b < 0x80 ? [b] : Buffer.from(String.fromCharCode(b))));
      i += 2;
    } else if (e === "u") {
      const end = body.indexOf("}", i);
      out.push(...Buffer.from(String.fromCodePoint(parseInt(body.slice(i + 2, end), 16))));
      i = end;
    } else out.push(...Buffer.from(({ n: "\n", t: "\t", r: "\r", "0": "\0" } as Record<string, string>)[e] ?? e));
  }
  return Buffer.from(out);
}

function tokenize(src: string): Tok[] {
  const toks: Tok[] = [];
  for (let i = 0; i < src.length; ) {
    const rest = src.slice(i);
    let m: RegExpExecArray | null;
    if ((m = /^\s+|^\/\/[^\n]*|^\/\*[^]*?\*\//.exec(rest))) i += m[0].length;
    else if ((m = /^b?r(#*)"/.exec(rest))) {
      const close = '"' + m[1];
      const end = src.indexOf(close, i + m[0].length);
      toks.push({ k: "str", v: Buffer.from(src.slice(i + m[0].length, end)) });
      i = end + close.length;
    } else if ((m = /^(b?)"((?:[^"\\]|\\[^])*)"/.exec(rest))) {
      toks.push({ k: "str", v: unescape(m[2]!, m[1] === "b") });
      i += m[0].length;
    } else if ((m = /^b?'(?:[^'\\]|\\[^']+)'/.exec(rest))) {
      toks.push({ k: "p", v: "char" });
      i += m[0].length;
    } else if ((m = /^[A-Za-z_][A-Za-z0-9_]*!?/.exec(rest))) {
      toks.push({ k: "id", v: m[0] });
      i += m[0].length;
    } else if ((m = /^\d+(?:_\d+)*(?:u\d+|usize)?/.exec(rest))) {
      toks.push({ k: "num", v: Number(m[0].replace(/_|u\d+|usize/g, "")) });
      i += m[0].length;
    } else if ((m = /^(::|=>|->|&&|\|\||==|!=|[^\s])/.exec(rest))) {
      toks.push({ k: "p", v: m[0] });
      i += m[0].length;
    }
  }
  return toks;
}

interface Case {
  readonly file: string;
  readonly name: string;
  readonly body: Tok[];
}

/** Each `rgtest!(name, |…| { body })` of a file. */
function casesOf(file: string, src: string): Case[] {
  const toks = tokenize(src);
  const out: Case[] = [];
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.k !== "id" || t.v !== "rgtest!") continue;
    const name = (toks[i + 2] as { v: string }).v;
    let j = i + 3;
    while (!(toks[j]!.k === "p" && toks[j]!.v === "{")) j++;
    const start = j + 1;
    let depth = 0;
    for (; j < toks.length; j++) {
      const v = toks[j]!.k === "p" ? toks[j]!.v : "";
      if (v === "{") depth++;
      else if (v === "}" && --depth === 0) break;
    }
    out.push({ file, name, body: toks.slice(start, j) });
    i = j;
  }
  return out;
}

/** `const NAME: &str = "…";` (or `include_bytes!("…")`) values of a file. */
function constants(testsDir: string, file: string, into = new Map<string, Buffer>()): Map<string, Buffer> {
  const toks = tokenize(readFileSync(join(testsDir, file), "utf8"));
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.k === "id" && t.v === "rgtest!") break; // constants come first
    if (t.k === "id" && t.v === "const") {
      let j = i;
      while (toks[j]!.k !== "str") j++;
      const v = (toks[j] as { v: Buffer }).v;
      const included = toks[j - 2]?.k === "id" && (toks[j - 2] as { v: string }).v === "include_bytes!";
      into.set((toks[i + 1] as { v: string }).v, included ? readFileSync(resolve(testsDir, v.toString())) : v);
    }
  }
  return into;
}

type Value = Buffer | Buffer[] | number | { dir: true } | { cmd: Cmd } | { path: string } | { done: true };

interface Cmd {
  args: string[];
  cwd: string;
}

interface Check {
  args: string[];
  agree: boolean;
  detail: string;
}

class Replay {
  private i = 0;
  private readonly vars = new Map<string, Value>();
  readonly checks: Check[] = [];
  /** Arguments the built-in refused: the case is out of scope. */
  refused = false;
  private ended = false;

  constructor(
    private readonly toks: Tok[],
    private readonly root: string,
    private readonly consts: Map<string, Buffer>,
    private readonly testsDir: string,
    private readonly run: (c: Cmd, input?: Buffer) => Check,
  ) {
    this.vars.set("dir", { dir: true });
    this.vars.set("cmd", { cmd: { args: [], cwd: root } });
  }

  private peek(o = 0): Tok | undefined {
    return this.toks[this.i + o];
  }
  private is(v: string, o = 0): boolean {
    const t = this.peek(o);
    return t !== undefined && (t.k === "p" || t.k === "id") && t.v === v;
  }
  private expect(v: string): void {
    if (!this.is(v)) throw new Unfollowable(`expected ${v} near ${JSON.stringify(this.peek())}`);
    this.i++;
  }

  runAll(): void {
    while (this.i < this.toks.length && !this.ended) this.statement();
  }

  private skipBlock(): void {
    this.expect("{");
    for (let depth = 1; depth > 0; this.i++) {
      if (this.is("{")) depth++;
      else if (this.is("}")) depth--;
    }
  }

  private statement(): void {
    if (this.is(";")) return void this.i++;
    if (this.is("if")) {
      this.i++;
      const negate = this.is("!");
      if (negate) this.i++;
      if (this.is("dir") && this.is(".", 1) && this.is("is_pcre2", 2)) {
        this.i += 5; // dir.is_pcre2()
        if (negate) {
          this.ended = true; // a PCRE2-only case
          throw new Unfollowable("needs PCRE2");
        }
        return this.skipBlock();
      }
      if (this.is("cfg!")) {
        this.i++;
        const windows = this.peek(1)?.v === "windows";
        while (!this.is("{")) this.i++;
        if (windows !== negate) throw new Unfollowable("platform-specific");
        return this.skipBlock();
      }
      throw new Unfollowable("if");
    }
    if (this.is("let")) {
      this.i++;
      if (this.is("mut")) this.i++;
      const name = (this.peek() as { v: string }).v;
      this.i++;
      if (this.is(":")) while (!this.is("=")) this.i++;
      this.expect("=");
      const at = this.i;
      try {
        this.vars.set(name, this.expr());
      } catch (err) {
        if (!(err instanceof Unfollowable) || this.mentionsCommand(at)) throw err;
        this.i = at;
        this.skipTo(";");
      }
      return this.expect(";");
    }
    if (this.is("eqnice!") || this.is("assert!") || this.is("assert_eq!") || this.is("assert_ne!")) {
      this.i += 2;
      const end = this.matching(this.i - 1);
      while (this.i < end) {
        const at = this.i;
        if (this.mentionsCommandUntil(at, this.nextComma(end))) {
          if (this.is("!") || this.is("&") || this.is("*")) this.i++;
          if (this.is("*")) this.i++;
          this.expr();
        }
        this.i = this.nextComma(end) + 1;
      }
      this.i = end + 1;
      return;
    }
    if (this.peek()?.k === "id" && this.is("=", 1)) {
      const name = (this.peek() as { v: string }).v;
      this.i += 2;
      this.vars.set(name, this.expr());
      return;
    }
    this.expr();
  }

  private matching(open: number): number {
    let depth = 0;
    for (let j = open; j < this.toks.length; j++) {
      const v = this.toks[j]!.k === "p" ? this.toks[j]!.v : "";
      if (v === "(" || v === "[" || v === "{") depth++;
      else if ((v === ")" || v === "]" || v === "}") && --depth === 0) return j;
    }
    return this.toks.length;
  }
  private nextComma(end: number): number {
    let depth = 0;
    for (let j = this.i; j < end; j++) {
      const v = this.toks[j]!.k === "p" ? this.toks[j]!.v : "";
      if (v === "(" || v === "[" || v === "{") depth++;
      else if (v === ")" || v === "]" || v === "}") depth--;
      else if (v === "," && depth === 0) return j;
    }
    return end;
  }
  private skipTo(v: string): void {
    let depth = 0;
    while (this.i < this.toks.length) {
      const t = this.peek()!;
      const p = t.k === "p" ? t.v : "";
      if (depth === 0 && p === v) return;
      if (p === "(" || p === "[" || p === "{") depth++;
      if (p === ")" || p === "]" || p === "}") depth--;
      this.i++;
    }
  }
  private mentionsCommand(from: number): boolean {
    const save = this.i;
    this.i = from;
    this.skipTo(";");
    const to = this.i;
    this.i = save;
    return this.mentionsCommandUntil(from, to);
  }
  private mentionsCommandUntil(from: number, to: number): boolean {
    return this.toks.slice(from, to).some((t) => t.k === "id" && (t.v === "cmd" || t.v === "dir"));
  }

  private expr(): Value {
    let v = this.primary();
    while (this.is(".") || this.is("?")) {
      if (this.is("?")) {
        this.i++;
        continue;
      }
      this.i++;
      const method = (this.peek() as { v: string }).v;
      this.i++;
      const args: Value[] = [];
      if (this.is("::")) throw new Unfollowable("turbofish");
      if (this.is("(")) {
        this.i++;
        while (!this.is(")")) {
          args.push(this.expr());
          if (this.is(",")) this.i++;
        }
        this.i++;
      }
      v = this.call(v, method, args);
    }
    return v;
  }

  private primary(): Value {
    const t = this.peek();
    if (!t) throw new Unfollowable("end");
    if (t.k === "p" && (t.v === "&" || t.v === "*")) {
      this.i++;
      return this.primary();
    }
    if (t.k === "str") {
      this.i++;
      return t.v;
    }
    if (t.k === "num") {
      this.i++;
      return t.v;
    }
    if (t.k === "p" && t.v === "[") {
      this.i++;
      const items: Buffer[] = [];
      while (!this.is("]")) {
        const v = this.expr();
        if (!Buffer.isBuffer(v)) throw new Unfollowable("array item");
        items.push(v);
        if (this.is(",")) this.i++;
      }
      this.i++;
      return items;
    }
    if (t.k === "id" && t.v === "include_bytes!") {
      this.i += 2;
      const p = this.expr() as Buffer;
      this.expect(")");
      return readFileSync(resolve(this.testsDir, p.toString()));
    }
    if (t.k === "id" && (t.v === "sort_lines" || t.v === "json_decode") && this.is("(", 1)) {
      this.i += 2; // the output's order is normalised anyway, and JSON is compared as text
      const v = this.expr();
      this.expect(")");
      return v;
    }
    if (t.k === "id" && (this.vars.has(t.v) || this.consts.has(t.v))) {
      this.i++;
      return this.vars.get(t.v) ?? this.consts.get(t.v)!;
    }
    throw new Unfollowable(`unknown ${String(t.v)}`);
  }

  private file(p: Value): string {
    if (!Buffer.isBuffer(p)) throw new Unfollowable("path");
    const abs = join(this.root, p.toString());
    mkdirSync(dirname(abs), { recursive: true });
    return abs;
  }

  private call(on: Value, method: string, args: Value[]): Value {
    if (Buffer.isBuffer(on)) {
      if (["as_bytes", "to_string", "to_owned", "as_str", "into"].includes(method)) return on;
      if (method === "repeat") return Buffer.from(on.toString().repeat(args[0] as number));
      throw new Unfollowable(`str.${method}`);
    }
    if (typeof on === "object" && "dir" in on) {
      switch (method) {
        case "create":
        case "create_bytes":
          writeFileSync(this.file(args[0]!), args[1] as Buffer);
          return { done: true };
        case "create_size":
          writeFileSync(this.file(args[0]!), Buffer.alloc(args[1] as number));
          return { done: true };
        case "create_dir":
          mkdirSync(join(this.root, (args[0] as Buffer).toString()), { recursive: true });
          return { done: true };
        case "remove":
          unlinkSync(join(this.root, (args[0] as Buffer).toString()));
          return { done: true };
        case "link_dir":
        case "link_file":
          symlinkSync(join(this.root, (args[0] as Buffer).toString()), this.file(args[1]!));
          return { done: true };
        case "command":
          return { cmd: { args: [], cwd: this.root } };
        case "path":
          return { path: this.root };
      }
      throw new Unfollowable(`dir.${method}`);
    }
    if (typeof on === "object" && "path" in on && method === "join") return { path: join(on.path, (args[0] as Buffer).toString()) };
    if (typeof on === "object" && "cmd" in on) {
      const c = on.cmd;
      const strs = (v: Value) => (Array.isArray(v) ? v : [v as Buffer]).map((b) => b.toString());
      switch (method) {
        case "arg":
          c.args.push(...strs(args[0]!));
          return on;
        case "args":
          c.args.push(...strs(args[0]!));
          return on;
        case "current_dir":
          c.cwd = Buffer.isBuffer(args[0]) ? join(this.root, args[0].toString()) : (args[0] as { path: string }).path;
          return on;
        case "stdout":
        case "stderr":
        case "output":
        case "assert_err":
        case "assert_exit_code":
        case "assert_non_empty_stderr":
        case "pipe":
          return this.check(c, method === "pipe" ? (args[0] as Buffer) : undefined);
      }
      throw new Unfollowable(`cmd.${method}`);
    }
    if (typeof on === "object" && "done" in on) return on; // methods on an output (lines(), is_empty())
    throw new Unfollowable(`.${method}`);
  }

  private check(c: Cmd, input?: Buffer): Value {
    const args = ["--path-separator", "/", ...c.args];
    const parsed = parseRgArgs(args);
    if (!parsed.ok && /not supported by the built-in|unknown flag/.test(parsed.message)) this.refused = true;
    this.checks.push(this.run({ args, cwd: c.cwd }, input));
    return { done: true };
  }
}

const firstWord = (s: string) => s.trim().split(/\s+/)[0] ?? "";

function outcome(bin: string, builtin: boolean, c: Cmd, input?: Buffer): { code: number | null; out: string; word: string } {
  const env = { PATH: "/usr/bin:/bin", HOME: tmpdir(), ...(builtin ? { TENDRIL_RG_BUILTIN: "1" } : {}) };
  const argv = builtin ? ["rg", ...c.args] : c.args;
  const r = spawnSync(bin, argv, { cwd: c.cwd, env, input, stdio: input ? "pipe" : ["ignore", "pipe", "pipe"], timeout: 20_000 });
  const sorted = c.args.some((a) => /^--sortr?(=|$)/.test(a));
  const text = String(r.stdout ?? "").replace(/^\d+\.\d+ seconds.*$/gm, "T").replace(/"elapsed(_total)?":\{[^}]*\}/g, "T");
  return { code: r.status, out: sorted ? text : text.split(/(?<=[\n\0])/).sort().join(""), word: firstWord(String(r.stderr ?? "")) };
}

function main(argv: string[]): number {
  const testsDir = resolve(argv.find((a) => !a.startsWith("-") && argv[argv.indexOf(a) - 1] !== "--bin" && argv[argv.indexOf(a) - 1] !== "--only") ?? "");
  const bin = resolve(argv[argv.indexOf("--bin") + 1] && argv.includes("--bin") ? argv[argv.indexOf("--bin") + 1]! : "dist/tendril");
  const only = argv.includes("--only") ? argv[argv.indexOf("--only") + 1] : undefined;
  const verbose = argv.includes("-v");
  const rg = spawnSync("sh", ["-c", "command -v rg"], { encoding: "utf8" }).stdout.trim();
  if (!rg) throw new Error("ripgrep is not installed");
  const hay = constants(testsDir, "hay.rs");
  const files = readdirSync(testsDir).filter((f) => f.endsWith(".rs") && !["hay.rs", "util.rs", "macros.rs", "tests.rs"].includes(f));
  let inScope = 0;
  let passed = 0;
  let refused = 0;
  let unfollowable = 0;
  for (const f of files.sort()) {
    const consts = constants(testsDir, f, new Map(hay));
    for (const c of casesOf(f, readFileSync(join(testsDir, f), "utf8"))) {
      if (only && c.name !== only) continue;
      const root = mkdtempSync(join(tmpdir(), "rg-suite-"));
      const run = (cmd: Cmd, input?: Buffer): Check => {
        const a = outcome(rg, false, cmd, input);
        const b = outcome(bin, true, cmd, input);
        const agree = a.code === b.code && a.out === b.out && a.word === b.word;
        return { args: cmd.args, agree, detail: agree ? "" : `rg: ${JSON.stringify(a)}\nbuilt-in: ${JSON.stringify(b)}` };
      };
      const replay = new Replay(c.body, root, consts, testsDir, run);
      let why = "";
      try {
        replay.runAll();
      } catch (err) {
        if (!(err instanceof Unfollowable)) throw err;
        why = err.message;
      }
      rmSync(root, { recursive: true, force: true });
      if (why || replay.checks.length === 0) {
        unfollowable++;
        if (verbose) console.log(`skip ${f}:${c.name} (${why || "no command"})`);
        continue;
      }
      if (replay.refused) {
        refused++;
        if (verbose) console.log(`out of scope ${f}:${c.name}`);
        continue;
      }
      inScope++;
      const failed = replay.checks.filter((k) => !k.agree);
      if (failed.length === 0) passed++;
      else console.log(`FAIL ${f}:${c.name}: rg ${failed[0]!.args.join(" ")}\n${verbose ? failed[0]!.detail + "\n" : ""}`);
    }
  }
  console.log(`in scope: ${passed}/${inScope} pass (${((100 * passed) / Math.max(inScope, 1)).toFixed(1)}%); ${refused} use flags the built-in refuses; ${unfollowable} not followed by this script`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
