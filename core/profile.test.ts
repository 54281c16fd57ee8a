import { expect, test } from "bun:test";
import { loadConfig } from "./config.ts";
import { lineOf, loadProfile } from "./profile.ts";

const HOME = "/home/u";
const AGENTS = "/home/u/.config/tendril/agents";
const files = (m: Record<string, string>) => (p: string) => m[p];

const reviewer = `description = "read-only reviewer"
provider = "openai"
model = "small-model"
mode = "read-only"
system_prompt_file = "reviewer.md"
dev = false

[[rules]]
tool = "fs__*"
decision = "allow"

[[mcp]]
name = "fs"
command = "/opt/fs-server"
args = ["--root", "."]
env = { TOKEN = "t" }

[[mcp]]
name = "docs"
url = "http://127.0.0.1:9/mcp"
type = "sse"
`;

test("a profile by name is the whole agent: provider, model, mode, prompt, rules, servers, no dev tools", async () => {
  const fs = files({ [`${AGENTS}/reviewer.toml`]: reviewer, [`${AGENTS}/reviewer.md`]: "You review code." });
  const c = await loadConfig({ profile: "reviewer" }, { HOME }, fs);
  expect([c.provider, c.model, c.mode, c.systemPrompt, c.dev]).toEqual(["openai", "small-model", "read-only", "You review code.", false]);
  expect(c.mcp.map((m) => m.name)).toEqual(["fs", "docs"]);
  expect(c.mcp[0]).toEqual({ name: "fs", command: "/opt/fs-server", args: ["--root", "."], env: { TOKEN: "t" } });
  expect(c.rules[0]!.label).toContain(`${AGENTS}/reviewer.toml rules[0]`);
  expect(c.profile).toBe(`${AGENTS}/reviewer.toml`);
  // Flags and the environment still win over the profile.
  expect(await loadConfig({ profile: "reviewer", model: "m2" }, { HOME, TENDRIL_MODE: "ask" }, fs)).toMatchObject({ model: "m2", mode: "ask" });
  // A path works too, relative to the cwd.
  const byPath = await loadConfig({ profile: "./p.toml", cwd: "/work" }, { HOME }, files({ "/work/p.toml": 'model = "x"' }));
  expect([byPath.model, byPath.dev]).toEqual(["x", true]);
});

test("regression-style: a bad profile names the file, the key and the line before anything starts", async () => {
  const bad = (text: string, want: string) =>
    expect(loadProfile("/p/bad.toml", files({ "/p/bad.toml": text }))).rejects.toThrow(want);
  await bad('model = "m"\nmodle = "x"\n', "/p/bad.toml:2: modle: unknown key");
  await bad('model = "m"\nmode = "wild"\n', "/p/bad.toml:2: mode: Invalid option");
  await bad('[[mcp]]\nname = "a"\ncommand = "c"\n\n[[mcp]]\nname = "b"\ncommand = "d"\nargs = "--x"\n', "/p/bad.toml:8: mcp[1].args: Invalid input");
  await bad('[[mcp]]\nname = "a"\n', "/p/bad.toml:1: mcp[0]: exactly one of command or url is required");
  await bad('system_prompt_file = "missing.md"\n', "/p/bad.toml:1: system_prompt_file: cannot read /p/missing.md");
  await bad("model = \n", "/p/bad.toml:");
  await expect(loadProfile("/p/none.toml", files({}))).rejects.toThrow("profile not found: /p/none.toml");
  await expect(loadConfig({ profile: "../x" }, { HOME }, files({}))).rejects.toThrow("profile not found");
  await expect(loadConfig({ profile: "a b" }, { HOME }, files({}))).rejects.toThrow("must be letters, digits");
});

test("lineOf finds top-level keys and keys of the nth array table", () => {
  const t = 'a = 1\n\n[[mcp]]\nname = "x"\n[[mcp]]\nname = "y"\nargs = []\n';
  expect(lineOf(t, ["a"])).toBe(1);
  expect(lineOf(t, ["mcp", 1, "args"])).toBe(7);
  expect(lineOf(t, ["mcp", 1, "env"])).toBe(5);
  expect(lineOf(t, ["nope"])).toBe(1);
});

test("a profile's sandbox setting takes effect under the environment's, and its unbuilt keys are refused", async () => {
  const fs = files({ "/p/s.toml": 'sandbox = "workspace-write"\nsandbox_network = true\nsandbox_hide = ["~/vault"]\n', "/p/d.toml": 'sandbox_allow_domains = ["a.example"]\n' });
  expect((await loadConfig({ profile: "/p/s.toml" }, { HOME }, fs)).sandbox).toEqual({ mode: "workspace-write", network: true, hide: ["/home/u/vault"], allowDomains: [] });
  expect((await loadConfig({ profile: "/p/s.toml" }, { HOME, TENDRIL_SANDBOX: "read-only" }, fs)).sandbox.mode).toBe("read-only");
  expect((await loadConfig({ profile: "/p/d.toml" }, { HOME }, fs)).sandbox.allowDomains).toEqual(["a.example"]);
  await expect(loadConfig({ profile: "/p/e.toml" }, { HOME }, files({ "/p/e.toml": 'sandbox_allow_domains = ["http://a.example"]\n' }))).rejects.toThrow("/p/e.toml: sandbox_allow_domains");
  await expect(loadProfile("/p/b.toml", files({ "/p/b.toml": 'sandbox = "on"\n' }))).rejects.toThrow("/p/b.toml:1: sandbox: Invalid option");
  const mcp = '[[mcp]]\nname = "a"\ncommand = "c"\n\n[[mcp]]\nname = "b"\ncommand = "d"\nsandbox = "read-only"\n';
  expect((await loadProfile("/p/m.toml", files({ "/p/m.toml": mcp }))).mcp![1]!.sandbox).toBe("read-only");
  await expect(loadProfile("/p/m.toml", files({ "/p/m.toml": mcp.replace('"read-only"', '"on"') }))).rejects.toThrow("/p/m.toml:8: mcp[1].sandbox: Invalid option");
});
