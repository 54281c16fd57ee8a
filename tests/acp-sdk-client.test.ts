// The ACP SDK's own client app (`@agentclientprotocol/sdk/unstable`, `acp.client()`) as a real
// counterpart of the built binary (`dist/tendril agent`, the fake LLM): login through the auth
// methods, slash commands (built-in and MCP prompts), modes, MCP elicitation, fork, delete,
// compaction and notices. What the client observes is what is asserted.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { agentEnv } from "./agent-env.ts";
import { BIN } from "./binary.ts";
import { startFakeLlm, type FakeLlm } from "./fake-llm.ts";
import { FAKE_MCP_PATH, waitFor } from "./fake-mcp-helpers.ts";
import { agentProcess } from "./sdk-process.ts";

let fake: FakeLlm;
let work: string;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-sdk-client-"));
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

/** How the client answers the agent's elicitation questions, in order. */
type ElicitAnswer = acp.CreateElicitationResponse;

interface SdkClient {
  agent: acp.ClientContext;
  updates: acp.SessionNotification[];
  elicitations: acp.CreateElicitationRequest[];
  completions: acp.CompleteElicitationNotification[];
  ofKind<K extends acp.SessionUpdate["sessionUpdate"]>(kind: K, sessionId?: string): Extract<acp.SessionUpdate, { sessionUpdate: K }>[];
  /** The text the agent said in `sessionId` since update number `from`. */
  said(sessionId: string, from?: number): string;
  close(): Promise<void>;
}

function sdkClient(env: Record<string, string>, answers: ElicitAnswer[] = []): SdkClient {
  const proc = agentProcess({ home: work, env });
  children.push(proc.child);
  const updates: acp.SessionNotification[] = [];
  const elicitations: acp.CreateElicitationRequest[] = [];
  const completions: acp.CompleteElicitationNotification[] = [];
  const conn = acp
    .client({ name: "sdk-client-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params))
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => ({
      outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind === "allow_once")!.optionId },
    }))
    .onRequest(acp.methods.client.elicitation.create, ({ params }) => {
      elicitations.push(params);
      return answers.shift() ?? { action: "decline" };
    })
    .onNotification(acp.methods.client.elicitation.complete, ({ params }) => void completions.push(params))
    .connect(proc.stream);
  const ofKind: SdkClient["ofKind"] = (kind, sessionId) =>
    updates.filter((n) => sessionId === undefined || n.sessionId === sessionId).map((n) => n.update).filter((u) => u.sessionUpdate === kind) as any;
  return {
    agent: conn.agent,
    updates,
    elicitations,
    completions,
    ofKind,
    said: (sessionId, from = 0) =>
      updates
        .slice(from)
        .filter((n) => n.sessionId === sessionId)
        .map((n) => (n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text" ? n.update.content.text : ""))
        .join(""),
    close: async () => void (await proc.close(conn)),
  };
}

const init = (c: SdkClient, clientCapabilities: acp.ClientCapabilities = {}) =>
  c.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities, clientInfo: { name: "sdk-client-test", version: "1" } });
const prompt = (c: SdkClient, sessionId: string, text: string) => c.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
/** The fake LLM's message requests (model listings left out). */
const llmRequests = () => fake.requests.filter((r) => r.path.endsWith("/messages"));
/** What the fake LLM was last sent, as text. */
const lastAsked = () => JSON.stringify(llmRequests().at(-1)?.body.messages.at(-1));

function workspace(name: string): string {
  const ws = join(work, name);
  mkdirSync(ws, { recursive: true });
  return ws;
}

async function rejection(p: Promise<unknown>): Promise<acp.RequestError> {
  try {
    await p;
  } catch (err) {
    return err as acp.RequestError;
  }
  throw new Error(`expected the request to fail; it answered ${JSON.stringify(await p)}`);
}

