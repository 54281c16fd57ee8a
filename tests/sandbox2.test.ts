// End-to-end tests of the sandbox's second round (SPEC §3.8) through the built binary with the real
// bubblewrap: sandbox_allow_domains through the agent's proxy (a loopback HTTP server stands in for an
// allowed host; no real network), and the bad-input and escape list with its `off` control.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callTool, startDevMcp, stopDevMcps, textOf, type ToolResult } from "./dev-mcp-harness.ts";
import { hostAllowed, nameRefusedAddress, startEgressProxy } from "../tools/dev/egress-proxy.ts";
import { loadPublicSuffixes } from "../core/host-patterns.ts";
import type { McpCallResult, McpSessionTools, McpToolInfo } from "../core/mcp/types.ts";
import { createPolicy } from "../core/policy/policy.ts";
import { ApprovalStore } from "../core/policy/approvals.ts";
import { type PermissionAnswer, type PermissionAsk, runToolCalls } from "../core/agent/tool-calls.ts";
import { decidePermission } from "../core/acp-client/approve.ts";
import { startAgent, type TestAgent } from "./acp-client.ts";
import { agentEnv } from "./agent-env.ts";
import { type FakeLlm, startFakeLlm } from "./fake-llm.ts";
import { BWRAP, requireBwrapUnderCi } from "./bwrap.ts";

const CURL = ["/usr/bin/curl", "/bin/curl"].find((p) => existsSync(p));
requireBwrapUnderCi("tests/sandbox2.test.ts");
if (!CURL) console.warn("tests/sandbox2.test.ts: curl is not installed: the sandbox_allow_domains tests through the binary are skipped");

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-sandbox2-")));
const ws = join(base, "ws");
let web: HttpServer;
/** The fake LLM every agent of this file talks to, and the agents to close after it. */
let fake: FakeLlm;
const agents: TestAgent[] = [];
const agent = (opts: Parameters<typeof startAgent>[0]) => {
  const a = startAgent(opts);
  agents.push(a);
  return a;
};
let webPort = 0;
const hits: string[] = [];

beforeAll(async () => {
  mkdirSync(ws, { recursive: true });
  // The stand-in for an allowed host: answers every request with its path.
  web = createHttpServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.end(`served ${req.url}\n`);
  });
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  webPort = (web.address() as { port: number }).port;
  fake = await startFakeLlm();
});
afterEach(stopDevMcps);
afterAll(async () => {
  for (const a of agents) await a.close(2000).catch(() => {});
  await fake?.close();
  web?.close();
  rmSync(base, { recursive: true, force: true });
});

const exitOf = (r: ToolResult) => r.structuredContent?.exit_code as number;
const stdoutOf = (r: ToolResult) => String(r.structuredContent?.stdout ?? "");

function config(name: string, toml: string): Record<string, string> {
  const file = join(base, name);
  writeFileSync(file, toml);
  return { TENDRIL_CONFIG: file };
}

