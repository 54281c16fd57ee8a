import { expect, test } from "bun:test";
import { ConfigError, loadConfig } from "./config.ts";

const HOME = "/home/u";
const files = (m: Record<string, string>) => (p: string) => m[p];

test("XDG paths default under HOME and follow XDG_* variables", () => {
  const c = loadConfig({}, { HOME }, files({}));
  expect(c.paths.configFile).toBe("/home/u/.config/tendril/config.toml");
  expect(c.paths.stateDir).toBe("/home/u/.local/state/tendril");
  expect(c.paths.cacheDir).toBe("/home/u/.cache/tendril");
  const x = loadConfig({}, { HOME, XDG_CONFIG_HOME: "/c", XDG_STATE_HOME: "/s", XDG_CACHE_HOME: "/k" }, files({}));
  expect([x.paths.configFile, x.paths.stateDir, x.paths.cacheDir]).toEqual([
    "/c/tendril/config.toml",
    "/s/tendril",
    "/k/tendril",
  ]);
});

test("precedence: flag > environment > config file > default", () => {
  const file = { "/home/u/.config/tendril/config.toml": 'model = "from-file"\nprovider = "openai"\nlog = "info"\n' };
  expect(loadConfig({}, { HOME }, files({})).model).toBe("gpt-5.5");
  expect(loadConfig({}, { HOME }, files(file)).model).toBe("from-file");
  expect(loadConfig({}, { HOME, TENDRIL_MODEL: "from-env" }, files(file)).model).toBe("from-env");
  expect(loadConfig({ model: "from-flag" }, { HOME, TENDRIL_MODEL: "from-env" }, files(file)).model).toBe("from-flag");
  expect(loadConfig({}, { HOME }, files(file)).logLevel).toBe("info");
  expect(loadConfig({}, { HOME, TENDRIL_LOG: "debug" }, files(file)).logLevel).toBe("debug");
});

test("provider defaults to anthropic only when its key is set", () => {
  expect(loadConfig({}, { HOME }, files({})).provider).toBe("openai");
  expect(loadConfig({}, { HOME, ANTHROPIC_API_KEY: "k" }, files({})).provider).toBe("anthropic");
});

test("rules, mcp entries and limits come from the file", () => {
  const toml = `
[[rules]]
tool = "dev__shell"
decision = "deny"
when = { arg = "command", prefix = "rm " }

[[mcp]]
name = "fs"
command = "/bin/fs-server"
args = ["--x"]
env = { A = "1" }

[limits]
max_line_bytes = 1024
`;
  const c = loadConfig({ config: "/p.toml" }, { HOME }, files({ "/p.toml": toml }));
  expect(c.rules).toEqual([
    { tool: "dev__shell", decision: "deny", when: { arg: "command", prefix: "rm " }, label: expect.any(String), matches: expect.any(Function) },
  ]);
  expect(c.mcp).toEqual([{ name: "fs", command: "/bin/fs-server", args: ["--x"], env: { A: "1" } }]);
  expect(c.limits.MAX_LINE_BYTES).toBe(1024);
  // the environment still wins over the file
  expect(loadConfig({ config: "/p.toml" }, { HOME, TENDRIL_MAX_LINE_BYTES: "2048" }, files({ "/p.toml": toml })).limits
    .MAX_LINE_BYTES).toBe(2048);
});

test("bad values are clear errors naming the file or the variable", () => {
  expect(() => loadConfig({ config: "/nope.toml" }, { HOME }, files({}))).toThrow("config file not found: /nope.toml");
  expect(() => loadConfig({ config: "/b.toml" }, { HOME }, files({ "/b.toml": "model = " }))).toThrow("/b.toml");
  expect(() => loadConfig({}, { HOME, TENDRIL_PROVIDER: "gemini" }, files({}))).toThrow(ConfigError);
  expect(() => loadConfig({}, { HOME, TENDRIL_LOG: "loud" }, files({}))).toThrow("log level");
  expect(() => loadConfig({ mode: "wild" }, { HOME }, files({}))).toThrow("mode must be one of");
  expect(() => loadConfig({}, { HOME, TENDRIL_MAX_TOKENS: "many" }, files({}))).toThrow("TENDRIL_MAX_TOKENS");
  const badRule = '[[rules]]\ntool = "x"\ndecision = "maybe"\n';
  expect(() => loadConfig({ config: "/r.toml" }, { HOME }, files({ "/r.toml": badRule }))).toThrow("r.toml: rules[0].decision: decision must be allow, deny or ask");
});

test("hook servers: unset = none, * = all, list", () => {
  expect(loadConfig({}, { HOME }, files({})).hookServers).toEqual([]);
  expect(loadConfig({}, { HOME, TENDRIL_MCP_HOOK_SERVERS: "*" }, files({})).hookServers).toBe("*");
  expect(loadConfig({}, { HOME, TENDRIL_MCP_HOOK_SERVERS: "a, b" }, files({})).hookServers).toEqual(["a", "b"]);
});
