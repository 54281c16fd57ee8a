// The ACP SDK's experimental v2 client app (`@agentclientprotocol/sdk/experimental/v2`) as a real
// counterpart of the built binary (`dist/tendril agent`, the fake LLM): it negotiates v2, runs a turn
// with a shell tool call through its ActiveSession helper (acknowledged prompt, idle stop), cancels a
// running tool call with the helper's tool_call/cancel, and resumes a saved session with replay.
// What the client observes is what is asserted.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { agentEnv } from "./agent-env.ts";
import { BIN } from "./binary.ts";
import { startFakeLlm, type FakeLlm } from "./fake-llm.ts";
import { waitFor } from "./fake-mcp-helpers.ts";
import { type SdkV2Client, sdkV2Client, terminalText, untilStop } from "./sdk-v2-client.ts";

let fake: FakeLlm;
let work: string;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-v2-sdk-"));
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

type V2Client = SdkV2Client;

function v2Client(env: Record<string, string>): V2Client {
  const child = spawn(BIN, ["agent"], { stdio: ["pipe", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, ...env } });
  children.push(child);
  return sdkV2Client(child, "v2-sdk-client-test", 5000);
}

const initV2 = (c: V2Client) => c.initialize();

function workspace(name: string): string {
  const ws = join(work, name);
  mkdirSync(ws, { recursive: true });
  return ws;
}

/** Whether a `sleep SECONDS` process runs (this test's own, by its unusual duration). */
function sleeping(seconds: string): boolean {
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8") === `sleep\0${seconds}\0`) return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

test("the SDK's v2 client negotiates v2 and runs a turn with a tool call; its text and stop come as v2 updates", async () => {
  const c = v2Client({ ...agentEnv(fake, join(work, "h1")), TENDRIL_MODE: "ask" });
  const ws = workspace("ws1");
  const init = await initV2(c);
  expect(init.protocolVersion).toBe(2);
  expect(init.info.name).toBe("tendril");
  const session = await c.conn.agent.buildSession(ws).start();
  fake.script([{ toolCalls: [{ id: "s1", name: "dev__shell", input: { command: "echo v2-shell-ran" } }] }, { text: "All done over v2." }]);
  const ack = await session.prompt("run it");
  expect(typeof ack.messageId).toBe("string");
  const { updates, stopReason } = await untilStop(session);
  expect(stopReason).toBe("end_turn");
  const s1 = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "s1") as Extract<acp.SessionUpdate, { sessionUpdate: "tool_call_update" }>[];
  expect(s1.at(-1)!.status).toBe("completed");
  // the output is shown in the call's terminal, live (v2's terminal_output_chunk), ending with the exit
  expect(terminalText(updates, "s1")).toBe("v2-shell-ran\n");
  expect(updates.some((u) => u.sessionUpdate === "terminal_update" && (u as { exitStatus?: { exitCode?: number } }).exitStatus?.exitCode === 0)).toBe(true);
  const text = updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => (u as { content: { text?: string } }).content.text ?? "").join("");
  expect(text).toBe("All done over v2.");
  expect(updates.find((u) => u.sessionUpdate === "user_message")).toMatchObject({ messageId: ack.messageId });
  session.dispose();
  await c.close();
});

test("the SDK's v2 client cancels a running tool call with tool_call/cancel; the turn goes on to end_turn", async () => {
  const c = v2Client({ ...agentEnv(fake, join(work, "h2")), TENDRIL_MODE: "yolo" });
  const ws = workspace("ws2");
  await initV2(c);
  const session = await c.conn.agent.buildSession(ws).start();
  fake.script([{ toolCalls: [{ id: "long", name: "dev__shell", input: { command: "sleep 31.75" } }] }, { text: "Stopped waiting." }]);
  const started = Date.now();
  await session.prompt("wait a long time");
  await waitFor(() => session.canCancelToolCall("long") && c.updates.some((n) => n.update.sessionUpdate === "tool_call_update" && n.update.toolCallId === "long" && n.update.status === "in_progress"), 20_000);
  await waitFor(() => sleeping("31.75"), 10_000);
  expect(await session.cancelToolCall("long")).toEqual({});
  const { updates, stopReason } = await untilStop(session);
  expect(stopReason).toBe("end_turn");
  expect(Date.now() - started).toBeLessThan(25_000);
  const last = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "long").at(-1) as { status?: string };
  expect(last.status).toBe("cancelled");
  expect(session.canCancelToolCall("long")).toBe(false);
  // the call's process is gone with it
  await waitFor(() => !sleeping("31.75"), 10_000);
  session.dispose();
  await c.close();
});

test("the SDK's v2 client resumes a saved session with replayFrom start: the history, then idle, then the answer", async () => {
  const env = { ...agentEnv(fake, join(work, "h3")), TENDRIL_MODE: "yolo" };
  const ws = workspace("ws3");
  const first = v2Client(env);
  await initV2(first);
  const session = await first.conn.agent.buildSession(ws).start();
  fake.script([{ text: "Remember me." }]);
  await session.prompt("the first prompt");
  expect((await untilStop(session)).stopReason).toBe("end_turn");
  const sessionId = session.sessionId;
  session.dispose();
  await first.close();

  const second = v2Client(env);
  await initV2(second);
  const listed = await second.conn.agent.request(acp.methods.agent.session.list, {});
  expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
  const resumed = await second.conn.agent.request(acp.methods.agent.session.resume, { sessionId, cwd: ws, replayFrom: { type: "start" } });
  expect(Array.isArray(resumed.configOptions)).toBe(true);
  // (the SDK hands notifications to their handlers asynchronously; the wire order is asserted in acp-v2-schema.test.ts)
  const ofSession = () => second.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);
  await waitFor(() => ofSession().some((u) => u.sessionUpdate === "state_update"), 10_000);
  const got = ofSession();
  expect(got.at(-1)).toMatchObject({ sessionUpdate: "state_update", state: "idle" });
  expect(JSON.stringify(got)).toContain("the first prompt");
  expect(JSON.stringify(got)).toContain("Remember me.");
  const bad = await second.conn.agent.request(acp.methods.agent.session.resume, { sessionId, cwd: ws, replayFrom: { type: "_nowhere" } }).then(
    () => undefined,
    (err: acp.RequestError) => err,
  );
  expect(bad?.code).toBe(-32602);
  await second.conn.agent.request(acp.methods.agent.session.close, { sessionId });
  await second.close();
});