test("login: auth methods offered, session/new refused with -32000 until `tendril agent login`, authenticate, logout", async () => {
  const home = join(work, "home-login");
  const env = { ...agentEnv(fake, home), HOME: home };
  // no key and no endpoint in the environment (a base URL alone would count as usable)
  delete (env as Record<string, string>).ANTHROPIC_API_KEY;
  delete (env as Record<string, string>).ANTHROPIC_BASE_URL;
  const c = sdkClient(env);
  const ws = workspace("ws-login");
  const answer = await init(c, { auth: { terminal: true } });
  expect(answer.authMethods?.map((m) => [m.id, "type" in m ? m.type : "agent"])).toEqual([["api-key", "agent"], ["login", "terminal"]]);
  expect(answer.authMethods?.find((m) => m.id === "login")).toMatchObject({ args: ["login"] });
  const refused = await rejection(c.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] }));
  expect(refused.code).toBe(-32000);
  expect(refused.message).toContain("api-key (agent), login (terminal)");
  expect((await rejection(c.agent.request(acp.methods.agent.authenticate, { methodId: "api-key" }))).code).toBe(-32000);
  // the client runs the terminal method: the agent's command with its args (scriptable: stdin is no terminal)
  const login = spawn(BIN, ["agent", "login", "--provider", "anthropic", "--base-url", fake.anthropicBaseUrl], { env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["pipe", "ignore", "pipe"] });
  login.stdin.end("sk-from-login\n");
  expect(await new Promise((resolve) => login.once("exit", resolve))).toBe(0);
  expect(await c.agent.request(acp.methods.agent.authenticate, { methodId: "api-key" })).toEqual({});
  const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
  fake.script([{ text: "Logged in." }]);
  expect((await prompt(c, sessionId, "hello")).stopReason).toBe("end_turn");
  expect(llmRequests().at(-1)?.headers.authorization).toBe("Bearer sk-from-login");
  expect(c.said(sessionId)).toBe("Logged in.");
  expect(await c.agent.request(acp.methods.agent.logout, {})).toEqual({});
  expect((await rejection(c.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] }))).code).toBe(-32000);
  await c.close();
});

test("slash commands (built-in and MCP prompts), modes by every path, and MCP elicitation in both modes", async () => {
  const home = join(work, "home-commands");
  const c = sdkClient({ ...agentEnv(fake, home), TENDRIL_MODE: "ask" }, [{ action: "accept", content: { name: "Ada" } }, { action: "accept" }]);
  await init(c, { elicitation: { form: {}, url: {} } });
  const fk: acp.McpServer = { name: "fk", command: process.execPath, args: [FAKE_MCP_PATH], env: [{ name: "FAKE_MCP_PROMPTS", value: "1" }] };
  const { sessionId, modes } = await c.agent.request(acp.methods.agent.session.new, { cwd: workspace("ws-commands"), mcpServers: [fk] });
  expect(modes?.currentModeId).toBe("ask");
  expect(await waitFor(() => c.ofKind("available_commands_update", sessionId).length > 0, 5000)).toBe(true);
  const commands = c.ofKind("available_commands_update", sessionId)[0]!.availableCommands;
  expect(commands.map((x) => x.name)).toEqual(["compact", "mode", "model", "init", "fk:review", "fk:summarize", "fk:hello", "fk:broken"]);

  // an MCP prompt: its messages are the user's turn
  fake.script([{ text: "Looks fine." }]);
  expect((await prompt(c, sessionId, "/fk:review src/app.ts naming")).stopReason).toBe("end_turn");
  expect(lastAsked()).toContain("Review src/app.ts focusing on naming.");
  // bad input is answered, and the session goes on
  const asked = llmRequests().length;
  let from = c.updates.length;
  expect((await prompt(c, sessionId, "/fk:review")).stopReason).toBe("end_turn");
  expect(c.said(sessionId, from)).toBe("/fk:review needs the argument file (usage: /fk:review <file> [focus]).");
  from = c.updates.length;
  await prompt(c, sessionId, "/fk:missing");
  expect(c.said(sessionId, from)).toContain("Unknown command /fk:missing");
  expect(llmRequests().length).toBe(asked);

  // modes: /mode, session/set_mode, the mode config option; each pushes current_mode_update
  await prompt(c, sessionId, "/mode read-only");
  await c.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "auto-edit" });
  const set = await c.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "mode", value: "yolo" });
  expect(set.configOptions.find((o) => o.id === "mode")?.currentValue).toBe("yolo");
  expect(c.ofKind("current_mode_update", sessionId).map((u) => u.currentModeId)).toEqual(["read-only", "auto-edit", "yolo"]);
  expect(c.ofKind("config_option_update", sessionId).length).toBeGreaterThanOrEqual(3);

  // elicitation: a form (accepted with content) and a URL (accepted, then completed)
  fake.script([
    { toolCalls: [{ id: "e1", name: "fk__confirm", input: { field: "name" } }] },
    { toolCalls: [{ id: "e2", name: "fk__confirm", input: { url: "https://example.test/login" } }] },
    { text: "Asked." },
  ]);
  expect((await prompt(c, sessionId, "ask me")).stopReason).toBe("end_turn");
  expect(c.elicitations.map((e) => [e.mode, (e as { toolCallId?: string }).toolCallId])).toEqual([["form", "e1"], ["url", "e2"]]);
  const seen = JSON.stringify(llmRequests().slice(-2).map((r) => r.body.messages.at(-1)));
  expect(seen).toContain('answered accept {\\"name\\":\\"Ada\\"}');
  expect(await waitFor(() => c.completions.length === 1, 5000)).toBe(true);
  expect(c.completions[0]!.elicitationId).toBe((c.elicitations[1] as { elicitationId: string }).elicitationId);
  await c.close();
});

