// Unit tests of stack detection and the server instructions built from it.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_LIMITS } from "../../core/limits.ts";
import { serverInstructions, toolDescriptions } from "./instructions.ts";
import { detectStack } from "./stack.ts";

const base = mkdtempSync(join(tmpdir(), "tendril-stack-test-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function workspace(name: string, files: Record<string, string>): string {
  const dir = join(base, name);
  mkdirSync(dir);
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  return dir;
}

test("recognises Rust, Go, Python and Node with its package manager and scripts", async () => {
  const rust = await detectStack(workspace("rust", { "Cargo.toml": "[package]\n" }));
  expect(rust.map((s) => s.name)).toEqual(["Rust"]);
  expect(rust[0]!.hint).toContain("cargo test");
  expect((await detectStack(workspace("go", { "go.mod": "module x\n" })))[0]!.name).toBe("Go");
  const py = await detectStack(workspace("py", { "pyproject.toml": "", "uv.lock": "" }));
  expect(py[0]!.name).toBe("Python");
  expect(py[0]!.hint).toContain("uv");
  const node = await detectStack(workspace("node", { "package.json": '{"scripts":{"test":"x","build":"y"}}', "pnpm-lock.yaml": "" }));
  expect(node[0]!.name).toBe("Node (pnpm)");
  expect(node[0]!.hint).toContain("test, build");
  expect((await detectStack(workspace("bun", { "package.json": "not json", "bun.lock": "" })))[0]!.name).toBe("Node (bun)");
  expect(await detectStack(join(base, "missing"))).toEqual([]);
});

test("instructions name the root, the tools and the stack; descriptions carry the limits", async () => {
  const dir = workspace("mixed", { "Cargo.toml": "", "package.json": "{}" });
  const text = serverInstructions(dir, await detectStack(dir), DEFAULT_LIMITS);
  for (const word of [dir, "shell", "str_replace", "todo", "Rust", "Node (npm)"]) expect(text).toContain(word);
  expect(serverInstructions(join(base, "empty"), [], DEFAULT_LIMITS)).toContain("not recognised");
  const d = toolDescriptions(DEFAULT_LIMITS);
  expect(d.shell).toContain("120 s by default");
  expect(d.shell).not.toContain("{{");
  expect(d.todo).toContain("50 items");
  expect(d.stop.toLowerCase()).toContain("lifecycle hook");
  expect(d.postCompact.toLowerCase()).toContain("lifecycle hook");
});