describe("the allow-domains proxy (in process)", () => {
  test("host patterns: exact names and *. subdomains, case-insensitive; nothing else", async () => {
    const p = ["registry.npmjs.org", "*.github.com", "127.0.0.1"];
    await loadPublicSuffixes(p);
    expect(["registry.npmjs.org", "REGISTRY.npmjs.org.", "api.github.com", "a.b.github.com", "127.0.0.1"].filter((h) => hostAllowed(h, 443, p))).toHaveLength(5);
    expect(["github.com", "evilgithub.com", "npmjs.org", "registry.npmjs.org.evil", "127.0.0.2", "localhost"].filter((h) => hostAllowed(h, 443, p))).toEqual([]);
  });

  test("regression: an allowed name that resolves to this machine or link-local (cloud metadata) reached the host's own services; refused now, the address itself still allowed", async () => {
    expect(["127.0.0.1", "127.1.2.3", "0.0.0.0", "169.254.169.254", "::1", "::", "fe80::1", "::ffff:127.0.0.1"].filter((a) => nameRefusedAddress(a) !== undefined)).toHaveLength(8);
    expect(["8.8.8.8", "2001:db8::1", "::ffff:8.8.8.8"].filter((a) => nameRefusedAddress(a) !== undefined)).toEqual([]);
    const proxy = await startEgressProxy(0, [`localhost:${webPort}`]);
    try {
      const { connect } = await import("node:net");
      const s = connect(proxy.port!, "127.0.0.1");
      let got = "";
      s.on("data", (b) => (got += b.toString()));
      s.write(`GET http://localhost:${webPort}/secret HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      await new Promise((r) => s.once("close", r));
      expect(got).toStartWith("HTTP/1.1 403 Forbidden");
      expect(got).toMatch(/localhost resolves to (127\.0\.0\.1|::1) \(this machine\)/);
      expect(got).not.toContain("served /secret");
      expect(proxy.refused).toEqual(["localhost"]);
    } finally {
      await proxy.close();
    }
  });

  test("regression: a wildcard over a domain holding public suffixes reached anyone's bucket; the 403 names the suffix, and no name is resolved", async () => {
    const asked: string[] = [];
    const proxy = await startEgressProxy(0, ["*.amazonaws.com"], { resolve: async (h) => (asked.push(h), "127.0.0.1") });
    try {
      const { connect } = await import("node:net");
      const s = connect(proxy.port!, "127.0.0.1");
      let got = "";
      s.on("data", (b) => (got += b.toString()));
      s.write("CONNECT attacker.s3.amazonaws.com:443 HTTP/1.1\r\n\r\n");
      await new Promise((r) => s.once("close", r));
      expect(got).toStartWith("HTTP/1.1 403 Forbidden");
      expect(got).toContain("attacker.s3.amazonaws.com is not reachable from this command: it is a name registered under the public suffix s3.amazonaws.com");
      expect({ refused: proxy.refused, asked }).toEqual({ refused: ["attacker.s3.amazonaws.com"], asked: [] });
    } finally {
      await proxy.close();
    }
  });

  test("relays plain HTTP and CONNECT to an allowed host; refuses another host with a 403 naming it and the setting", async () => {
    const proxy = await startEgressProxy(0, [`127.0.0.1:${webPort}`, "127.0.0.1:1"]);
    try {
      const viaProxy = async (head: string) => {
        const { connect } = await import("node:net");
        const s = connect(proxy.port!, "127.0.0.1");
        let got = "";
        s.on("data", (b) => (got += b.toString()));
        s.write(head);
        await new Promise((r) => s.once("close", r));
        return got;
      };
      expect(await viaProxy(`GET http://127.0.0.1:${webPort}/plain?q=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nProxy-Connection: keep-alive\r\n\r\n`)).toContain("served /plain?q=1");
      const tunnel = await viaProxy(`CONNECT 127.0.0.1:${webPort} HTTP/1.1\r\n\r\nGET /tunnel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(tunnel).toStartWith("HTTP/1.1 200 Connection Established\r\n\r\n");
      expect(tunnel).toContain("served /tunnel");
      const refused = await viaProxy("CONNECT example.com:443 HTTP/1.1\r\n\r\n");
      expect(refused).toStartWith("HTTP/1.1 403 Forbidden");
      expect(refused).toContain(`example.com is not reachable from this command: sandbox_allow_domains lets through only 127.0.0.1:${webPort}, 127.0.0.1:1`);
      expect(await viaProxy("GET http://localhost/ HTTP/1.1\r\n\r\n")).toContain("localhost is not reachable");
      expect(await viaProxy("garbage\r\n\r\n")).toStartWith("HTTP/1.1 400");
      expect(await viaProxy("CONNECT 127.0.0.1:99999 HTTP/1.1\r\n\r\n")).toStartWith("HTTP/1.1 400");
      expect(proxy.refused).toEqual(["example.com", "localhost"]);
      // An allowed host that is down: a 502 that says so, not a dropped connection.
      expect(await viaProxy("CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n")).toMatch(/^HTTP\/1\.1 502 Bad Gateway[\s\S]*cannot reach 127\.0\.0\.1:1/);
    } finally {
      await proxy.close();
    }
  });
});

describe.skipIf(!BWRAP || !CURL)("sandbox_allow_domains through the binary", () => {
  test("an allowed host is reached through the proxy (HTTP and CONNECT); any other is refused, naming the host and the setting", async () => {
    const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "workspace-write", ...config("domains.toml", `sandbox_allow_domains = ["127.0.0.1:${webPort}"]\n`) });
    expect(client.getInstructions()).toContain(`network only to 127.0.0.1:${webPort} through the HTTP(S)_PROXY given`);
    const plain = await callTool(client, "shell", { command: `curl -sS http://127.0.0.1:${webPort}/inside && echo "$HTTPS_PROXY"` });
    expect({ exit: exitOf(plain), out: stdoutOf(plain) }).toEqual({ exit: 0, out: "served /inside\nhttp://127.0.0.1:3128\n" });
    expect(textOf(plain)).not.toContain("sandbox:");
    const tunnel = await callTool(client, "shell", { command: `curl -sS -p http://127.0.0.1:${webPort}/tunnelled` });
    expect({ exit: exitOf(tunnel), out: stdoutOf(tunnel) }).toEqual({ exit: 0, out: "served /tunnelled\n" });
    expect(hits).toContain("GET /tunnelled");

    const other = await callTool(client, "shell", { command: `curl -sS http://localhost:${webPort}/no` });
    expect(exitOf(other)).toBe(0); // curl prints the proxy's 403 page and succeeds
    expect(stdoutOf(other)).toContain("localhost is not reachable from this command: sandbox_allow_domains lets through only 127.0.0.1");
    expect(other.structuredContent?.sandbox_note).toContain(`sandbox: the proxy refused localhost: not in sandbox_allow_domains (127.0.0.1:${webPort})`);
    expect(hits).not.toContain("GET /no");
    const tls = await callTool(client, "shell", { command: "curl -sS https://example.com/" });
    expect(exitOf(tls)).not.toBe(0);
    expect(textOf(tls)).toContain("sandbox: the proxy refused example.com");
    // Without the proxy there is still no network at all: the host's loopback is not the sandbox's.
    const direct = await callTool(client, "shell", { command: `curl -sS --noproxy '*' http://127.0.0.1:${webPort}/direct` });
    expect(exitOf(direct)).not.toBe(0);
    expect(hits).not.toContain("GET /direct");
  });

  test("a timeout still kills the command and its forwarder, and the proxy's socket folder is removed", async () => {
    const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "workspace-write", ...config("domains-kill.toml", `sandbox_allow_domains = ["127.0.0.1:${webPort}"]\n`) });
    const marker = "300.93";
    const alive = () =>
      readdirSync("/proc").filter((p) => /^\d+$/.test(p)).some((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(marker);
        } catch {
          return false;
        }
      });
    const t0 = Date.now();
    const r = await callTool(client, "shell", { command: `sleep ${marker}`, timeout_s: 1 });
    expect(r.structuredContent?.timed_out).toBe(true);
    expect(Date.now() - t0).toBeLessThan(10_000);
    for (let i = 0; i < 100 && alive(); i++) await Bun.sleep(10);
    expect(alive()).toBe(false);
    expect(readdirSync(base).filter((n) => n.startsWith("tendril-proxy-"))).toEqual([]);
  });

  test("read-only reaches the proxy too (its socket sits on the read-only root)", async () => {
    const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "read-only", ...config("domains-ro.toml", `sandbox_allow_domains = ["127.0.0.1:${webPort}"]\n`) });
    const r = await callTool(client, "shell", { command: `curl -sS http://127.0.0.1:${webPort}/ro` });
    expect({ exit: exitOf(r), out: stdoutOf(r) }).toEqual({ exit: 0, out: "served /ro\n" });
  });

  test("the setting refuses a pattern that is not a host, naming it", async () => {
    const { runBin } = await import("./binary.ts");
    const r = runBin(["dev-mcp", "--root", ws], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base, ...config("bad.toml", 'sandbox_allow_domains = ["https://registry.npmjs.org/"]\n') }, input: "" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('sandbox_allow_domains: "https://registry.npmjs.org/" is not a host name');
  });
});

