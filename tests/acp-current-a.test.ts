// ACP as it stands today, part A, in memory over the real ACP surface: the `plan` mode (denials by the
// policy engine, the plan as `plan` entries, the question that switches modes and carries it out),
// `thought_level`, `additionalDirectories`, `$/cancel_request`, strict params and compactions replayed
// by load; and each through the built binary against the fake LLM where the wiring matters.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PermissionMode } from "../core/policy/modes.ts";
import { createPolicy, type PolicyCall } from "../core/policy/policy.ts";
import { compileRule } from "../core/policy/rules.ts";
import picomatch from "picomatch";
import { memoryAgent, type MemoryAgent } from "./memory-agent.ts";
import { scriptedProvider, standInPool, standInTools, type ScriptedProvider } from "./in-memory.ts";
import type { McpServerSpec } from "../core/mcp/types.ts";
import stableSchema from "@agentclientprotocol/sdk/schema/v1/schema.json" with { type: "json" };
import unstableSchema from "@agentclientprotocol/sdk/schema/v1/schema.unstable.json" with { type: "json" };
import { SessionStore } from "../core/agent/session-store.ts";
import { SessionManager } from "../core/acp/session-manager.ts";
import { loadLimits } from "../core/limits.ts";
import type { LlmRequest, Message } from "../core/llm/types.ts";
import { toAnthropicBody } from "../core/llm/anthropic.ts";
import { toOpenAiBody } from "../core/llm/openai.ts";
import { rootOf } from "../core/path-inside.ts";
import { StrReplaceTool } from "../tools/dev/str-replace.ts";
import { startFakeLlm, type FakeLlm } from "./fake-llm.ts";
import { agentEnv } from "./agent-env.ts";
import { startAgent, type StartOptions, type TestAgent } from "./acp-client.ts";
import { spawnRawAgent } from "./raw-harness.ts";
import { ROOT } from "./binary.ts";

let fake: FakeLlm;
let work: string;
const agents: TestAgent[] = [];
beforeAll(async () => {
  fake = await startFakeLlm();
  work = tempDir("work");
});
afterAll(async () => {
  for (const a of agents) await a.close(2000).catch(() => {});
  await fake.close();
});
function binaryAgent(opts: StartOptions & { provider?: "anthropic" | "openai" } = {}): TestAgent {
  const a = startAgent({ ...opts, env: { ...agentEnv(fake, work, opts.provider), ...opts.env } });
  agents.push(a);
  return a;
}

const dirs: string[] = [];
const tempDir = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `tendril-acp-a-${name}-`));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

let nextId = 1;
const req = (a: MemoryAgent, method: string, params: unknown) => {
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method, params });
  return a.response(id);
};
const updates = (a: MemoryAgent, kind: string) => a.out.filter((m) => m.params?.update?.sessionUpdate === kind).map((m) => m.params.update);

/** Answers the agent's permission requests, in order, with these option ids. */
function answerPermissions(a: MemoryAgent, optionIds: string[]): () => number {
  let answered = 0;
  const timer = setInterval(() => {
    const asks = a.out.filter((m) => m.method === "session/request_permission");
    while (answered < asks.length && answered < optionIds.length) {
      a.send({ jsonrpc: "2.0", id: asks[answered]!.id, result: { outcome: { outcome: "selected", optionId: optionIds[answered] } } });
      answered++;
    }
  }, 2);
  return () => (clearInterval(timer), answered);
}

// ── plan mode ───────────────────────────────────────────────────────────────────────────────────

const call = (tool: string, readOnly = false, input: Record<string, unknown> = {}): PolicyCall => ({ qualifiedName: `dev__${tool}`, tool, input, readOnly });

test("plan and read-only: the policy engine denies every tool that may change things, without asking; read-only tools run", () => {
  const table: Record<PermissionMode, Record<string, string>> = {
    ask: { read: "allow", shell: "ask", edit: "ask", remembered: "allow" },
    "auto-edit": { read: "allow", shell: "ask", edit: "allow", remembered: "allow" },
    yolo: { read: "allow", shell: "allow", edit: "allow", remembered: "allow" },
    "read-only": { read: "allow", shell: "deny", edit: "deny", remembered: "deny" },
    plan: { read: "allow", shell: "deny", edit: "deny", remembered: "deny" },
  };
  for (const [mode, want] of Object.entries(table) as [PermissionMode, Record<string, string>][]) {
    const p = createPolicy({ mode, workspace: "/w", rules: [] });
    // an "always allow" from earlier in the session never opens a hard mode
    p.remember(call("shell", false, { command: "make" }), "allow");
    const got: Record<string, string> = {
      read: p.decide(call("todo", true)).decision,
      shell: p.decide(call("shell", false, { command: "rm -rf x" })).decision,
      edit: p.decide(call("str_replace", false, { path: "a" })).decision,
      remembered: p.decide(call("shell", false, { command: "make" })).decision,
    };
    expect({ mode, got }).toEqual({ mode, got: want });
  }
  const plan = createPolicy({ mode: "plan", workspace: "/w", rules: [] }).decide(call("shell", false, { command: "ls" }));
  expect(plan).toEqual({ decision: "deny", why: expect.stringContaining("denied by mode plan") });
  expect(plan.decision === "deny" && plan.why).toContain("plan__ready");
  // a deny rule still wins over a read-only tool; the user's own allow rule is the policy too
  const rules = [
    compileRule({ tool: "dev__todo", decision: "deny", label: "r0" }, picomatch),
    compileRule({ tool: "dev__shell", decision: "allow", when: { arg: "command", prefix: "ls" }, label: "r1" }, picomatch),
  ];
  const ruled = createPolicy({ mode: "plan", workspace: "/w", rules });
  expect(ruled.decide(call("todo", true)).decision).toBe("deny");
  expect(ruled.decide(call("shell", false, { command: "ls" })).decision).toBe("allow");
});

