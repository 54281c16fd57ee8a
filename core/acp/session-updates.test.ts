// What ACP's stable schema added to a session's life: message ids on chunks, session_info_update,
// session/delete — driven in memory through the real ACP surface.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionStore } from "../agent/session-store.ts";
import { memoryAgent, type MemoryAgent } from "../../tests/memory-agent.ts";

const state = mkdtempSync(join(tmpdir(), "tendril-updates-"));
const ws = mkdtempSync(join(tmpdir(), "tendril-updates-ws-"));
afterAll(() => {
  for (const d of [state, ws]) rmSync(d, { recursive: true, force: true });
});

let nextId = 1;
const req = (a: MemoryAgent, method: string, params: Record<string, unknown>) => {
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method, params });
  return a.response(id);
};
const updates = (a: MemoryAgent, kind: string) => a.out.filter((m) => m.params?.update?.sessionUpdate === kind).map((m) => m.params.update);

test("chunks of one model response share a messageId; the next response has another", async () => {
  const a = memoryAgent();
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ text: "first", calls: [{ id: "e1", name: "t__echo", input: { text: "x" } }] }, { text: "second" });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  const chunks = updates(a, "agent_message_chunk");
  expect(chunks.map((c) => c.content.text)).toEqual(["first", "second"]);
  expect(chunks.every((c) => typeof c.messageId === "string" && c.messageId.length > 0)).toBe(true);
  expect(chunks[0].messageId).not.toBe(chunks[1].messageId);
  await a.close();
});

test("session_info_update: the first prompt titles the session (one line, at most 80 characters); every turn updates updatedAt", async () => {
  const a = memoryAgent();
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  const long = `Fix   the flaky test ${"x".repeat(100)}\nand more`;
  a.provider.push({ text: "ok" }, { text: "ok" });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: long }] });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "and again" }] });
  const infos = updates(a, "session_info_update");
  expect(infos.length).toBe(2);
  expect(infos[0].title).toBe(`Fix the flaky test ${"x".repeat(60)}…`);
  expect(infos[0].title.length).toBe(80);
  expect(infos[1].title).toBeUndefined();
  for (const i of infos) expect(Number.isNaN(Date.parse(i.updatedAt))).toBe(false);
  // each turn's info is its last update, just before its answer
  const first = a.out.findIndex((m) => m.params?.update?.sessionUpdate === "session_info_update");
  expect(a.out[first + 1]?.result?.stopReason).toBe("end_turn");
  await a.close();
});

test("session title: the first line of the first prompt, not its later lines (a blank first line is skipped; no emoji is cut in half)", async () => {
  const a = memoryAgent();
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ text: "ok" });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "\n  Fix the login bug\r\ndetails: the form posts twice" }] });
  expect(updates(a, "session_info_update").map((i) => i.title)).toEqual(["Fix the login bug"]);
  await a.close();
  const b = memoryAgent();
  const s2 = (await req(b, "session/new", { cwd: ws, mcpServers: [] })).result.sessionId;
  b.provider.push({ text: "ok" });
  await req(b, "session/prompt", { sessionId: s2, prompt: [{ type: "text", text: `${"a".repeat(78)}😀😀😀` }] });
  const [title] = updates(b, "session_info_update").map((i) => i.title);
  expect(title).toBe(`${"a".repeat(78)}😀…`);
  await b.close();
});

test("a loaded session keeps its title: its next turn sends only updatedAt", async () => {
  const store = new SessionStore(state);
  const a = memoryAgent({ store });
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ text: "ok" });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "titled" }] });
  await a.close();
  const b = memoryAgent({ store });
  await req(b, "session/load", { sessionId, cwd: ws, mcpServers: [] });
  b.provider.push({ text: "ok" });
  await req(b, "session/prompt", { sessionId, prompt: [{ type: "text", text: "more" }] });
  expect(updates(b, "session_info_update").map((i) => i.title)).toEqual([undefined]);
  await b.close();
});

test("session/delete: the file goes, list and load forget it; a live session is closed first; unknown ids are refused", async () => {
  const store = new SessionStore(state);
  const a = memoryAgent({ store });
  expect((await req(a, "initialize", { protocolVersion: 1 })).result.agentCapabilities.sessionCapabilities.delete).toEqual({});
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ text: "ok" });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "keep me?" }] });
  expect(existsSync(store.path(sessionId))).toBe(true);
  // idle and live: closed, then its file removed
  expect((await req(a, "session/delete", { sessionId })).result).toEqual({});
  expect(existsSync(store.path(sessionId))).toBe(false);
  expect((await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "x" }] })).error.code).toBe(-32002);
  expect((await req(a, "session/list", {})).result.sessions.map((s: { sessionId: string }) => s.sessionId)).not.toContain(sessionId);
  expect((await req(a, "session/load", { sessionId, cwd: ws, mcpServers: [] })).error.code).toBe(-32002);
  // unknown, and ids that are not session ids (nothing outside the store is touched)
  expect((await req(a, "session/delete", { sessionId })).error.code).toBe(-32002);
  const outside = join(state, "victim.jsonl");
  writeFileSync(outside, "{}\n");
  for (const bad of ["../victim", "sessions/../../victim", "no-such-session"]) expect((await req(a, "session/delete", { sessionId: bad })).error.code).toBe(-32002);
  expect(existsSync(outside)).toBe(true);
  expect((await req(a, "session/delete", { sessionId: 42 })).error.code).toBe(-32602);
  expect(readdirSync(join(state, "sessions")).includes(`${sessionId}.jsonl`)).toBe(false);
  await a.close();
});

