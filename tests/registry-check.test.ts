// The ACP Registry's own checks (SPEC §11), as the release runs them: the built binary passes the agent
// check (empty temporary HOME, no keys, an initialize offering fs, terminal and `_meta.terminal_output`
// answered with an agent or terminal auth method, nothing but JSON-RPC on stdout), and the icon passes
// the icon rules. Agents and icons that break a rule are refused, each naming the rule.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, ROOT } from "./binary.ts";
import { iconProblems, registryAgentCheck } from "../scripts/release/registry-check.ts";

const dir = mkdtempSync(join(tmpdir(), "tendril-registry-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stand-in agent: answers the first line's initialize with `result`, after writing `before` to stdout. */
function fakeAgent(name: string, result: unknown, before = ""): string[] {
  const file = join(dir, `${name}.ts`);
  writeFileSync(
    file,
    `process.stdin.once("data", (d) => {
  const id = JSON.parse(String(d).split("\\n")[0]).id;
  process.stdout.write(${JSON.stringify(before)} + JSON.stringify({ jsonrpc: "2.0", id, result: ${JSON.stringify(result)} }) + "\\n");
});
process.stdin.on("end", () => process.exit(0));
`,
  );
  return [process.execPath, file];
}

test("the built binary passes the registry's agent check, with no keys and an empty HOME", async () => {
  expect(await registryAgentCheck([BIN, "agent"])).toBeUndefined();
});

test("the agent check refuses a line on stdout that is not JSON-RPC, and an agent with no agent or terminal auth method", async () => {
  const ok = { protocolVersion: 1, authMethods: [{ id: "api-key", name: "API key" }] };
  expect(await registryAgentCheck(fakeAgent("fine", ok))).toBeUndefined();
  expect(await registryAgentCheck(fakeAgent("chatty", ok, "starting up\n"))).toContain("not JSON-RPC");
  const envVar = { protocolVersion: 1, authMethods: [{ id: "k", name: "key", type: "env_var", vars: [{ name: "K" }] }] };
  expect(await registryAgentCheck(fakeAgent("env-only", envVar))).toContain("no auth method of type agent or terminal");
  expect(await registryAgentCheck(fakeAgent("none", { protocolVersion: 1 }))).toContain("no authMethods");
});

test("the release's icon passes the registry's icon rules; fixed colours, another size, comments and no currentColor do not", () => {
  expect(iconProblems(readFileSync(join(ROOT, "scripts", "release", "icon.svg"), "utf8"))).toEqual([]);
  const svg = (attrs: string, body: string) => `<svg xmlns="http://www.w3.org/2000/svg" ${attrs}>${body}</svg>`;
  const good = '<path fill="currentColor" d="M1 1h14v14H1z"/>';
  expect(iconProblems(svg('width="16" height="16"', good))).toEqual([]);
  expect(iconProblems(svg('viewBox="0 0 16 16"', good))).toEqual([]);
  expect(iconProblems(svg('width="24" height="24"', good)).join()).toContain("24×24");
  expect(iconProblems(svg('width="16" height="16"', '<path fill="#336699" d="M1 1h14v14H1z"/>')).join()).toContain("fixed colour");
  expect(iconProblems(svg('width="16" height="16"', `<path style="stroke: red" ${good.slice(6)}`)).join()).toContain("fixed colour");
  expect(iconProblems(svg('width="16" height="16"', `<!-- logo -->${good}`)).join()).toContain("comment");
  expect(iconProblems(svg('width="16" height="16"', '<path fill="none" d="M1 1h14"/>')).join()).toContain("currentColor");
});