test("plan mode round trip: a change is denied without asking, the plan arrives as plan entries, the switch question carries it out", async () => {
  const calls: string[] = [];
  const a = memoryAgent({ mode: "plan", pool: standInPool({ calls }) });
  await req(a, "initialize", { protocolVersion: 1 });
  const opened = (await req(a, "session/new", { cwd: tempDir("plan"), mcpServers: [] })).result;
  expect(opened.modes.currentModeId).toBe("plan");
  expect(opened.modes.availableModes.map((m: { id: string }) => m.id)).toContain("plan");
  const sessionId = opened.sessionId;
  a.provider.push(
    { calls: [{ id: "e1", name: "t__echo", input: { text: "change" } }] },
    { calls: [{ id: "p1", name: "plan__ready", input: { steps: ["edit a.txt", "run the tests"], summary: "Fix the bug" } }] },
    { calls: [{ id: "e2", name: "t__echo", input: { text: "now" } }] },
    { text: "Done." },
  );
  // the plan question (auto-edit), then the echo in auto-edit mode (a command: asked, allowed)
  const stop = answerPermissions(a, ["auto-edit", "allow_once"]);
  const r = await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "fix the bug" }] });
  expect(stop()).toBe(2);
  expect(r.result.stopReason).toBe("end_turn");
  // the first echo never reached the tool, and nobody was asked about it
  expect(calls).toEqual(["t__echo"]);
  const asks = a.out.filter((m) => m.method === "session/request_permission").map((m) => m.params);
  expect(asks[0].toolCall).toMatchObject({ toolCallId: "p1", kind: "switch_mode" });
  // the tool call itself shows as a mode switch too (it was shown as a read)
  expect(updates(a, "tool_call").find((u) => u.toolCallId === "p1")?.kind).toBe("switch_mode");
  expect(asks[0].options.map((o: { optionId: string }) => o.optionId)).toEqual(["auto-edit", "ask", "plan"]);
  expect(asks[1].toolCall.toolCallId).toBe("e2");
  const e1 = updates(a, "tool_call_update").find((u) => u.toolCallId === "e1");
  expect(e1.status).toBe("failed");
  expect(JSON.stringify(e1.content)).toContain("denied by mode plan");
  expect(updates(a, "plan")[0].entries).toEqual([
    { content: "edit a.txt", priority: "medium", status: "pending" },
    { content: "run the tests", priority: "medium", status: "pending" },
  ]);
  expect(updates(a, "current_mode_update")).toEqual([{ sessionUpdate: "current_mode_update", currentModeId: "auto-edit" }]);
  expect(updates(a, "config_option_update").at(-1).configOptions.find((o: { id: string }) => o.id === "mode").currentValue).toBe("auto-edit");
  // the model heard the switch in the plan call's result
  expect(JSON.stringify(a.provider.requests[2])).toContain("switched to auto-edit mode");
  await a.close();
});

test("plan mode: staying in plan keeps changes denied; a bad plan is the model's to fix", async () => {
  const calls: string[] = [];
  const a = memoryAgent({ mode: "plan", pool: standInPool({ calls }) });
  const sessionId = (await req(a, "session/new", { cwd: tempDir("stay"), mcpServers: [] })).result.sessionId;
  a.provider.push(
    { calls: [{ id: "p0", name: "plan__ready", input: { steps: [] } }] },
    { calls: [{ id: "p1", name: "plan__ready", input: { steps: ["one step"] } }] },
    { calls: [{ id: "e1", name: "t__echo", input: { text: "sneak" } }] },
    { text: "What should change?" },
  );
  const stop = answerPermissions(a, ["plan"]);
  expect((await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "plan it" }] })).result.stopReason).toBe("end_turn");
  expect(stop()).toBe(1);
  expect(calls).toEqual([]);
  expect(updates(a, "current_mode_update")).toEqual([]);
  const bad = updates(a, "tool_call_update").find((u) => u.toolCallId === "p0" && u.status === "failed");
  expect(JSON.stringify(bad.content)).toContain("steps must be a non-empty array");
  expect(JSON.stringify(updates(a, "tool_call_update").find((u) => u.toolCallId === "e1" && u.status === "failed"))).toContain("denied by mode plan");
  await a.close();
});

