import { expect, test } from "bun:test";
import { configFileKeys, ConfigError, loadConfig } from "./config.ts";

const HOME = "/home/u";
const files = (m: Record<string, string>) => (p: string) => m[p];

test("XDG paths default under HOME and follow XDG_* variables", async () => {
  const c = await loadConfig({}, { HOME }, files({}));
  expect(c.paths.configFile).toBe("/home/u/.config/tendril/config.toml");
  expect(c.paths.stateDir).toBe("/home/u/.local/state/tendril");
  expect(c.paths.cacheDir).toBe("/home/u/.cache/tendril");
  const x = await loadConfig({}, { HOME, XDG_CONFIG_HOME: "/c", XDG_STATE_HOME: "/s", XDG_CACHE_HOME: "/k" }, files({}));
  expect([x.paths.configFile, x.paths.stateDir, x.paths.cacheDir]).toEqual([
    "/c/tendril/config.toml",
    "/s/tendril",
    "/k/tendril",
  ]);
});

test("precedence: flag > environment > config file > default", async () => {
  const file = { "/home/u/.config/tendril/config.toml": 'model = "from-file"\nprovider = "openai"\nlog = "info"\n' };
  expect((await loadConfig({}, { HOME }, files({}))).model).toBe("gpt-5.5");
  expect((await loadConfig({}, { HOME }, files(file))).model).toBe("from-file");
  expect((await loadConfig({}, { HOME, TENDRIL_MODEL: "from-env" }, files(file))).model).toBe("from-env");
  expect((await loadConfig({ model: "from-flag" }, { HOME, TENDRIL_MODEL: "from-env" }, files(file))).model).toBe("from-flag");
  expect((await loadConfig({}, { HOME }, files(file))).logLevel).toBe("info");
  expect((await loadConfig({}, { HOME, TENDRIL_LOG: "debug" }, files(file))).logLevel).toBe("debug");
});

test("provider defaults to anthropic only when its key is set", async () => {
  expect((await loadConfig({}, { HOME }, files({}))).provider).toBe("openai");
  expect((await loadConfig({}, { HOME, ANTHROPIC_API_KEY: "k" }, files({}))).provider).toBe("anthropic");
});

test("rules, mcp entries and limits come from the file", async () => {
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
  const c = await loadConfig({ config: "/p.toml" }, { HOME }, files({ "/p.toml": toml }));
  expect(c.rules).toEqual([
    { tool: "dev__shell", decision: "deny", when: { arg: "command", prefix: "rm " }, label: expect.any(String), matches: expect.any(Function) },
  ]);
  expect(c.mcp).toEqual([{ name: "fs", command: "/bin/fs-server", args: ["--x"], env: { A: "1" } }]);
  expect(c.limits.MAX_LINE_BYTES).toBe(1024);
  // the environment still wins over the file
  expect((await loadConfig({ config: "/p.toml" }, { HOME, TENDRIL_MAX_LINE_BYTES: "2048" }, files({ "/p.toml": toml }))).limits
    .MAX_LINE_BYTES).toBe(2048);
});

test("bad values are clear errors naming the file or the variable", async () => {
  await expect(loadConfig({ config: "/nope.toml" }, { HOME }, files({}))).rejects.toThrow("config file not found: /nope.toml");
  await expect(loadConfig({ config: "/b.toml" }, { HOME }, files({ "/b.toml": "model = " }))).rejects.toThrow("/b.toml");
  await expect(loadConfig({}, { HOME, TENDRIL_PROVIDER: "gemini" }, files({}))).rejects.toThrow(ConfigError);
  await expect(loadConfig({}, { HOME, TENDRIL_LOG: "loud" }, files({}))).rejects.toThrow("log level");
  await expect(loadConfig({ mode: "wild" }, { HOME }, files({}))).rejects.toThrow("mode must be one of");
  await expect(loadConfig({}, { HOME, TENDRIL_MAX_TOKENS: "many" }, files({}))).rejects.toThrow("TENDRIL_MAX_TOKENS");
  await expect(loadConfig({}, { HOME, TENDRIL_SHELL_OUTPUT: "short" }, files({}))).rejects.toThrow('TENDRIL_SHELL_OUTPUT must be one of digest, raw, got "short"');
  const badRule = '[[rules]]\ntool = "x"\ndecision = "maybe"\n';
  await expect(loadConfig({ config: "/r.toml" }, { HOME }, files({ "/r.toml": badRule }))).rejects.toThrow("r.toml: rules[0].decision: decision must be allow, deny or ask");
});

