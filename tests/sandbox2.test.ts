// End-to-end tests of the sandbox's second round (SPEC §3.8) through the built binary with the real
// bubblewrap: sandbox_allow_domains through the agent's proxy (a loopback HTTP server stands in for an
// allowed host; no real network), and the bad-input and escape list with its `off` control.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callTool, startDevMcp, stopDevMcps, textOf, type ToolResult } from "./dev-mcp-harness.ts";
import { hostAllowed, startEgressProxy } from "../tools/dev/egress-proxy.ts";

const BWRAP = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"].find((p) => existsSync(p));
const CURL = ["/usr/bin/curl", "/bin/curl"].find((p) => existsSync(p));
if (!BWRAP || !CURL) console.warn("tests/sandbox2.test.ts: bwrap or curl is not installed: the sandbox tests through the binary are skipped");

const base = realpathSync(mkdtempSync(join(tmpdir(), "tendril-sandbox2-")));
const ws = join(base, "ws");
let web: HttpServer;
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
});
afterEach(stopDevMcps);
afterAll(() => {
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
  test("host patterns: exact names and *. subdomains, case-insensitive; nothing else", () => {
    const p = ["registry.npmjs.org", "*.github.com", "127.0.0.1"];
    expect(["registry.npmjs.org", "REGISTRY.npmjs.org.", "api.github.com", "a.b.github.com", "127.0.0.1"].filter((h) => hostAllowed(h, p))).toHaveLength(5);
    expect(["github.com", "evilgithub.com", "npmjs.org", "registry.npmjs.org.evil", "127.0.0.2", "localhost"].filter((h) => hostAllowed(h, p))).toEqual([]);
  });

  test("relays plain HTTP and CONNECT to an allowed host; refuses another host with a 403 naming it and the setting", async () => {
    const proxy = await startEgressProxy(0, ["127.0.0.1"]);
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
      expect(refused).toContain("example.com is not reachable from this command: sandbox_allow_domains lets through only 127.0.0.1");
      expect(await viaProxy("GET http://localhost/ HTTP/1.1\r\n\r\n")).toContain("localhost is not reachable");
      expect(await viaProxy("garbage\r\n\r\n")).toStartWith("HTTP/1.1 400");
      expect(await viaProxy("CONNECT 127.0.0.1:99999 HTTP/1.1\r\n\r\n")).toStartWith("HTTP/1.1 400");
      expect(proxy.refused).toEqual(["example.com", "localhost"]);
    } finally {
      await proxy.close();
    }
  });
});

describe.skipIf(!BWRAP || !CURL)("sandbox_allow_domains through the binary", () => {
  test("an allowed host is reached through the proxy (HTTP and CONNECT); any other is refused, naming the host and the setting", async () => {
    const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "workspace-write", ...config("domains.toml", 'sandbox_allow_domains = ["127.0.0.1"]\n') });
    expect(client.getInstructions()).toContain("network only to 127.0.0.1 through the HTTP(S)_PROXY given");
    const plain = await callTool(client, "shell", { command: `curl -sS http://127.0.0.1:${webPort}/inside && echo "$HTTPS_PROXY"` });
    expect({ exit: exitOf(plain), out: stdoutOf(plain) }).toEqual({ exit: 0, out: "served /inside\nhttp://127.0.0.1:3128\n" });
    expect(textOf(plain)).not.toContain("sandbox:");
    const tunnel = await callTool(client, "shell", { command: `curl -sS -p http://127.0.0.1:${webPort}/tunnelled` });
    expect({ exit: exitOf(tunnel), out: stdoutOf(tunnel) }).toEqual({ exit: 0, out: "served /tunnelled\n" });
    expect(hits).toContain("GET /tunnelled");

    const other = await callTool(client, "shell", { command: `curl -sS http://localhost:${webPort}/no` });
    expect(exitOf(other)).toBe(0); // curl prints the proxy's 403 page and succeeds
    expect(stdoutOf(other)).toContain("localhost is not reachable from this command: sandbox_allow_domains lets through only 127.0.0.1");
    expect(other.structuredContent?.sandbox_note).toContain("sandbox: the proxy refused localhost: not in sandbox_allow_domains (127.0.0.1)");
    expect(hits).not.toContain("GET /no");
    const tls = await callTool(client, "shell", { command: "curl -sS https://example.com/" });
    expect(exitOf(tls)).not.toBe(0);
    expect(textOf(tls)).toContain("sandbox: the proxy refused example.com");
    // Without the proxy there is still no network at all: the host's loopback is not the sandbox's.
    const direct = await callTool(client, "shell", { command: `curl -sS --noproxy '*' http://127.0.0.1:${webPort}/direct` });
    expect(exitOf(direct)).not.toBe(0);
    expect(hits).not.toContain("GET /direct");
  });

  test("read-only reaches the proxy too (its socket sits on the read-only root)", async () => {
    const { client } = await startDevMcp(ws, base, { TENDRIL_SANDBOX: "read-only", ...config("domains-ro.toml", 'sandbox_allow_domains = ["127.0.0.1"]\n') });
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