test("plan mode through the binary: the shell is denied by policy, plan__ready is offered only in plan mode, the switch lets the edit run", async () => {
  const a = binaryAgent({ script: ["allow_always"] });
  await a.initialize();
  const ws = tempDir("plan-bin");
  const { sessionId } = await a.newSession(ws);
  await a.agent.request("session/set_mode", { sessionId, modeId: "plan" });
  const before = fake.requests.length;
  fake.script([
    { toolCalls: [{ id: "s1", name: "dev__shell", input: { command: "touch made-in-plan.txt" } }] },
    { toolCalls: [{ id: "p1", name: "plan__ready", input: { steps: ["write notes.txt"] } }] },
    { toolCalls: [{ id: "w1", name: "dev__str_replace", input: { path: "notes.txt", old_str: "", new_str: "planned\n" } }] },
    { text: "done" },
  ]);
  expect((await a.prompt(sessionId, "write notes")).stopReason).toBe("end_turn");
  expect(existsSync(join(ws, "made-in-plan.txt"))).toBe(false);
  expect(readFileSync(join(ws, "notes.txt"), "utf8")).toBe("planned\n");
  // one question only: the plan's (auto-edit runs the edit without asking)
  expect(a.permissions.map((p) => p.request.toolCall.kind)).toEqual(["switch_mode"]);
  const denied = a.updates.map((n) => n.update).find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "s1" && u.status === "failed");
  expect(JSON.stringify(denied)).toContain("denied by mode plan");
  expect(a.updates.some((n) => n.update.sessionUpdate === "plan")).toBe(true);
  expect(a.updates.map((n) => n.update).filter((u) => u.sessionUpdate === "current_mode_update")).toEqual([
    { sessionUpdate: "current_mode_update", currentModeId: "plan" },
    { sessionUpdate: "current_mode_update", currentModeId: "auto-edit" },
  ]);
  const offered = fake.requests.slice(before).map((r) => (r.body.tools ?? []).map((t: { name: string }) => t.name));
  expect(offered[0]).toContain("plan__ready");
  expect(offered[2]).not.toContain("plan__ready");
}, 30_000);

// ── thought_level ───────────────────────────────────────────────────────────────────────────────

test("thought_level: offered by category where the provider maps it, pushed with config_option_update, sent with the next request, kept by load", async () => {
  const store = new SessionStore(tempDir("thought-state"));
  const seen: (string | undefined)[] = [];
  const provider = scriptedProvider();
  const inner = provider.stream.bind(provider);
  const mapping: ScriptedProvider = Object.assign(provider, { thoughtLevels: true, stream: (r: LlmRequest) => (seen.push(r.thoughtLevel), inner(r)) });
  const a = memoryAgent({ provider: mapping, store });
  const ws = tempDir("thought");
  const opened = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  const option = opened.configOptions.find((o: { id: string }) => o.id === "thought_level");
  expect(option).toMatchObject({ category: "thought_level", type: "select", currentValue: "off" });
  expect(option.options.map((o: { value: string }) => o.value)).toEqual(["off", "low", "medium", "high"]);
  const sessionId = opened.sessionId;
  const set = await req(a, "session/set_config_option", { sessionId, configId: "thought_level", value: "high" });
  expect(set.result.configOptions.find((o: { id: string }) => o.id === "thought_level").currentValue).toBe("high");
  expect(updates(a, "config_option_update").at(-1).configOptions.find((o: { id: string }) => o.id === "thought_level").currentValue).toBe("high");
  const bad = await req(a, "session/set_config_option", { sessionId, configId: "thought_level", value: "extreme" });
  expect(bad.error).toMatchObject({ code: -32602, message: expect.stringContaining('unknown thought_level "extreme" (levels: off, low, medium, high)') });
  provider.push({ text: "thought hard" });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "think" }] });
  expect(seen).toEqual(["high"]);
  await req(a, "session/close", { sessionId });
  const loaded = (await req(a, "session/load", { sessionId, cwd: ws, mcpServers: [] })).result;
  expect(loaded.configOptions.find((o: { id: string }) => o.id === "thought_level").currentValue).toBe("high");
  await a.close();
  // a provider that cannot map it is not offered it, and setting it is refused by name
  const plain = memoryAgent();
  const id2 = (await req(plain, "session/new", { cwd: ws, mcpServers: [] })).result;
  expect(id2.configOptions.map((o: { id: string }) => o.id)).toEqual(["mode", "model"]);
  const refused = await req(plain, "session/set_config_option", { sessionId: id2.sessionId, configId: "thought_level", value: "low" });
  expect(refused.error).toMatchObject({ code: -32602, message: 'unknown config option "thought_level" (options: mode, model)' });
  await plain.close();
});