test("session/delete of a running session cancels its turn, closes it and deletes it in the one request (no cancel first)", async () => {
  const store = new SessionStore(state);
  const a = memoryAgent({ store });
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ text: "ok" });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "first" }] });
  a.provider.push({ hang: true });
  a.send({ jsonrpc: "2.0", id: 901, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "long" }] } });
  // the second turn is running once the scripted provider has its request
  await a.provider.requested(2);
  expect((await req(a, "session/delete", { sessionId })).result).toEqual({});
  expect((await a.response(901)).result.stopReason).toBe("cancelled");
  expect(existsSync(store.path(sessionId))).toBe(false);
  expect((await req(a, "session/list", {})).result.sessions.map((s: { sessionId: string }) => s.sessionId)).not.toContain(sessionId);
  expect((await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "x" }] })).error.code).toBe(-32002);
  await a.close();
});

test("a prompt that fails before any output sends no session_info_update (a client may resend it) and titles nothing", async () => {
  const a = memoryAgent();
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ error: { kind: "server", message: "down", status: 503 } }, { text: "ok" });
  expect((await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "first try" }] })).error.code).toBe(-32603);
  expect(updates(a, "session_info_update")).toEqual([]);
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "second try" }] });
  expect(updates(a, "session_info_update").map((i) => i.title)).toEqual(["second try"]);
  await a.close();
});

test("session/fork: a new session with a copy of the history; the original file is untouched; busy and unknown are refused", async () => {
  const store = new SessionStore(state);
  const a = memoryAgent({ store });
  expect((await req(a, "initialize", { protocolVersion: 1 })).result.agentCapabilities.sessionCapabilities.fork).toEqual({});
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ text: "remembered: blue" });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "my colour is blue" }] });
  await req(a, "session/set_mode", { sessionId, modeId: "read-only" });
  const original = readFileSync(store.path(sessionId), "utf8");
  const forked = (await req(a, "session/fork", { sessionId, cwd: ws, mcpServers: [] })).result;
  expect(forked.sessionId).not.toBe(sessionId);
  expect(forked.modes.currentModeId).toBe("read-only");
  // the fork continues from the copied history; the original does not see the fork's turn
  a.provider.push({ text: "it was blue" });
  await req(a, "session/prompt", { sessionId: forked.sessionId, prompt: [{ type: "text", text: "what colour?" }] });
  expect(JSON.stringify(a.provider.requests.at(-1))).toContain("my colour is blue");
  expect(readFileSync(store.path(sessionId), "utf8")).toBe(original);
  expect(readFileSync(store.path(forked.sessionId), "utf8")).toContain("what colour?");
  expect((await req(a, "session/list", {})).result.sessions.map((s: { sessionId: string }) => s.sessionId)).toContain(forked.sessionId);
  // refused: a running prompt, an unknown id, a relative cwd
  a.provider.push({ hang: true });
  a.send({ jsonrpc: "2.0", id: 950, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "long" }] } });
  await a.provider.requested(3);
  expect((await req(a, "session/fork", { sessionId, cwd: ws, mcpServers: [] })).error.message).toContain("busy with a prompt");
  a.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
  await a.response(950);
  expect((await req(a, "session/fork", { sessionId: "no-such-session", cwd: ws, mcpServers: [] })).error.code).toBe(-32002);
  expect((await req(a, "session/fork", { sessionId, cwd: "relative", mcpServers: [] })).error.code).toBe(-32602);
  await a.close();
});

test("session/fork without a session store forks a live session's history in memory", async () => {
  const a = memoryAgent();
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ text: "noted" }, { text: "yes" });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "remember 42" }] });
  const forked = (await req(a, "session/fork", { sessionId, cwd: ws, mcpServers: [] })).result;
  await req(a, "session/prompt", { sessionId: forked.sessionId, prompt: [{ type: "text", text: "what number?" }] });
  expect(JSON.stringify(a.provider.requests.at(-1))).toContain("remember 42");
  await a.close();
});
