// Subagents as the ACP SDK's own client app (`@agentclientprotocol/sdk/unstable`, `acp.client()`) sees
// them from the built binary (`dist/tendril agent`, the fake LLM): with the `subagents` capability the
// app receives the announcement, the child's updates under its own session id and the answer as a
// session message (none dropped by its schema); without it, only the parent session, whose tool call
// shows the child's progress and ends with its answer.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { agentEnv } from "./agent-env.ts";
import { startFakeLlm, type FakeLlm } from "./fake-llm.ts";
import { agentProcess } from "./sdk-process.ts";

let fake: FakeLlm;
let work: string;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-sdk-subagents-"));
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

/** The SDK's client app on a fresh agent: every session/update it accepted, in order. */
function sdkApp(name: string) {
  const proc = agentProcess({ home: work, env: { ...agentEnv(fake, join(work, name)), TENDRIL_MODE: "yolo" } });
  children.push(proc.child);
  const updates: acp.SessionNotification[] = [];
  const conn = acp
    .client({ name: "sdk-subagents-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params))
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => ({ outcome: { outcome: "selected", optionId: params.options[0]!.optionId } }))
    .connect(proc.stream);
  return { agent: conn.agent, updates, close: () => proc.close(conn) };
}

async function runTask(name: string, clientCapabilities: acp.ClientCapabilities) {
  const app = sdkApp(name);
  await app.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities, clientInfo: { name: "t", version: "1" } });
  const ws = join(work, `${name}-ws`);
  mkdirSync(ws, { recursive: true });
  const { sessionId } = await app.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
  fake.script([
    { toolCalls: [{ id: "task1", name: "agent__task", input: { description: "count files", prompt: "How many files are there?" } }] },
    { toolCalls: [{ id: "ls1", name: "dev__shell", input: { command: "ls | wc -l" } }] },
    { text: "There are 0 files." },
    { text: "The subagent says there are 0 files." },
  ]);
  const answer = await app.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "count" }] });
  return { app, sessionId, answer };
}

test("with the subagents capability the SDK app gets the announcement, the child's updates under its id, and the answer as a message", async () => {
  const { app, sessionId, answer } = await runTask("capable", { subagents: {} });
  expect(answer.stopReason).toBe("end_turn");
  const announced = app.updates.find((n) => n.update.sessionUpdate === "subagent_update");
  expect(announced?.sessionId).toBe(sessionId);
  const child = (announced!.update as { sessionId: string }).sessionId;
  const mine = app.updates.filter((n) => n.sessionId === child).map((n) => n.update);
  expect(app.updates.indexOf(announced!)).toBeLessThan(app.updates.findIndex((n) => n.sessionId === child));
  expect(mine.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "ls1")).toBe(true);
  const said = mine.map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : "")).join("");
  expect(said).toBe("There are 0 files.");
  const back = app.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update).find((u) => u.sessionUpdate === "session_message_chunk");
  expect(back).toMatchObject({ content: { type: "text", text: "There are 0 files." } });
  app.close();
});

test("without it the SDK app sees only the parent session: the task call's progress, and its answer as the result", async () => {
  const { app, sessionId, answer } = await runTask("plain", {});
  expect(answer.stopReason).toBe("end_turn");
  expect(new Set(app.updates.map((n) => n.sessionId))).toEqual(new Set([sessionId]));
  const call = app.updates.map((n) => n.update).filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "task1");
  expect(call.some((u) => JSON.stringify((u as { content?: unknown }).content ?? []).includes("shell: ls | wc -l"))).toBe(true);
  expect(call.at(-1)).toMatchObject({ status: "completed", content: [{ type: "content", content: { type: "text", text: "There are 0 files." } }] });
  app.close();
});