test("thought_level in the adapters: Anthropic's thinking budget within max_tokens, OpenAI's reasoning effort, off sends neither", () => {
  const base = { model: "m", system: "", messages: [], tools: [], maxTokens: 32_768, signal: new AbortController().signal };
  expect(toAnthropicBody({ ...base }).thinking).toBeUndefined();
  expect(toAnthropicBody({ ...base, thoughtLevel: "off" }).thinking).toBeUndefined();
  const budgets = (["low", "medium", "high"] as const).map((thoughtLevel) => (toAnthropicBody({ ...base, thoughtLevel }).thinking as { budget_tokens: number }).budget_tokens);
  expect(budgets[0]).toBeGreaterThanOrEqual(1024);
  expect(budgets[0]! < budgets[1]! && budgets[1]! < budgets[2]!).toBe(true);
  // the budget shares max_tokens and leaves room for the answer
  expect(toAnthropicBody({ ...base, maxTokens: 4096, thoughtLevel: "high" }).thinking).toEqual({ type: "enabled", budget_tokens: 3072 });
  expect(toOpenAiBody({ ...base }, true).reasoning_effort).toBeUndefined();
  expect(toOpenAiBody({ ...base, thoughtLevel: "off" }, true).reasoning_effort).toBeUndefined();
  expect(toOpenAiBody({ ...base, thoughtLevel: "medium" }, false).reasoning_effort).toBe("medium");
  // signed thinking goes back before the tool call only while thinking is on
  const messages: Message[] = [
    { role: "user", content: [{ type: "text", text: "go" }] },
    { role: "assistant", text: "", toolCalls: [{ id: "c1", name: "t__x", input: {} }], reasoning: [{ text: "hmm", signature: "sig" }, { redacted: "opaque" }] },
    { role: "tool", results: [{ callId: "c1", content: "ok", isError: false }] },
  ];
  const on = toAnthropicBody({ ...base, messages, thoughtLevel: "low" }).messages[1]!.content as unknown as Record<string, unknown>[];
  expect(on.map((b) => b.type)).toEqual(["thinking", "redacted_thinking", "tool_use"]);
  expect(on[0]).toEqual({ type: "thinking", thinking: "hmm", signature: "sig" });
  const off = toAnthropicBody({ ...base, messages }).messages[1]!.content as unknown as Record<string, unknown>[];
  expect(off.map((b) => b.type)).toEqual(["tool_use"]);
});

test("thought_level through the binary: the fake LLM receives Anthropic's thinking budget (with the signed block sent back) and OpenAI's reasoning_effort", async () => {
  for (const provider of ["anthropic", "openai"] as const) {
    const a = binaryAgent({ provider });
    await a.initialize();
    const { sessionId, configOptions } = await a.newSession(tempDir(`thought-${provider}`));
    expect(configOptions?.map((o) => o.id)).toContain("thought_level");
    await a.agent.request("session/set_config_option", { sessionId, configId: "thought_level", value: "high" });
    const before = fake.requests.length;
    fake.script([{ thinking: "let me see", toolCalls: [{ id: "t1", name: "dev__todo", input: {} }] }, { text: "done" }]);
    expect((await a.prompt(sessionId, "think")).stopReason).toBe("end_turn");
    const bodies = fake.requests.slice(before).map((r) => r.body);
    expect(bodies.length).toBe(2);
    if (provider === "anthropic") {
      for (const b of bodies) expect(b.thinking).toEqual({ type: "enabled", budget_tokens: 24_576 });
      expect(bodies[1].messages[1].content[0]).toEqual({ type: "thinking", thinking: "let me see", signature: "fake-signature" });
    } else {
      for (const b of bodies) expect(b.reasoning_effort).toBe("high");
    }
    expect(a.updates.some((n) => n.update.sessionUpdate === "config_option_update")).toBe(true);
    await a.close(5000);
  }
}, 30_000);

// ── additionalDirectories ───────────────────────────────────────────────────────────────────────