test("regression: settings were accepted and ignored; every config key either takes effect or is refused", async () => {
  const cases: Record<string, [string, (c: Awaited<ReturnType<typeof loadConfig>>) => unknown, unknown]> = {
    provider: ['provider = "replay"', (c) => c.provider, "replay"],
    model: ['model = "m1"', (c) => c.model, "m1"],
    models: ['models = ["a", "b"]', (c) => c.models, ["a", "b"]],
    max_tokens: ["max_tokens = 77", (c) => c.maxTokens, 77],
    context_window: ["context_window = 1234", (c) => c.contextWindow, 1234],
    mode: ['mode = "yolo"', (c) => c.mode, "yolo"],
    log: ['log = "debug"', (c) => c.logLevel, "debug"],
    system_prompt: ['system_prompt = "be brief"', (c) => c.systemPrompt, "be brief"],
    rules: ['[[rules]]\ntool = "a__b"\ndecision = "deny"', (c) => c.rules.length, 1],
    mcp: ['[[mcp]]\nname = "x"\nurl = "http://127.0.0.1:1/mcp"', (c) => c.mcp[0]?.url, "http://127.0.0.1:1/mcp"],
    limits: ["[limits]\nmax_tools = 5", (c) => c.limits.MAX_TOOLS, 5],
    mcp_hook_servers: ['mcp_hook_servers = "dev, fs"', (c) => c.hookServers, ["dev", "fs"]],
    sandbox: ['sandbox = "read-only"', (c) => c.sandbox.mode, "read-only"],
    sandbox_network: ["sandbox_network = true", (c) => c.sandbox.network, true],
    sandbox_hide: ['sandbox_hide = ["~/keys", "/srv/secret"]', (c) => c.sandbox.hide, [`${HOME}/keys`, "/srv/secret"]],
    sandbox_allow_domains: ['sandbox_allow_domains = ["Registry.npmjs.org", "*.github.com"]', (c) => c.sandbox.allowDomains, ["registry.npmjs.org", "*.github.com"]],
    openai_api: ['openai_api = "chat"', (c) => c.openaiApi, "chat"],
    prompt_cache_key: ["prompt_cache_key = false", (c) => c.promptCacheKey, false],
    prompt_cache: ['prompt_cache = "off"', (c) => c.promptCache, "off"],
    shell_output: ['shell_output = "raw"', (c) => c.shellOutput, "raw"],
    prices: ['[prices."m"]\ninput = 1\noutput = 2\ncache_write = 1.25\ncache_read = 0.1', (c) => c.prices.m, { input: 1, output: 2, cacheWrite: 1.25, cacheRead: 0.1 }],
  };
  expect(Object.keys(cases).sort()).toEqual((await configFileKeys()).sort());
  for (const [key, [toml, read, want]] of Object.entries(cases)) {
    const load = () => loadConfig({ config: "/k.toml" }, { HOME }, files({ "/k.toml": toml }));
    if (want === "refused") {
      await expect(load()).rejects.toThrow(`/k.toml: ${key}`);
      continue;
    }
    expect([key, read(await load())]).toEqual([key, want]);
  }
  // Not built yet, so refused wherever they come from.
  expect((await loadConfig({}, { HOME, TENDRIL_MCP_HOOK_SERVERS: "*" }, files({}))).hookServers).toBe("*");
  expect((await loadConfig({}, { HOME }, files({}))).hookServers).toEqual([]);
  await expect(loadConfig({}, { HOME, TENDRIL_PROFILE: "p" }, files({}))).rejects.toThrow("profile not found: /home/u/.config/tendril/agents/p.toml");
  // A domain pattern that is not a host is refused, naming the entry; with sandbox_network it would change nothing.
  for (const bad of ["https://example.com", "example.com:99999", "example.com:", "example.com/path", "*", "*.", "a..b", "exa mple.com", "-x.com", "1.2.3.999", "*.1.2.3.4", ""]) {
    await expect(loadConfig({ config: "/d.toml" }, { HOME }, files({ "/d.toml": `sandbox_allow_domains = [${JSON.stringify(bad)}]` }))).rejects.toThrow(
      `/d.toml: sandbox_allow_domains: ${JSON.stringify(bad)} is not a host name`,
    );
  }
  expect((await loadConfig({ config: "/d.toml" }, { HOME }, files({ "/d.toml": 'sandbox_allow_domains = ["localhost", "127.0.0.1", "x-y.example"]' }))).sandbox.allowDomains).toEqual(["localhost", "127.0.0.1", "x-y.example"]);
  await expect(loadConfig({ config: "/d.toml" }, { HOME }, files({ "/d.toml": 'sandbox_network = true\nsandbox_allow_domains = ["a.example"]' }))).rejects.toThrow("give one of them");
  // The sandbox setting: flag > env > profile > file, and a bad value anywhere names the choices.
  const sb = files({ "/s.toml": 'sandbox = "read-only"' });
  expect((await loadConfig({ config: "/s.toml" }, { HOME }, sb)).sandbox).toEqual({ mode: "read-only", network: false, hide: [], allowDomains: [] });
  expect((await loadConfig({ config: "/s.toml" }, { HOME, TENDRIL_SANDBOX: "workspace-write" }, sb)).sandbox.mode).toBe("workspace-write");
  expect((await loadConfig({ config: "/s.toml", sandbox: "off" }, { HOME, TENDRIL_SANDBOX: "workspace-write" }, sb)).sandbox.mode).toBe("off");
  expect((await loadConfig({}, { HOME }, files({}))).sandbox.mode).toBe("off");
  await expect(loadConfig({ sandbox: "strict" }, { HOME }, files({}))).rejects.toThrow('sandbox must be one of off, read-only, workspace-write, got "strict"');
  await expect(loadConfig({ config: "/h.toml" }, { HOME }, files({ "/h.toml": 'sandbox_hide = ["keys"]' }))).rejects.toThrow("must be an absolute path or start with ~/");
  expect((await loadConfig({ config: "/ms.toml" }, { HOME }, files({ "/ms.toml": '[[mcp]]\nname = "x"\ncommand = "c"\nsandbox = "read-only"' }))).mcp[0]!.sandbox).toBe("read-only");
  await expect(loadConfig({ config: "/mu.toml" }, { HOME }, files({ "/mu.toml": '[[mcp]]\nname = "x"\nurl = "http://127.0.0.1:1/"\nsandbox = "read-only"' }))).rejects.toThrow(
    "sandbox confines a server this agent starts (command), not one it reaches by url",
  );
  await expect(loadConfig({ config: "/mb.toml" }, { HOME }, files({ "/mb.toml": '[[mcp]]\nname = "x"\ncommand = "c"\nsandbox = "strict"' }))).rejects.toThrow("/mb.toml: mcp[0].sandbox: Invalid option");
  // A key the file may not hold is named, not ignored.
  await expect(loadConfig({ config: "/u.toml" }, { HOME }, files({ "/u.toml": 'modle = "x"' }))).rejects.toThrow(/u\.toml.*modle/);
  await expect(loadConfig({ config: "/m.toml" }, { HOME }, files({ "/m.toml": '[[mcp]]\nname = "x"\ncommand = "c"\nargs = "x"' }))).rejects.toThrow(
    "/m.toml: mcp[0].args: Invalid input: expected array",
  );
});

test("A8: a wildcard on a public suffix is refused at config time; a pattern may name a port", async () => {
  expect((await loadConfig({ config: "/d.toml" }, { HOME }, files({ "/d.toml": 'sandbox_allow_domains = ["Example.com:8080", "*.corp.co.uk", "10.0.0.1:443"]' }))).sandbox.allowDomains).toEqual(["example.com:8080", "*.corp.co.uk", "10.0.0.1:443"]);
  // the config names the file and the entry; which suffixes are refused is core/host-patterns.test.ts's table
  for (const suffix of ["*.com", "*.dev:8443", "*.r2.dev", "*.s3.amazonaws.com"]) {
    await expect(loadConfig({ config: "/d.toml" }, { HOME }, files({ "/d.toml": `sandbox_allow_domains = [${JSON.stringify(suffix)}]` }))).rejects.toThrow(
      `/d.toml: sandbox_allow_domains: ${JSON.stringify(suffix)} *.${suffix.slice(2).replace(/:\d+$/, "")} covers a public suffix, under which anyone can register a name`,
    );
  }
});