/** A `dev` server stand-in whose shell the sandbox "stops" and whose hook runs the command for real. */
function confinedTools(ran: string[]): McpSessionTools {
  const info = (tool: string, hook = false): McpToolInfo => ({ qualifiedName: `dev__${tool}`, server: "dev", tool, description: tool, inputSchema: { type: "object" }, readOnly: false, hook });
  const reply = (text: string, structured?: Record<string, unknown>): McpCallResult => ({ content: [{ type: "text", text }], text, isError: false, ...(structured ? { structured } : {}) });
  return {
    tools: () => [info("shell"), info("_ShellUnsandboxed", true)],
    instructions: () => ({}),
    onToolsChanged: () => {},
    close: async () => {},
    async call(name, args) {
      ran.push(`${name} ${args.command}`);
      if (name === "dev___ShellUnsandboxed") return reply("exit_code: 0 (unconfined)");
      return reply("exit_code: 1\nRead-only file system", { exit_code: 1, sandbox_note: "sandbox: this command ran confined" });
    },
  };
}

describe("a command the sandbox stopped: asking to run it unsandboxed (in memory)", () => {
  const run = async (mode: "ask" | "yolo" | "auto-edit", answers: PermissionAnswer[], store?: ApprovalStore, command = "make install") => {
    const ran: string[] = [];
    const asks: PermissionAsk[] = [];
    const policy = createPolicy({ mode, rules: [], workspace: "/w", ...(store ? { approvals: store } : {}) });
    const ctx = {
      tools: confinedTools(ran), policy, cwd: "/w", maxParallel: 4, maxResultBytes: 10_000, maxImageBytes: 1000, progressPerS: 100, toolTimeoutMs: 10_000,
      signal: new AbortController().signal, emit: () => {},
      askPermission: async (ask: PermissionAsk) => (asks.push(ask), answers.shift() ?? "reject_once"),
    };
    const [result] = await runToolCalls([{ call: { id: "c1", name: "dev__shell", input: { command } } }], ctx);
    return { ran, asks, result: result!, policy, ctx };
  };

  test("ask mode: the user is asked about that one command; allow runs it unsandboxed, reject keeps the sandbox's result", async () => {
    const allowed = await run("ask", ["allow_once", "allow_once"]);
    expect(allowed.asks.map((a) => a.title)).toEqual(["shell: make install", "The sandbox stopped this command. Run it once without the sandbox? make install"]);
    expect(allowed.asks[1]!._meta.toolName).toBe("dev___ShellUnsandboxed");
    expect(allowed.ran).toEqual(["dev__shell make install", "dev___ShellUnsandboxed make install"]);
    expect(allowed.result.content).toStartWith("[ran again without the sandbox, as the user allowed");
    const rejected = await run("ask", ["allow_once", "reject_once"]);
    expect(rejected.ran).toEqual(["dev__shell make install"]);
    expect(rejected.result.content).toContain("Read-only file system\n[the user declined to run this command without the sandbox]");
  });

  test("A3: an always answer to the unsandboxed retry is remembered for that exact command only, in the session and later sessions", async () => {
    const dir = mkdtempSync(join(base, "approvals-"));
    const store = new ApprovalStore(dir);
    const first = await run("ask", ["allow_once", "allow_always"], store, "ls -la");
    expect(first.asks[1]!.allowAlways).toBe("Always run this exact command without the sandbox");
    expect(store.list("/w").map((a) => a.scope)).toEqual(["dev___ShellUnsandboxed ls -la"]);
    // A later session: asked only for the shell call; another command with the same first word is asked again.
    const later = await run("ask", ["allow_once"], new ApprovalStore(dir), "ls -la");
    expect({ asks: later.asks.length, ran: later.ran }).toEqual({ asks: 1, ran: ["dev__shell ls -la", "dev___ShellUnsandboxed ls -la"] });
    const other = await run("ask", ["allow_once", "reject_once"], new ApprovalStore(dir), "ls /");
    expect({ asks: other.asks.length, ran: other.ran }).toEqual({ asks: 2, ran: ["dev__shell ls /"] });
    expect((await run("ask", ["allow_once", "reject_always"], new ApprovalStore(dir), "curl x")).ran).toHaveLength(1);
    const again = await run("ask", ["allow_once"], new ApprovalStore(dir), "curl x");
    expect(again.asks).toHaveLength(1);
    expect(again.result.content).toContain("[not run again unsandboxed: rejected always in /w]");
  });

  test("yolo never lifts the sandbox (nobody is asked), and `tendril prompt --approve all` does not answer yes for the user", async () => {
    const yolo = await run("yolo", []);
    expect({ asks: yolo.asks.length, ran: yolo.ran }).toEqual({ asks: 0, ran: ["dev__shell make install"] });
    const options = [{ optionId: "a", kind: "allow_once" }, { optionId: "r", kind: "reject_once" }];
    expect(decidePermission({ kind: "all" }, { id: "1", name: "dev___ShellUnsandboxed" }, options, "/w").allowed).toBe(false);
    expect(decidePermission({ kind: "all" }, { id: "1", name: "dev__shell" }, options, "/w").allowed).toBe(true);
  });
});