test("additionalDirectories: advertised, given to the dev tools and the system prompt on new, load, resume and fork", async () => {
  const given: (readonly string[])[] = [];
  const store = new SessionStore(tempDir("dirs-state"));
  const a = memoryAgent({ store, devServer: (_cwd, { additionalDirectories }) => (given.push(additionalDirectories), { name: "dev", transport: "local", private: true }) });
  const init = (await req(a, "initialize", { protocolVersion: 1 })).result;
  expect(init.agentCapabilities.sessionCapabilities.additionalDirectories).toEqual({});
  const ws = tempDir("dirs-ws");
  const [x, y] = [tempDir("dirs-x"), tempDir("dirs-y")];
  const { sessionId } = (await req(a, "session/new", { cwd: ws, additionalDirectories: [x, y, x], mcpServers: [] })).result;
  expect(given.at(-1)).toEqual([x, y]);
  await req(a, "session/close", { sessionId });
  for (const method of ["session/load", "session/resume"]) {
    expect((await req(a, method, { sessionId, cwd: ws, additionalDirectories: [y], mcpServers: [] })).result).toBeDefined();
    expect(given.at(-1)).toEqual([y]);
  }
  expect((await req(a, "session/fork", { sessionId, cwd: ws, additionalDirectories: [x], mcpServers: [] })).result.sessionId).toBeString();
  expect(given.at(-1)).toEqual([x]);
  // null and absent are none
  await req(a, "session/new", { cwd: ws, additionalDirectories: null, mcpServers: [] });
  expect(given.at(-1)).toEqual([]);
  await a.close();
});

test("additionalDirectories: session/list reports each session's, as it was created or forked; none is omitted", async () => {
  const store = new SessionStore(tempDir("dirs-list-state"));
  const a = memoryAgent({ store });
  const ws = tempDir("dirs-list-ws");
  const [x, y] = [tempDir("dirs-list-x"), tempDir("dirs-list-y")];
  const withDirs = (await req(a, "session/new", { cwd: ws, additionalDirectories: [x, y], mcpServers: [] })).result.sessionId;
  const without = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result.sessionId;
  const forked = (await req(a, "session/fork", { sessionId: withDirs, cwd: ws, additionalDirectories: [y], mcpServers: [] })).result.sessionId;
  const listed = (await req(a, "session/list", {})).result.sessions as { sessionId: string; additionalDirectories?: string[] }[];
  const dirsOf = (id: string) => listed.find((s) => s.sessionId === id)!;
  expect(dirsOf(withDirs).additionalDirectories).toEqual([x, y]);
  expect("additionalDirectories" in dirsOf(without)).toBe(false);
  expect(dirsOf(forked).additionalDirectories).toEqual([y]);
  await a.close();
});

test("additionalDirectories: a relative, missing or file path, or not an array, is -32602 naming it, on every method that takes it", async () => {
  const store = new SessionStore(tempDir("dirs-bad-state"));
  const a = memoryAgent({ store });
  const ws = tempDir("dirs-bad");
  const file = join(ws, "a-file.txt");
  writeFileSync(file, "x");
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  await req(a, "session/close", { sessionId });
  const cases: [unknown, string][] = [
    [["rel/dir"], 'additionalDirectories[0] must be an absolute path, got "rel/dir"'],
    [[ws, join(ws, "missing")], `additionalDirectories[1] ${join(ws, "missing")} cannot be used: no such directory`],
    [[file], `additionalDirectories[0] ${file} is not a directory`],
    [[42], "additionalDirectories[0] must be an absolute path to a directory, got 42"],
    ["x", 'additionalDirectories must be an array of absolute paths or null, got the string "x"'],
  ];
  for (const method of ["session/new", "session/load", "session/resume", "session/fork"]) {
    for (const [dirs, why] of cases) {
      const r = await req(a, method, { sessionId, cwd: ws, additionalDirectories: dirs, mcpServers: [] });
      expect({ method, error: r.error }).toEqual({ method, error: { code: -32602, message: `${method}: ${why}`, data: expect.anything() } });
    }
  }
  // nothing was lost: the session still loads
  expect((await req(a, "session/load", { sessionId, cwd: ws, mcpServers: [] })).result).toBeDefined();
  await a.close();
});

test("additionalDirectories: inside_workspace rules and the edit tool count every root; outside them all is still refused", async () => {
  const [ws, extra, elsewhere] = [tempDir("roots-ws"), tempDir("roots-extra"), tempDir("roots-else")];
  const rules = [compileRule({ tool: "*__str_replace", decision: "allow", when: { arg: "path", inside_workspace: true }, label: "r" }, picomatch)];
  const p = createPolicy({ mode: "ask", workspace: ws, additionalRoots: [extra], rules });
  expect(p.decide(call("str_replace", false, { path: join(extra, "a.txt") })).decision).toBe("allow");
  expect(p.decide(call("str_replace", false, { path: "rel.txt" })).decision).toBe("allow");
  expect(p.decide(call("str_replace", false, { path: join(elsewhere, "a.txt") })).decision).toBe("ask");
  const editor = new StrReplaceTool({ root: realpathSync(ws), extraRoots: [realpathSync(extra)], maxFileBytes: 4096, maxReplyBytes: 4096, tempStaleMs: 60_000 });
  expect((await editor.call({ path: join(extra, "new.txt"), old_str: "", new_str: "hi\n" })).isError).toBeUndefined();
  expect(readFileSync(join(extra, "new.txt"), "utf8")).toBe("hi\n");
  const refused = await editor.call({ path: join(elsewhere, "no.txt"), old_str: "", new_str: "x" });
  expect(refused).toEqual({ text: expect.stringContaining("is outside the workspace roots"), isError: true });
  expect(existsSync(join(elsewhere, "no.txt"))).toBe(false);
  expect(rootOf([ws, extra], join(extra, "d", "f"))).toBe(extra);
  expect(rootOf([ws, extra], "rel")).toBe(ws);
  expect(rootOf([ws, extra], elsewhere)).toBeUndefined();
});