test("compaction and notices shown to a client that advertised them; fork copies a session, delete removes one", async () => {
  const home = join(work, "home-fork");
  const c = sdkClient({ ...agentEnv(fake, home), TENDRIL_MODE: "yolo" });
  await init(c, { session: { notices: {}, compaction: {} } });
  const ws = workspace("ws-fork");
  const dying: acp.McpServer = { name: "fk", command: process.execPath, args: [FAKE_MCP_PATH], env: [{ name: "FAKE_MCP_EXIT_AFTER", value: "1" }] };
  const { sessionId } = await c.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [dying] });
  fake.script([{ toolCalls: [{ id: "x1", name: "fk__echo", input: { text: "once" } }] }, { text: "First answer." }]);
  await prompt(c, sessionId, "the original task");
  // the server exits after its one call: the client is told, named
  expect(await waitFor(() => c.ofKind("notice", sessionId).length > 0, 5000)).toBe(true);
  expect(c.ofKind("notice", sessionId)[0]).toMatchObject({ severity: "warning", title: "MCP server fk stopped" });

  fake.script([{ text: "SUMMARY: the original task, answered once." }]);
  expect((await prompt(c, sessionId, "/compact")).stopReason).toBe("end_turn");
  const compaction = c.ofKind("compaction_update", sessionId);
  expect(compaction.map((u) => u.status)).toEqual(["in_progress", "completed"]);
  expect(JSON.stringify(compaction[1])).toContain("SUMMARY: the original task");

  const fork = await c.agent.request(acp.methods.agent.session.fork, { sessionId, cwd: ws, mcpServers: [] });
  expect(fork.sessionId).not.toBe(sessionId);
  expect(await waitFor(() => c.ofKind("available_commands_update", fork.sessionId).length > 0, 5000)).toBe(true);
  fake.script([{ text: "Forked answer." }]);
  await prompt(c, fork.sessionId, "only in the fork");
  expect(lastAsked()).toContain("only in the fork");
  expect(JSON.stringify(llmRequests().at(-1)!.body)).toContain("SUMMARY: the original task");

  // the original never saw the fork's turn: a load replays its own history only
  await c.agent.request(acp.methods.agent.session.close, { sessionId });
  const from = c.updates.length;
  await c.agent.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
  const replay = JSON.stringify(c.updates.slice(from));
  expect(replay).toContain("the original task");
  expect(replay).not.toContain("only in the fork");

  expect(await c.agent.request(acp.methods.agent.session.delete, { sessionId: fork.sessionId })).toEqual({});
  const listed = await c.agent.request(acp.methods.agent.session.list, {});
  expect(listed.sessions.map((s) => s.sessionId)).toEqual([sessionId]);
  const gone = await rejection(c.agent.request(acp.methods.agent.session.load, { sessionId: fork.sessionId, cwd: ws, mcpServers: [] }));
  expect(gone.code).toBe(-32002);
  // the agent answers -32002 for an unknown id; the SDK's client treats that as "already deleted"
  expect(await c.agent.request(acp.methods.agent.session.delete, { sessionId: "no-such-session" })).toEqual({});
  await c.close();
});