describe.skipIf(!BWRAP || !CURL)("the permission round trip through the binary", () => {
  test("the proxy refuses a host (the sandbox stopped it); rejected, nothing more runs; allowed once, it runs unsandboxed", async () => {
    const domains = config("retry.toml", 'sandbox_allow_domains = ["127.0.0.1"]\n');
    const a = agent({ args: ["agent", "--sandbox", "workspace-write"], env: { ...agentEnv(fake, base), HOME: base, TENDRIL_MODE: "ask", ...domains }, script: ["allow_once", "reject_once", "allow_once", "allow_once"] });
    await a.initialize();
    const { sessionId } = await a.newSession(ws);
    const fetch = (path: string) => `curl -sS -o /dev/null http://localhost:${webPort}/${path}`;
    fake.script([{ toolCalls: [{ id: "s1", name: "dev__shell", input: { command: fetch("retry-rejected") } }] }, { text: "kept" }]);
    await a.prompt(sessionId, "first");
    expect(a.permissions.map((p) => p.request.toolCall.title)).toEqual([`shell: ${fetch("retry-rejected")}`, `The sandbox stopped this command. Run it once without the sandbox? ${fetch("retry-rejected")}`]);
    expect(hits).not.toContain("GET /retry-rejected");
    fake.script([{ toolCalls: [{ id: "s2", name: "dev__shell", input: { command: fetch("retry-allowed") } }] }, { text: "done" }]);
    const before = fake.requests.length;
    await a.prompt(sessionId, "second");
    expect(a.permissions).toHaveLength(4);
    expect(a.permissions[3]!.request.options.map((o) => o.name)).toContain("Always run this exact command without the sandbox");
    expect(hits).toContain("GET /retry-allowed");
    expect(JSON.stringify(fake.requests[before + 1]!.body.messages)).toContain("[ran again without the sandbox, as the user allowed");
  });
});

