// Persisted sessions in memory: load after a restart replays what the client saw, resume does not,
// list filters and pages, close keeps the file, and a damaged file still loads.
import { afterAll, expect, test } from "bun:test";
import { appendFileSync, chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionStore } from "../agent/session-store.ts";
import { memoryAgent, type MemoryAgent } from "../../tests/memory-agent.ts";

const state = mkdtempSync(join(tmpdir(), "tendril-persist-"));
const ws = mkdtempSync(join(tmpdir(), "tendril-ws-"));
const other = mkdtempSync(join(tmpdir(), "tendril-ws2-"));
afterAll(() => {
  for (const d of [state, ws, other]) rmSync(d, { recursive: true, force: true });
});

let nextId = 1;
const req = (a: MemoryAgent, method: string, params: Record<string, unknown>) => {
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method, params });
  return a.response(id);
};
const agent = () => memoryAgent({ store: new SessionStore(state) });
const updatesOf = (a: MemoryAgent, sessionId: string) =>
  a.out.filter((m) => m.method === "session/update" && m.params.sessionId === sessionId).map((m) => m.params.update);
// What is about the moment, not the conversation: not replayed (a load answers the current mode and options).
const conversational = (us: any[]) =>
  us.filter((u) => !["usage_update", "user_message_chunk", "session_info_update", "current_mode_update", "config_option_update", "available_commands_update"].includes(u.sessionUpdate));

test("session/load after a restart replays the updates the client saw live, then the conversation continues", async () => {
  const a = agent();
  expect((await req(a, "initialize", { protocolVersion: 1 })).result.agentCapabilities).toMatchObject({
    loadSession: true,
    sessionCapabilities: { list: {}, resume: {}, close: {} },
  });
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ text: "Let me echo.", calls: [{ id: "e1", name: "t__echo", input: { text: "hi" } }] }, { text: "Echoed." });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "please echo hi" }] });
  await req(a, "session/set_mode", { sessionId, modeId: "read-only" });
  const live = conversational(updatesOf(a, sessionId));
  await a.close();

  const b = agent();
  const loaded = await req(b, "session/load", { sessionId, cwd: ws, mcpServers: [] });
  expect(loaded.result.modes.currentModeId).toBe("read-only");
  const replayed = updatesOf(b, sessionId);
  expect(replayed[0]).toEqual({ sessionUpdate: "user_message_chunk", messageId: expect.any(String), content: { type: "text", text: "please echo hi" } });
  expect(conversational(replayed)).toEqual(live);
  // Every replayed update was on the wire before the load answer.
  // (The slash commands are announced after the answer, by design: the client needs the session first.)
  const answerAt = b.out.findIndex((m) => m.id === nextId - 1);
  expect(b.out.slice(answerAt + 1).some((m) => m.method === "session/update" && m.params.update.sessionUpdate !== "available_commands_update")).toBe(false);
  // The LLM sees the whole earlier conversation on the next prompt.
  b.provider.push({ text: "again" });
  expect((await req(b, "session/prompt", { sessionId, prompt: [{ type: "text", text: "and now?" }] })).result.stopReason).toBe("end_turn");
  expect(b.provider.requests[0]!.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
  await b.close();
});

test("resume does not replay; close keeps the file; an unknown id is -32002", async () => {
  const a = agent();
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ text: "hello" });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] });
  expect((await req(a, "session/close", { sessionId })).result).toEqual({});
  expect((await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "x" }] })).error.code).toBe(-32002);
  const before = a.out.length;
  expect((await req(a, "session/resume", { sessionId, cwd: ws, mcpServers: [] })).result.modes).toBeDefined();
  // No replay: only what the session has used and spent so far (before the answer), then its commands.
  const resumed = a.out.slice(before).filter((m) => m.method === "session/update" && m.params.update.sessionUpdate !== "available_commands_update");
  expect(resumed.map((m) => m.params.update.sessionUpdate)).toEqual(["usage_update"]);
  expect(a.out.indexOf(resumed[0]!)).toBeLessThan(a.out.findIndex((m, i) => i >= before && m.result?.modes));
  expect((await req(a, "session/load", { sessionId: "no-such-session", cwd: ws, mcpServers: [] })).error.code).toBe(-32002);
  expect((await req(a, "session/close", { sessionId: "no-such-session" })).error.code).toBe(-32002);
  await a.close();
});

test("session/list: newest first, filtered by cwd, titled by the first prompt, in pages with a cursor", async () => {
  const a = agent();
  const ids: string[] = [];
  for (const [i, cwd] of [ws, other, ws].entries()) {
    const { sessionId } = (await req(a, "session/new", { cwd, mcpServers: [] })).result;
    a.provider.push({ text: "ok" });
    await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: `task number ${i}` }] });
    ids.push(sessionId);
    await Bun.sleep(15); // distinct modification times
  }
  const mine = (await req(a, "session/list", { cwd: other })).result.sessions;
  expect(mine.map((s: any) => s.sessionId)).toEqual([ids[1]]);
  expect(mine[0].title).toBe("task number 1");
  const all = (await req(a, "session/list", {})).result.sessions.map((s: any) => s.sessionId);
  expect(all.indexOf(ids[2]!)).toBeLessThan(all.indexOf(ids[0]!));
  expect((await req(a, "session/list", { cursor: "bogus" })).error.code).toBe(-32602);
  await a.close();
});

test("a half-written last line loads with a warning; a tool call in flight replays as failed", async () => {
  const a = agent();
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ text: "ok" });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "first" }] });
  await a.close();
  const file = new SessionStore(state).path(sessionId);
  // What a kill -9 mid-tool-call leaves: the call announced, then a torn line.
  appendFileSync(file, JSON.stringify({ type: "update", update: { sessionUpdate: "tool_call", toolCallId: "k9", title: "sleep", status: "pending" } }) + "\n");
  appendFileSync(file, '{"type":"history","message":{"role":"assis');
  const b = agent();
  expect((await req(b, "session/load", { sessionId, cwd: ws, mcpServers: [] })).result).toBeDefined();
  const failed = updatesOf(b, sessionId).find((u) => u.toolCallId === "k9" && u.status === "failed");
  expect(failed).toBeDefined();
  b.provider.push({ text: "continuing" });
  expect((await req(b, "session/prompt", { sessionId, prompt: [{ type: "text", text: "next" }] })).result.stopReason).toBe("end_turn");
  // The torn line was cut before appending: every line of the file parses.
  for (const line of readFileSync(file, "utf8").trim().split("\n")) JSON.parse(line);
  await b.close();
});

test("a session file left readable by others (an older version, a copied store) is made private when it is appended to", () => {
  const dir = mkdtempSync(join(tmpdir(), "tendril-store-mode-"));
  try {
    const store = new SessionStore(dir);
    const file = store.create({ id: "s1", cwd: "/w", mode: "ask", model: "m", createdAt: new Date(0).toISOString() } as never);
    file.close();
    chmodSync(store.path("s1"), 0o644);
    const again = store.reopen("s1");
    again.append([{ type: "mode", mode: "yolo" } as never]);
    again.close();
    expect(statSync(store.path("s1")).mode & 0o777).toBe(0o600);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