test("additionalDirectories through the binary: the model's edit lands in the extra root, and the system prompt names it", async () => {
  const a = binaryAgent({ env: { TENDRIL_MODE: "yolo" } });
  await a.initialize();
  const [ws, extra] = [tempDir("bin-ws"), tempDir("bin-extra")];
  const { sessionId } = await a.agent.request("session/new", { cwd: ws, additionalDirectories: [extra], mcpServers: [] });
  const before = fake.requests.length;
  fake.script([{ toolCalls: [{ id: "w1", name: "dev__str_replace", input: { path: join(extra, "out.txt"), old_str: "", new_str: "extra\n" } }] }, { text: "done" }]);
  expect((await a.prompt(sessionId, "write there")).stopReason).toBe("end_turn");
  expect(readFileSync(join(extra, "out.txt"), "utf8")).toBe("extra\n");
  expect(JSON.stringify(fake.requests[before]!.body.system)).toContain(extra);
  const bad = await a.agent.request("session/new", { cwd: ws, additionalDirectories: ["relative"], mcpServers: [] }).catch((e) => e);
  expect(bad).toMatchObject({ code: -32602, message: expect.stringContaining("additionalDirectories[0] must be an absolute path") });
}, 30_000);

// ── $/cancel_request ────────────────────────────────────────────────────────────────────────────

test("$/cancel_request: a session/new still starting answers -32800 at once, and the session it opened anyway is gone", async () => {
  const store = new SessionStore(tempDir("cancel-state"));
  // a pool whose start waits for the test's word, and says when a session's tools are closed
  let release!: () => void;
  const started = new Promise<void>((r) => (release = r));
  const closed: string[] = [];
  let firstClose!: () => void;
  const closedOnce = new Promise<void>((r) => (firstClose = r));
  const pool = {
    async openTools(specs: McpServerSpec[]) {
      await started;
      const tools = standInTools();
      return {
        ...tools,
        close: async () => {
          closed.push(specs.map((sp) => sp.name).join(","));
          firstClose();
        },
      };
    },
  };
  const a = memoryAgent({ store, pool });
  await req(a, "initialize", { protocolVersion: 1 });
  const ws = tempDir("cancel");
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method: "session/new", params: { cwd: ws, mcpServers: [] } });
  a.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } });
  // answered while the start is still held
  expect((await a.response(id)).error).toEqual({ code: -32800, message: "session/new was cancelled ($/cancel_request)" });
  release();
  // once the start settles, what it opened is undone: its tools closed, no session listed or announced
  await closedOnce;
  expect(closed.length).toBe(1);
  expect((await req(a, "session/list", {})).result.sessions).toEqual([]);
  expect(updates(a, "available_commands_update")).toEqual([]);
  // the connection goes on: the next session/new works
  expect((await req(a, "session/new", { cwd: ws, mcpServers: [] })).result.sessionId).toBeString();
  await a.close();
});

test("$/cancel_request: for a prompt it is session/cancel (stopReason cancelled); for an answered or unknown id it is ignored", async () => {
  const a = memoryAgent();
  const sessionId = (await req(a, "session/new", { cwd: tempDir("cancel-prompt"), mcpServers: [] })).result.sessionId;
  a.provider.push({ hang: true });
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "wait" }] } });
  await a.provider.requested(1);
  a.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } });
  expect((await a.response(id)).result.stopReason).toBe("cancelled");
  a.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } });
  a.send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: "never-sent" } });
  a.provider.push({ text: "still here" });
  expect((await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "again" }] })).result.stopReason).toBe("end_turn");
  await a.close();
});

// ── strict params ───────────────────────────────────────────────────────────────────────────────

const stableDefs = (stableSchema as { $defs: Record<string, any> }).$defs;
const unstableDefs = (unstableSchema as { $defs: Record<string, any> }).$defs;