describe.skipIf(!BWRAP)("[[mcp]] sandbox: a stdio server confined like commands", () => {

  /** The fake MCP server from config, `sandbox` as given; `hidden` in sandbox_hide. */
  async function readThrough(sandbox: string | undefined, path: string): Promise<string> {
    const hidden = join(base, "mcp-secret.txt");
    writeFileSync(hidden, "MCP SECRET\n");
    const server = `[[mcp]]\nname = "fake"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(join(import.meta.dir, "fake-mcp.ts"))}]\n${sandbox ? `sandbox = "${sandbox}"\n` : ""}`;
    const env = { ...agentEnv(fake, base), HOME: base, TENDRIL_MODE: "yolo", ...config(`mcp-${sandbox ?? "none"}.toml`, `sandbox_hide = [${JSON.stringify(hidden)}]\n${server}`) };
    const a = agent({ env });
    await a.initialize();
    const { sessionId } = await a.newSession(ws);
    fake.script([{ toolCalls: [{ id: "r1", name: "fake__read", input: { path } }] }, { text: "read" }]);
    const before = fake.requests.length;
    await a.prompt(sessionId, "read it");
    return JSON.stringify(fake.requests[before + 1]!.body.messages);
  }

  test("confined, the fake MCP server cannot read a hidden file but reads the workspace; unconfined (the control) it reads both", async () => {
    writeFileSync(join(ws, "visible.txt"), "VISIBLE\n");
    const hidden = join(base, "mcp-secret.txt");
    const confined = await readThrough("workspace-write", hidden);
    expect(confined).not.toContain("MCP SECRET");
    expect(confined).toContain(`cannot read ${hidden}`);
    expect(await readThrough("read-only", join(ws, "visible.txt"))).toContain("VISIBLE");
    expect(await readThrough(undefined, hidden)).toContain("MCP SECRET");
  });

  test("fail closed: a confined server where bwrap is missing fails the session's start, saying why", async () => {
    const bin = join(base, "bin-no-bwrap-mcp");
    mkdirSync(bin, { recursive: true });
    const server = `[[mcp]]\nname = "fake"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(join(import.meta.dir, "fake-mcp.ts"))}]\nsandbox = "read-only"\n`;
    const a = agent({ env: { ...agentEnv(fake, base), HOME: base, PATH: bin, ...config("mcp-nobwrap.toml", server) } });
    await a.initialize();
    const err = await a.newSession(ws).then(() => undefined, (e: Error) => e);
    expect(String(err?.message ?? JSON.stringify(err))).toContain('MCP server fake: sandbox = "read-only": the sandbox cannot start: bwrap (bubblewrap) is not on PATH');
  });
});

