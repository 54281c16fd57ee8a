// The MCP pool over Streamable HTTP and legacy SSE, against in-process MCP SDK servers on 127.0.0.1:0:
// tools listed and called, declared headers sent, a dead endpoint reported by name.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { loadLimits } from "../core/limits.ts";
import { createMcpPool } from "../core/mcp/pool.ts";
import { McpStartError } from "../core/mcp/types.ts";

const seenAuth: string[] = [];
let httpServer: Server;
let base = "";
const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const pool = createMcpPool({ limits: loadLimits({ TENDRIL_MCP_INIT_TIMEOUT_S: "5" }), env: {}, log: quiet });

function mcpServer(): McpServer {
  const server = new McpServer({ name: "http-fake", version: "1" }, { instructions: "served over HTTP" });
  server.registerTool(
    "echo",
    { description: "echoes", inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
    async ({ text }) => ({ content: [{ type: "text", text: `http:${text}` }] }),
  );
  return server;
}

const streamable = new Map<string, StreamableHTTPServerTransport>();
const sse = new Map<string, SSEServerTransport>();

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  seenAuth.push(String(req.headers.authorization ?? ""));
  const url = new URL(req.url ?? "/", base);
  if (url.pathname === "/mcp") {
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? streamable.get(id) : undefined;
    if (!transport) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void streamable.set(sid, created),
      });
      await mcpServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  } else if (url.pathname === "/sse" && req.method === "GET") {
    const transport = new SSEServerTransport("/messages", res);
    sse.set(transport.sessionId, transport);
    await mcpServer().connect(transport);
  } else if (url.pathname === "/messages" && req.method === "POST") {
    const transport = sse.get(url.searchParams.get("sessionId") ?? "");
    if (transport) await transport.handlePostMessage(req, res);
    else res.writeHead(404).end();
  } else res.writeHead(404).end();
}

beforeAll(async () => {
  httpServer = createServer((req, res) => void route(req, res).catch(() => res.writeHead(500).end()));
  await new Promise<void>((r) => httpServer.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await pool.closeAll();
  await Promise.allSettled([...streamable.values(), ...sse.values()].map((t) => t.close()));
  httpServer.closeAllConnections();
  await new Promise((r) => httpServer.close(r));
});

test("Streamable HTTP: lists, calls, sends the declared headers", async () => {
  const s = await pool.openTools(
    [{ name: "web", transport: "http", url: `${base}/mcp`, headers: { Authorization: "Bearer tok-1" } }],
    { cwd: "/" },
  );
  const echo = s.tools().find((t) => t.qualifiedName === "web__echo");
  expect(echo).toMatchObject({ readOnly: true, description: "echoes", hook: false });
  expect(await s.call("web__echo", { text: "hi" })).toMatchObject({ isError: false, text: "http:hi" });
  expect(s.instructions()).toEqual({ web: "served over HTTP" });
  expect(seenAuth).toContain("Bearer tok-1");
  await s.close();
});

test("SSE: lists and calls", async () => {
  const s = await pool.openTools([{ name: "old", transport: "sse", url: `${base}/sse`, headers: { Authorization: "Bearer tok-2" } }], {
    cwd: "/",
  });
  expect(s.tools().map((t) => t.qualifiedName)).toEqual(["old__echo"]);
  expect(await s.call("old__echo", { text: "there" })).toMatchObject({ isError: false, text: "http:there" });
  expect(seenAuth).toContain("Bearer tok-2");
  await s.close();
});

test("Streamable HTTP: a server that forgot the session is reconnected on next use", async () => {
  const s = await pool.openTools([{ name: "flaky", transport: "http", url: `${base}/mcp`, headers: { X: "flaky" } }], { cwd: "/" });
  expect((await s.call("flaky__echo", { text: "1" })).text).toBe("http:1");
  const old = [...streamable.values()];
  streamable.clear();
  await Promise.allSettled(old.map((t) => t.close()));
  const lost = await s.call("flaky__echo", { text: "2" });
  expect(lost.isError).toBe(true);
  expect(lost.text).toContain("MCP server flaky stopped during this call");
  expect(await s.call("flaky__echo", { text: "3" })).toMatchObject({ isError: false, text: "http:3" });
  await s.close();
});

test("an endpoint nobody listens on fails the session with an error naming the server", async () => {
  const idle = createServer();
  await new Promise<void>((r) => idle.listen(0, "127.0.0.1", r));
  const port = (idle.address() as AddressInfo).port;
  await new Promise((r) => idle.close(r));
  const err = await pool.openTools([{ name: "nowhere", transport: "http", url: `http://127.0.0.1:${port}/mcp` }], { cwd: "/" }).catch((e) => e);
  expect(err).toBeInstanceOf(McpStartError);
  expect(err.message).toContain("MCP server nowhere: initialize failed");
});