/** The JSON type a schema property wants (through its $ref / allOf / anyOf), null left aside. */
function wantedType(prop: any, defs: Record<string, any>): string | undefined {
  const types = Array.isArray(prop.type) ? prop.type.filter((t: string) => t !== "null") : prop.type ? [prop.type] : [];
  if (types.length === 1) return types[0];
  for (const alt of [...(prop.allOf ?? []), ...(prop.anyOf ?? []), ...(prop.oneOf ?? [])]) {
    const ref = alt.$ref as string | undefined;
    const t = ref ? wantedType(defs[ref.split("/").pop()!], defs) : alt.type === "null" ? undefined : wantedType(alt, defs);
    if (t) return t;
  }
  return undefined;
}

/** A value of another JSON type than `type`. */
const WRONG: Record<string, unknown> = { string: 42, integer: "x", number: "x", boolean: "x", object: "x", array: { not: "an array" } };

test("strict params: every field of every request the agent answers, of the wrong type, is -32602 naming it", async () => {
  const store = new SessionStore(tempDir("strict-state"));
  const a = memoryAgent({ store });
  const ws = tempDir("strict");
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  // what a valid request of each method carries; each field is then replaced by a value of the wrong type
  const valid: Record<string, [Record<string, any>, string]> = {
    initialize: [{ protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "c", version: "1" } }, "InitializeRequest"],
    authenticate: [{ methodId: "api-key" }, "AuthenticateRequest"],
    logout: [{}, "LogoutRequest"],
    "session/new": [{ cwd: ws, mcpServers: [] }, "NewSessionRequest"],
    "session/load": [{ sessionId, cwd: ws, mcpServers: [] }, "LoadSessionRequest"],
    "session/resume": [{ sessionId, cwd: ws, mcpServers: [] }, "ResumeSessionRequest"],
    "session/fork": [{ sessionId, cwd: ws, mcpServers: [] }, "ForkSessionRequest"],
    "session/list": [{}, "ListSessionsRequest"],
    "session/close": [{ sessionId }, "CloseSessionRequest"],
    "session/delete": [{ sessionId }, "DeleteSessionRequest"],
    "session/prompt": [{ sessionId, prompt: [] }, "PromptRequest"],
    "session/set_mode": [{ sessionId, modeId: "ask" }, "SetSessionModeRequest"],
    "session/set_config_option": [{ sessionId, configId: "mode", value: "ask" }, "SetSessionConfigOptionRequest"],
  };
  const wrongs: string[] = [];
  for (const [method, [params, def]] of Object.entries(valid)) {
    const defs = stableDefs[def] ? stableDefs : unstableDefs;
    // `systemPrompt` (unstable): not advertised and not read (Tendril takes `_meta.systemPrompt`)
    const fields: [string, any][] = Object.entries(defs[def].properties).filter(([k]) => k !== "systemPrompt");
    // initialize's capabilities and client info, one level down
    if (method === "initialize") {
      for (const [k, v] of Object.entries(stableDefs.ClientCapabilities.properties)) fields.push([`clientCapabilities.${k}`, v]);
      for (const [k, v] of Object.entries(stableDefs.Implementation.properties)) fields.push([`clientInfo.${k}`, v]);
    }
    if (method === "session/set_config_option") fields.push(["value", { type: "string" }]);
    for (const [path, prop] of fields) {
      const type = wantedType(prop, defs);
      if (!type) throw new Error(`${method}.${path}: no type found in the schema`);
      const probe = structuredClone(params);
      const [head, tail] = path.split(".");
      if (tail) probe[head!] = { ...probe[head!], [tail]: WRONG[type] };
      else probe[head!] = WRONG[type];
      const r = await req(a, method, probe);
      const named = r.error?.code === -32602 && r.error.message.includes(path);
      if (!named) wrongs.push(`${method} ${path}=${JSON.stringify(WRONG[type])}: ${JSON.stringify(r.error ?? r.result).slice(0, 160)}`);
    }
  }
  expect(wrongs).toEqual([]);
  await a.close();
});

test("strict params: initialize with clientCapabilities \"x\" fails naming it; a boolean config value must say type boolean", async () => {
  const a = memoryAgent();
  const init = await req(a, "initialize", { protocolVersion: 1, clientCapabilities: "x" });
  expect(init.error).toEqual({ code: -32602, message: 'initialize: clientCapabilities must be an object, got the string "x"', data: { param: "clientCapabilities" } });
  const { sessionId } = (await req(a, "session/new", { cwd: tempDir("strict-bool"), mcpServers: [] })).result;
  const typed = await req(a, "session/set_config_option", { sessionId, configId: "mode", type: "boolean", value: "ask" });
  expect(typed.error).toMatchObject({ code: -32602, message: expect.stringContaining("value must be a boolean") });
  const untyped = await req(a, "session/set_config_option", { sessionId, configId: "mode", value: true });
  expect(untyped.error).toMatchObject({ code: -32602, message: expect.stringContaining("value must be a value id (a string)") });
  // content blocks too, field by field, before anything reaches the model
  const blocks: [unknown, string][] = [
    [42, "prompt[0] must be a content block (an object with a type), got number 42"],
    [{ type: "text", text: "hi", annotations: "x" }, 'prompt[0].annotations must be an object or null, got the string "x"'],
    [{ type: "image", data: 5, mimeType: "image/png" }, "prompt[0].data must be a string, got number 5"],
    [{ type: "resource_link", uri: "file:///a", name: "a", size: "big" }, 'prompt[0].size must be an integer or null, got the string "big"'],
    [{ type: "resource", resource: { uri: "file:///a", text: 7 } }, "prompt[0].resource.text must be a string, got number 7"],
  ];
  for (const [block, why] of blocks) {
    const r = await req(a, "session/prompt", { sessionId, prompt: [block] });
    expect(r.error).toMatchObject({ code: -32602, message: `session/prompt: ${why}` });
  }
  expect(a.provider.requests.length).toBe(0);
  await a.close();
});