describe.skipIf(!BWRAP)("the ACP config option `sandbox` and the fail-closed notice", () => {
  const start = (env: Record<string, string> = {}, args: string[] = []) => {
    return agent({ args: ["agent", ...args], env: { ...agentEnv(fake, base), HOME: base, TENDRIL_MODE: "yolo", ...env } });
  };
  const initWithNotices = (a: TestAgent) =>
    a.agent.request("initialize" as never, { protocolVersion: 1, clientCapabilities: { session: { notices: {} } }, clientInfo: { name: "t", version: "0" } } as never);
  const shell = async (a: TestAgent, sessionId: string, command: string) => {
    fake.script([{ toolCalls: [{ id: `c${fake.requests.length}`, name: "dev__shell", input: { command } }] }, { text: "ok" }]);
    const before = fake.requests.length;
    await a.prompt(sessionId, "run");
    return JSON.stringify(fake.requests[before + 1]!.body.messages.at(-1));
  };

  test("an editor switches the sandbox per session: off by default, then workspace-write confines, then off again", async () => {
    const a = start();
    await a.initialize();
    const created = (await a.newSession(ws)) as { sessionId: string; configOptions: { id: string; currentValue: string; options: { value: string }[] }[] };
    const option = created.configOptions.find((o) => o.id === "sandbox")!;
    expect({ current: option.currentValue, values: option.options.map((o) => o.value) }).toEqual({ current: "off", values: ["off", "read-only", "workspace-write"] });
    const outside = join(base, "switch-outside.txt");
    const set = (value: string) => a.agent.request("session/set_config_option" as never, { sessionId: created.sessionId, configId: "sandbox", value } as never) as Promise<{ configOptions: { id: string; currentValue: string }[] }>;
    const answer = await set("workspace-write");
    expect(answer.configOptions.find((o) => o.id === "sandbox")!.currentValue).toBe("workspace-write");
    await shell(a, created.sessionId, `touch ${outside}`); // into the command's private /tmp, not the host's
    expect(existsSync(outside)).toBe(false);
    // Another session of the same agent keeps its own setting.
    const other = await a.newSession(ws);
    expect(await shell(a, other.sessionId, `touch ${outside}`)).not.toContain("sandbox:");
    expect(existsSync(outside)).toBe(true);
    rmSync(outside);
    await set("off");
    await shell(a, created.sessionId, `touch ${outside}`);
    expect(existsSync(outside)).toBe(true);
    const bad = await set("strict").then(() => undefined, (e: { message?: string }) => e);
    expect(String(bad?.message)).toContain('unknown sandbox setting: "strict" (settings: off, read-only, workspace-write)');
  });

  test("the sandbox choice is saved with the session: session/load brings back a stricter one, never one looser than the agent is set to", async () => {
    const home = join(base, "home-sandbox-saved");
    mkdirSync(home, { recursive: true });
    const sandboxOf = (answer: unknown) => (answer as { configOptions: { id: string; currentValue: string }[] }).configOptions.find((o) => o.id === "sandbox")!.currentValue;
    const set = (a: TestAgent, sessionId: string, value: string) => a.agent.request("session/set_config_option" as never, { sessionId, configId: "sandbox", value } as never);
    const load = (a: TestAgent, sessionId: string) => a.agent.request("session/load" as never, { sessionId, cwd: ws, mcpServers: [] } as never);
    // configured off: a session that chose workspace-write comes back confined
    const first = start({ HOME: home });
    await first.initialize();
    const { sessionId: tightened } = await first.newSession(ws);
    await set(first, tightened, "workspace-write");
    fake.script([{ text: "hi" }, { text: "hi" }]);
    await first.prompt(tightened, "hello"); // a turn, so the session is on disk
    // configured workspace-write: a session that chose off comes back at workspace-write
    const { sessionId: loosened } = await first.newSession(ws);
    await set(first, loosened, "off");
    await first.prompt(loosened, "hello");
    await first.close();
    const again = start({ HOME: home });
    await again.initialize();
    expect(sandboxOf(await load(again, tightened))).toBe("workspace-write");
    const outside = join(base, "saved-sandbox-outside.txt");
    await shell(again, tightened, `touch ${outside}`); // into the command's private /tmp, not the host's
    expect(existsSync(outside)).toBe(false);
    await again.close();
    const strict = start({ HOME: home }, ["--sandbox", "workspace-write"]);
    await strict.initialize();
    expect(sandboxOf(await load(strict, loosened))).toBe("workspace-write");
    expect(sandboxOf(await load(strict, tightened))).toBe("workspace-write");
  });

  test("fail closed: with no bwrap, each session gets one notice saying why, and each command fails saying so", async () => {
    const bin = join(base, "bin-no-bwrap-notice");
    mkdirSync(bin, { recursive: true });
    for (const tool of ["bash", "touch"]) if (!existsSync(join(bin, tool))) (await import("node:fs")).symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
    const a = start({ PATH: bin }, ["--sandbox", "workspace-write"]);
    await initWithNotices(a);
    const notices = () => a.updates.filter((n) => (n.update as { sessionUpdate: string }).sessionUpdate === "notice");
    const { sessionId } = await a.newSession(ws);
    await a.untilUpdate(() => notices().length > 0, "sandbox notice");
    const out1 = await shell(a, sessionId, "touch notice-ran.txt");
    const out2 = await shell(a, sessionId, "touch notice-ran.txt");
    expect(out1).toContain("bwrap (bubblewrap) is not on PATH");
    expect(out2).toContain("bwrap (bubblewrap) is not on PATH");
    expect(existsSync(join(ws, "notice-ran.txt"))).toBe(false);
    expect(notices().map((n) => [n.sessionId, (n.update as { title?: string }).title])).toEqual([[sessionId, "The sandbox (workspace-write) cannot work here: shell commands will fail"]]);
    expect(JSON.stringify(notices()[0]!.update)).toContain("apt-get install bubblewrap");
    const second = await a.newSession(ws);
    await a.untilUpdate(() => notices().length >= 2, "second session's sandbox notice");
    expect(notices().map((n) => n.sessionId)).toEqual([sessionId, second.sessionId]);
    // Switching to another confined setting says it again (once); switching to off says nothing.
    const set = (value: string) => a.agent.request("session/set_config_option" as never, { sessionId, configId: "sandbox", value } as never);
    await set("read-only");
    await a.untilUpdate(() => notices().length >= 3, "sandbox notice after the switch");
    await set("read-only");
    await set("off");
    await shell(a, sessionId, "true");
    expect(notices().map((n) => (n.update as { title?: string }).title)).toEqual([
      "The sandbox (workspace-write) cannot work here: shell commands will fail",
      "The sandbox (workspace-write) cannot work here: shell commands will fail",
      "The sandbox (read-only) cannot work here: shell commands will fail",
    ]);
  });
});

