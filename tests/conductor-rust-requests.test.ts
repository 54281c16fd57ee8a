// MCP-over-ACP in the Rust conductor 2.x dialect (issue 26): requests from the MCP server to its client
// (roots/list, ping, elicitation/create, sampling/createMessage) travel as `mcp/message {connectionId,
// method, params}` requests from the provider towards the agent, and come back with the agent's MCP
// client's answer, end to end through the binary with the raw Rust-dialect proxy fixture.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { startFakeLlm, type FakeLlm } from "./fake-llm.ts";
import { agentEnv } from "./agent-env.ts";
import { startAgent, type TestAgent } from "./acp-client.ts";
import { BIN, ROOT } from "./binary.ts";
import { waitFor } from "./fake-mcp-helpers.ts";

let fake: FakeLlm;
let work: string;
const running: TestAgent[] = [];

const RUST_PROXY = `${process.execPath} ${join(ROOT, "tests", "fixtures", "rust-dialect-proxy.ts")}`;
const ECHO_AGENT = `${process.execPath} ${join(ROOT, "tests", "fixtures", "echo-agent.ts")}`;

beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-conductor-rust-requests-"));
});

afterAll(async () => {
  for (const a of running) await a.close(2000).catch(() => {});
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

function traceOf(file: string): any[] {
  return readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((r) => r.message !== undefined);
}

/** The text the fixture's `ask` tool returned for tool call `id`: the outer answer it got, as JSON. */
function askAnswer(a: TestAgent, id: string): any {
  const done = a.ofKind("tool_call_update").find((u) => u.toolCallId === id && (u.status === "completed" || u.status === "failed"));
  expect(done).toBeDefined();
  const block = (done!.content ?? []).find((c) => c.type === "content" && c.content.type === "text");
  const text = block && block.type === "content" && block.content.type === "text" ? block.content.text : "";
  return JSON.parse(text.slice(text.indexOf("{")));
}

describe("server-to-client MCP requests in the Rust conductor 2.x dialect", () => {
  test("roots/list, ping and elicitation/create from the provider reach tendril agent's MCP client and come back with its answers", async () => {
    const file = join(work, "requests.jsonl");
    const ws = join(work, "ws");
    mkdirSync(ws, { recursive: true });
    const a = startAgent({ args: ["conductor", "agent", "--trace", file, RUST_PROXY, `${BIN} agent`], env: { ...agentEnv(fake, work), TENDRIL_MODE: "yolo" } });
    running.push(a);
    await a.initialize();
    const { sessionId } = await a.newSession(ws);
    const form = { mode: "form", message: "Your name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } };
    fake.script([
      {
        toolCalls: [
          { id: "roots", name: "rust-notes__ask", input: { method: "roots/list" } },
          { id: "ping", name: "rust-notes__ask", input: { method: "ping" } },
          { id: "elicit", name: "rust-notes__ask", input: { method: "elicitation/create", params: form } },
          { id: "sampling", name: "rust-notes__ask", input: { method: "sampling/createMessage", params: { messages: [], maxTokens: 10 } } },
          { id: "ghost", name: "rust-notes__ask", input: { method: "roots/list", connectionId: "mcp-over-acp-connection:ghost" } },
        ],
      },
      { text: "asked" },
    ]);
    expect((await a.prompt(sessionId, "ask your client")).stopReason).toBe("end_turn");

    // the agent's MCP client answers with the session's workspace as its one root
    expect(askAnswer(a, "roots")).toEqual({ result: { roots: [{ uri: pathToFileURL(ws).href, name: "ws" }] } });
    expect(askAnswer(a, "ping")).toEqual({ result: {} });
    // a question reaches the session whose tool call is running: in yolo mode a form without required
    // fields is accepted for the user, as for any MCP server's question
    expect(askAnswer(a, "elicit")).toEqual({ result: { action: "accept", content: {} } });
    // the client declares no sampling: the MCP client's own answer (as to a stdio server), carried as the
    // outer error the way the dialect carries an inner error; not the ACP side's "no method mcp/message"
    expect(askAnswer(a, "sampling")).toEqual({ error: { code: -32601, message: "Method not found" } });
    // a connection the agent never opened: a clear error naming it
    expect(askAnswer(a, "ghost").error).toMatchObject({ code: -32602, message: expect.stringContaining("mcp-over-acp-connection:ghost") });

    // on the wire: the provider's request reached the agent as mcp/message by connectionId, and its answer came back
    // (the trace is written as it goes: its last records may land a moment after the turn's answer)
    const isAsk = (r: any) => r.hop === 1 && r.dir === "out" && r.message.method === "mcp/message" && r.message.params?.method === "roots/list";
    const answered = (rs: any[]) => {
      const q = rs.find(isAsk);
      return q && rs.some((r) => r.hop === 1 && r.dir === "in" && r.message.id === q.message.id && r.message.method === undefined);
    };
    let records = traceOf(file);
    for (let t = 0; t < 100 && !answered(records); t++) {
      await Bun.sleep(50);
      records = traceOf(file);
    }
    const asked = records.find(isAsk);
    expect(asked.message.params).toEqual({ connectionId: "mcp-over-acp-connection:1", method: "roots/list" });
    const answer = records.find((r) => r.hop === 1 && r.dir === "in" && r.message.id === asked.message.id && r.message.method === undefined);
    expect(answer.message.result).toEqual({ roots: [{ uri: pathToFileURL(ws).href, name: "ws" }] });
    expect(records.some((r) => r.dir === "in" && String(r.message.error?.message).includes("Method not found: mcp/message"))).toBe(false);

    // the chain is unharmed
    fake.script([{ text: "still here" }]);
    expect((await a.prompt(sessionId, "again")).stopReason).toBe("end_turn");
  }, 30_000);

  // The agent edge answers the request itself (Chain#toAgent → McpBridge.takeRequest); without it the
  // request would reach the echo agent, which answers -32601.
  test("for an agent without acp MCP, the provider's roots/list reaches the bridge process's MCP client and its answer comes back", async () => {
    const a = startAgent({ args: ["conductor", "agent", RUST_PROXY, ECHO_AGENT], env: agentEnv(fake, work) });
    running.push(a);
    await a.initialize();
    const { sessionId } = await a.newSession(join(work));
    await a.prompt(sessionId, "mcp");
    const server = (JSON.parse(a.text()) as { name: string; command: string; args: string[] }[]).find((s) => s.name === "rust-notes")!;
    const bridge = spawn(server.command, server.args, { stdio: ["pipe", "pipe", "inherit"] });
    const lines: any[] = [];
    bridge.stdout.setEncoding("utf8").on("data", (c: string) => c.split("\n").filter(Boolean).forEach((l) => lines.push(JSON.parse(l))));
    const say = (m: object) => bridge.stdin.write(JSON.stringify(m) + "\n");
    say({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: { roots: {} }, clientInfo: { name: "t", version: "0" } } });
    say({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "ask", arguments: { method: "roots/list" } } });
    // the MCP server's question arrives on the bridge's stdout as an MCP request; this client answers it
    expect(await waitFor(() => lines.some((l) => l.method === "roots/list"), 5000)).toBe(true);
    const asked = lines.find((l) => l.method === "roots/list");
    say({ jsonrpc: "2.0", id: asked.id, result: { roots: [{ uri: "file:///bridged", name: "bridged" }] } });
    expect(await waitFor(() => lines.some((l) => l.id === 2 && l.method === undefined), 5000)).toBe(true);
    const text = lines.find((l) => l.id === 2 && l.method === undefined).result.content[0].text;
    expect(JSON.parse(text)).toEqual({ result: { roots: [{ uri: "file:///bridged", name: "bridged" }] } });
    bridge.stdin.end();
    expect(await new Promise((r) => bridge.on("exit", r))).toBe(0);
  }, 30_000);
});