// ── compaction persisted and replayed ───────────────────────────────────────────────────────────

test("a /compact is persisted: session/load replays its compaction_update (a thought without the capability) and continues from the summary", async () => {
  const state = tempDir("compact-state");
  const ws = tempDir("compact");
  const caps = { session: { compaction: {} } };
  const a = memoryAgent({ store: new SessionStore(state) });
  await req(a, "initialize", { protocolVersion: 1, clientCapabilities: caps });
  const { sessionId } = (await req(a, "session/new", { cwd: ws, mcpServers: [] })).result;
  a.provider.push({ text: "one" }, { text: "SUMMARY: did one" });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "first task" }] });
  await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "/compact" }] });
  const live = updates(a, "compaction_update").map((u) => u.status);
  expect(live).toEqual(["in_progress", "completed"]);
  await a.close();

  // another process: the file alone carries it
  const b = memoryAgent({ store: new SessionStore(state) });
  await req(b, "initialize", { protocolVersion: 1, clientCapabilities: caps });
  await req(b, "session/load", { sessionId, cwd: ws, mcpServers: [] });
  const replayed = updates(b, "compaction_update");
  expect(replayed.map((u) => u.status)).toEqual(["in_progress", "completed"]);
  expect(JSON.stringify(replayed[1].summary)).toContain("SUMMARY: did one");
  b.provider.push({ text: "two" });
  await req(b, "session/prompt", { sessionId, prompt: [{ type: "text", text: "next" }] });
  const carried = JSON.stringify(b.provider.requests[0]);
  expect(carried).toContain("SUMMARY: did one");
  expect(carried).not.toContain('"one"');
  await b.close();

  // a client that does not show compaction_update sees the handoff as a thought instead
  const c = memoryAgent({ store: new SessionStore(state) });
  await req(c, "initialize", { protocolVersion: 1 });
  await req(c, "session/load", { sessionId, cwd: ws, mcpServers: [] });
  expect(updates(c, "compaction_update")).toEqual([]);
  expect(updates(c, "agent_thought_chunk").map((u) => u.content.text).join("")).toContain("[context handoff] asked with /compact");
  await c.close();
});

test("additionalDirectories: the session manager exposes a live session's extra roots (for the sandbox to make writable)", async () => {
  const sessions = new SessionManager({ pool: standInPool(), provider: scriptedProvider(), model: "m", maxTokens: 1000, contextWindow: 100_000, mode: "ask", rules: [], limits: loadLimits({}) });
  const [ws, x] = [tempDir("accessor-ws"), tempDir("accessor-x")];
  const { sessionId } = await sessions.newSession({ cwd: ws, servers: [], additionalDirectories: [x] });
  expect(sessions.additionalDirectories(sessionId)).toEqual([x]);
  expect(() => sessions.additionalDirectories("nope")).toThrow("unknown session: nope");
  await sessions.closeAll();
});

test("$/cancel_request through the binary: a session/new waiting on a slow MCP server answers -32800, and the agent goes on", async () => {
  const a = spawnRawAgent(agentEnv(fake, work));
  try {
    a.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    await a.response(1);
    const slow = { name: "slow", command: process.execPath, args: [join(ROOT, "tests", "fake-mcp.ts")], env: [{ name: "FAKE_MCP_INIT_DELAY_MS", value: "3000" }] };
    const ws = tempDir("cancel-bin");
    a.writeLine({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: ws, mcpServers: [slow] } });
    a.writeLine({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 2 } });
    expect((await a.response(2, 2500)).error).toEqual({ code: -32800, message: "session/new was cancelled ($/cancel_request)" });
    a.writeLine({ jsonrpc: "2.0", id: 3, method: "session/new", params: { cwd: ws, mcpServers: [] } });
    expect((await a.response(3)).result.sessionId).toBeString();
  } finally {
    a.kill();
  }
}, 30_000);