describe.skipIf(!BWRAP)("bad input and escape attempts, each with its `off` control", () => {
  const secretDir = join(base, ".ssh");
  const secret = join(secretDir, "id_rsa");
  const running = () => existsSync(join(ws, "listening"));
  beforeAll(() => {
    mkdirSync(secretDir, { recursive: true });
    writeFileSync(secret, "PRIVATE KEY\n");
  });

  /** A loopback port nobody on the host listens on now. */
  async function freePort(): Promise<number> {
    const { createServer } = await import("node:net");
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    const port = (s.address() as { port: number }).port;
    await new Promise((r) => s.close(r));
    return port;
  }
  const hostConnects = async (port: number) => {
    const { connect } = await import("node:net");
    return new Promise<boolean>((resolve) => {
      const c = connect(port, "127.0.0.1");
      c.once("connect", () => (c.destroy(), resolve(true)));
      c.once("error", () => resolve(false));
    });
  };

  /** Each attempt: the command, and what tells that it got through. */
  const attempts = (tag: string) => ({
    plantedLink: { command: `ln -sfn ${secretDir} leak-${tag} && cat leak-${tag}/id_rsa`, leaked: (out: string) => out.includes("PRIVATE KEY") },
    remount: { command: `unshare -rm sh -c 'mount -o remount,rw / 2>&1; touch ${join(base, `remounted-${tag}`)}' ; cat ${join(base, `remounted-${tag}`)} >/dev/null 2>&1 && echo got-through`, leaked: (out: string) => out.includes("got-through") },
    procRoot: { command: `cat /proc/1/root${secret} 2>/dev/null || cat /proc/self/root${secret}`, leaked: (out: string) => out.includes("PRIVATE KEY") },
  });

  test("workspace-write: a planted symlink, a remount in a nested namespace and /proc/1/root read nothing and change nothing; `off` lets each through", async () => {
    const confined = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "workspace-write" });
    for (const [name, a] of Object.entries(attempts("c"))) {
      const out = stdoutOf(await callTool(confined.client, "shell", { command: a.command }));
      expect({ name, leaked: a.leaked(out) }).toEqual({ name, leaked: false });
    }
    expect(existsSync(join(base, "remounted-c"))).toBe(false);
    expect(readFileSync(secret, "utf8")).toBe("PRIVATE KEY\n");
    const off = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "off" });
    for (const [name, a] of Object.entries(attempts("o"))) {
      const out = stdoutOf(await callTool(off.client, "shell", { command: a.command }));
      expect({ name, leaked: a.leaked(out) }).toEqual({ name, leaked: true });
    }
  });

  test.skipIf(process.getuid?.() !== 0)("a setuid binary runs without its owner's rights inside (NoNewPrivs, nosuid); under `off` it gets them", async () => {
    const suid = join(base, "suid-id");
    const { copyFileSync, chmodSync, chownSync } = await import("node:fs");
    copyFileSync("/usr/bin/id", suid);
    chownSync(suid, 65534, 65534);
    chmodSync(suid, 0o4755);
    const confined = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "workspace-write" });
    expect(stdoutOf(await callTool(confined.client, "shell", { command: suid }))).not.toContain("euid=65534");
    const off = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "off" });
    expect(stdoutOf(await callTool(off.client, "shell", { command: suid }))).toContain("euid=65534");
  });

  test("a port bound inside is the sandbox's own: the host cannot reach it, and the host's loopback is unreachable from inside; `off` reaches both", async () => {
    for (const [mode, reachable] of [["workspace-write", false], ["off", true]] as const) {
      rmSync(join(ws, "listening"), { force: true });
      rmSync(join(ws, "stop-listening"), { force: true });
      const port = await freePort();
      const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: mode });
      // It listens until a connection comes or the host has tried (`stop-listening`: a connection the
      // host made is accepted first), at most 15 s.
      const serve = `perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => ${port}, Listen => 5, ReuseAddr => 1) or die "bind: $!"; open(F, ">listening"); close F; $s->blocking(0); for (1..1500) { $c = $s->accept; last if $c || -e "stop-listening"; select(undef, undef, undef, 0.01) } print $c ? "accepted\\n" : "nobody came\\n"'`;
      const call = callTool(client, "shell", { command: serve });
      for (let i = 0; i < 500 && !running(); i++) await Bun.sleep(10);
      expect({ mode, bound: running() }).toEqual({ mode, bound: true });
      expect({ mode, reached: await hostConnects(port) }).toEqual({ mode, reached: reachable });
      writeFileSync(join(ws, "stop-listening"), "");
      expect(stdoutOf(await call)).toBe(reachable ? "accepted\n" : "nobody came\n");
      const back = await callTool(client, "shell", { command: `exec 3<>/dev/tcp/127.0.0.1/${webPort} && printf 'GET /back HTTP/1.0\\r\\n\\r\\n' >&3 && head -1 <&3` });
      expect({ mode, back: exitOf(back) === 0 }).toEqual({ mode, back: reachable });
    }
  });

  test("regression: a host's unix socket on the read-only root could be connected to from inside (a tmux, D-Bus or docker socket runs commands outside); /tmp, /run and /dev/shm are private now, `off` still reaches it", async () => {
    const { createServer } = await import("node:net");
    const sock = join(base, "host.sock");
    rmSync(sock, { force: true });
    let connections = 0;
    const server = createServer((c) => {
      connections++;
      c.end("host-shell\n");
    });
    await new Promise<void>((r) => server.listen(sock, r));
    try {
      const client = `perl -MIO::Socket::UNIX -e '$c = IO::Socket::UNIX->new(Peer => "${sock}") or die "connect: $!\n"; print scalar <$c>'`;
      for (const mode of ["read-only", "workspace-write"] as const) {
        const { client: mcp } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: mode });
        const r = await callTool(mcp, "shell", { command: client });
        expect({ mode, exit: exitOf(r) === 0, out: stdoutOf(r) }).toEqual({ mode, exit: false, out: "" });
        // what the shell needs from the private /tmp is still there: the rg and tree shims (links to this binary)
        const shim = await callTool(mcp, "shell", { command: 'TENDRIL_RG_BUILTIN=1 rg --version && echo "shim: $(command -v rg)"' });
        expect({ mode, exit: exitOf(shim), out: stdoutOf(shim) }).toMatchObject({ mode, exit: 0, out: expect.stringContaining("tendril built-in search") });
      }
      expect(connections).toBe(0);
      const { client: off } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "off" });
      expect(stdoutOf(await callTool(off, "shell", { command: client }))).toBe("host-shell\n");
      expect(connections).toBe(1);
    } finally {
      server.close();
    }
  });

  test("regression: a host's unix socket outside /tmp and /run (~/.docker/run/docker.sock, a socket under /var) could be connected to from inside; now it is covered (in the workspace too, which may be HOME), `off` still reaches it, and a socket the command binds itself works", async () => {
    const { createServer } = await import("node:net");
    // outside every private directory: /var/tmp is not /tmp (when it is a link into /tmp, nothing to test)
    if (realpathSync("/var/tmp") !== "/var/tmp") return;
    const outside = mkdtempSync("/var/tmp/tendril-socket-");
    const servers: import("node:net").Server[] = [];
    const listen = async (path: string, answer: string) => {
      const server = createServer((c) => c.end(answer));
      servers.push(server);
      await new Promise<void>((r) => server.listen(path, r));
    };
    try {
      const hostSock = join(outside, "docker.sock");
      const wsSock = join(ws, "daemon.sock");
      rmSync(wsSock, { force: true });
      await listen(hostSock, "host-daemon\n");
      await listen(wsSock, "host-daemon-in-workspace\n");
      const probe = (sock: string) => `perl -MIO::Socket::UNIX -e '$c = IO::Socket::UNIX->new(Peer => "${sock}") or die "connect: $!\n"; print scalar <$c>'`;
      for (const mode of ["read-only", "workspace-write"] as const) {
        const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: mode });
        for (const sock of [hostSock, wsSock]) {
          const r = await callTool(client, "shell", { command: probe(sock) });
          expect({ mode, sock, exit: exitOf(r) === 0, out: stdoutOf(r) }).toEqual({ mode, sock, exit: false, out: "" });
        }
        // a server the command starts itself, on a socket in its TMPDIR, is reached
        const own = `perl -MIO::Socket::UNIX -e '$s = IO::Socket::UNIX->new(Local => "$ENV{TMPDIR}/own.sock", Listen => 1) or die "listen: $!\n"; if (fork) { $c = $s->accept; print $c "mine\n"; close $c; wait } else { $c = IO::Socket::UNIX->new(Peer => "$ENV{TMPDIR}/own.sock") or die "connect: $!\n"; print scalar <$c>; exit }'`;
        expect({ mode, own: stdoutOf(await callTool(client, "shell", { command: own })) }).toEqual({ mode, own: "mine\n" });
      }
      const { client: off } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "off" });
      expect(stdoutOf(await callTool(off, "shell", { command: probe(hostSock) }))).toBe("host-daemon\n");
    } finally {
      for (const server of servers) server.close();
      rmSync(outside, { recursive: true, force: true });
    }
  });

  test("a workspace that is itself a symlink is confined as its target: writes land there, nothing outside changes, the link cannot be re-pointed", async () => {
    const link = join(base, "ws-link");
    const { symlinkSync, readlinkSync } = await import("node:fs");
    if (!existsSync(link)) symlinkSync(ws, link);
    const { client } = await startDevMcp(link, base, { TENDRIL_SANDBOX: "workspace-write" });
    const r = await callTool(client, "shell", { command: `touch via-link.txt; touch ${join(base, "beside-link.txt")}; ln -sfn / ${link}; rm -f ${link}; true` });
    expect(exitOf(r)).toBe(0);
    expect(existsSync(join(ws, "via-link.txt"))).toBe(true);
    expect(existsSync(join(base, "beside-link.txt"))).toBe(false);
    expect(readlinkSync(link)).toBe(ws);
  });

  test("bwrap that is not executable, or not a working bwrap, fails closed with the path and the fix", async () => {
    const bin = join(base, "bin-bad-bwrap");
    mkdirSync(bin, { recursive: true });
    for (const tool of ["bash", "touch"]) if (!existsSync(join(bin, tool))) (await import("node:fs")).symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
    writeFileSync(join(bin, "bwrap"), "not a program\n", { mode: 0o644 });
    const plain = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "workspace-write", PATH: bin });
    const r = await callTool(plain.client, "shell", { command: "touch should-not.txt" });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain(`the sandbox cannot start: ${join(bin, "bwrap")} is not an executable file`);
    expect(textOf(r)).toContain("apt-get install bubblewrap");
    const broken = join(base, "bin-broken-bwrap");
    mkdirSync(broken, { recursive: true });
    writeFileSync(join(broken, "bwrap"), "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n", { mode: 0o755 });
    const b = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "read-only", PATH: `${broken}:${bin}` });
    const rb = await callTool(b.client, "shell", { command: "touch should-not.txt" });
    expect(rb.isError).toBe(true);
    expect(textOf(rb)).toContain("the sandbox cannot start: bwrap: No permissions to create new namespace");
    expect(existsSync(join(ws, "should-not.txt"))).toBe(false);
  });

});
