import { afterAll, expect, test } from "bun:test";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_LIMITS } from "../limits.ts";
import { buildSystemPrompt, findAgentsFiles } from "./system-prompt.ts";

const AGENTS_MAX = DEFAULT_LIMITS.MAX_AGENTS_MD_BYTES;
const bounds = { maxAgentsBytes: AGENTS_MAX, maxInstructionsBytes: DEFAULT_LIMITS.MAX_SERVER_INSTRUCTIONS_BYTES };

const home = mkdtempSync(join(tmpdir(), "tendril-sp-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

test("AGENTS.md files from the workspace up to $HOME are included, outermost first", () => {
  const ws = join(home, "proj", "pkg");
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(home, "AGENTS.md"), "HOME RULES");
  writeFileSync(join(home, "proj", "AGENTS.md"), "PROJECT RULES");
  writeFileSync(join(ws, "AGENTS.md"), "PACKAGE RULES");
  expect(findAgentsFiles(ws, home)).toEqual([join(home, "AGENTS.md"), join(home, "proj", "AGENTS.md"), join(ws, "AGENTS.md")]);
  const text = buildSystemPrompt({ cwd: ws, home, instructions: { dev: "Tools: shell." }, ...bounds });
  expect(text).toContain(`Workspace: ${ws}`);
  expect(text).toContain("Tools: shell.");
  expect(text.indexOf("HOME RULES")).toBeLessThan(text.indexOf("PROJECT RULES"));
  expect(text.indexOf("PROJECT RULES")).toBeLessThan(text.indexOf("PACKAGE RULES"));
});

test("AGENTS.md text is bounded", () => {
  const ws = join(home, "big");
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(ws, "AGENTS.md"), "y".repeat(AGENTS_MAX * 2));
  const text = buildSystemPrompt({ cwd: ws, home, ...bounds });
  expect(text.length).toBeLessThan(AGENTS_MAX + 4096);
  expect(text).toContain("AGENTS.md truncated");
});

test("a tool server's instructions are bounded with a visible marker", () => {
  const ws = join(home, "chatty");
  mkdirSync(ws, { recursive: true });
  const text = buildSystemPrompt({ cwd: ws, home, instructions: { noisy: "z".repeat(100_000) }, ...bounds });
  expect(text.length).toBeLessThan(DEFAULT_LIMITS.MAX_SERVER_INSTRUCTIONS_BYTES + 4096);
  expect(text).toContain("noisy instructions truncated");
});

test("the clamp of instructions and AGENTS.md never cuts a character in two", () => {
  const ws = join(home, "accents");
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(ws, "AGENTS.md"), "é".repeat(500));
  const text = buildSystemPrompt({ cwd: ws, home, instructions: { accents: "😀".repeat(500) }, maxAgentsBytes: 101, maxInstructionsBytes: 103 });
  expect(text).toContain("accents instructions truncated");
  expect(text).toContain("AGENTS.md truncated");
  expect(text).not.toContain("\uFFFD");
});

// C3: the workspace path was a replaceAll replacement string: `$&` in a folder name spliced `{{cwd}}` in.
test("C3: a workspace folder named with $ patterns appears in the system prompt as it is", () => {
  const cwd = "/w/a$&b$$c$`d$'e";
  const out = buildSystemPrompt({ cwd, home: "/nonexistent-home", ...bounds });
  expect(out).toContain(cwd);
  expect(out).not.toContain("{{cwd}}");
});

test("A11: AGENTS.md files are read from the workspace up to the repository root, never from a world-writable folder or file", () => {
  const repo = join(home, "a11", "repo");
  const ws = join(repo, "pkg", "sub");
  mkdirSync(join(repo, ".git"), { recursive: true });
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(home, "a11", "AGENTS.md"), "ABOVE THE REPOSITORY");
  writeFileSync(join(repo, "AGENTS.md"), "REPO RULES");
  writeFileSync(join(repo, "pkg", "AGENTS.md"), "PLANTED IN A SHARED FOLDER");
  writeFileSync(join(ws, "AGENTS.md"), "SUB RULES");
  expect(findAgentsFiles(ws, home)).toEqual([join(repo, "AGENTS.md"), join(repo, "pkg", "AGENTS.md"), join(ws, "AGENTS.md")]);
  chmodSync(join(repo, "pkg"), 0o1777); // like /tmp: anyone may add a file
  chmodSync(join(ws, "AGENTS.md"), 0o666);
  expect(findAgentsFiles(ws, home)).toEqual([join(repo, "AGENTS.md")]);
  const text = buildSystemPrompt({ cwd: ws, home, ...bounds });
  expect(text).toContain("REPO RULES");
  for (const gone of ["ABOVE THE REPOSITORY", "PLANTED IN A SHARED FOLDER", "SUB RULES"]) expect(text).not.toContain(gone);
});

test("A11: outside both a repository and $HOME only the workspace's own AGENTS.md is read", () => {
  const outer = join(home, "a11-outside");
  const ws = join(outer, "ws");
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(outer, "AGENTS.md"), "OUTER");
  writeFileSync(join(ws, "AGENTS.md"), "WS");
  expect(findAgentsFiles(ws, join(home, "elsewhere"))).toEqual([join(ws, "AGENTS.md")]);
});

test.skipIf(process.getuid?.() !== 0)("A11: an AGENTS.md in a folder owned by another user is not read", () => {
  const repo = join(home, "a11-owner");
  const ws = join(repo, "ws");
  mkdirSync(join(repo, ".git"), { recursive: true });
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(repo, "AGENTS.md"), "MINE");
  writeFileSync(join(ws, "AGENTS.md"), "THEIRS");
  expect(findAgentsFiles(ws, home)).toEqual([join(repo, "AGENTS.md"), join(ws, "AGENTS.md")]);
  chownSync(ws, 12345, 12345);
  expect(findAgentsFiles(ws, home)).toEqual([join(repo, "AGENTS.md")]);
  chownSync(ws, 0, 0);
  chownSync(join(ws, "AGENTS.md"), 12345, 12345);
  expect(findAgentsFiles(ws, home)).toEqual([join(repo, "AGENTS.md")]);
});
