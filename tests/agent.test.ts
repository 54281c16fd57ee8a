// End-to-end tests of `tendril agent` through the built binary, against the fake LLM and the fake MCP
// server: the wire (negotiation, malformed input, framing), turns, tools, permissions, cancellation,
// caps and failures, each named after what a user would observe. One file over 400 lines on purpose:
// every group shares one fake LLM and the same spawn helpers, and splitting would duplicate both.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeLlm, type FakeLlm } from "./fake-llm.ts";
import { agentEnv } from "./agent-env.ts";
import { startAgent, type StartOptions, type TestAgent } from "./acp-client.ts";
import { spawnRawAgent, type RawAgent } from "./raw-harness.ts";
import { ROOT } from "./binary.ts";
import { pidAlive as alive, waitFor } from "./fake-mcp-helpers.ts";

let fake: FakeLlm;
let work: string;
const running: (TestAgent | RawAgent)[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-agent-e2e-"));
});

afterAll(async () => {
  for (const a of running) {
    if ("close" in a) await a.close(2000).catch(() => {});
    else a.kill();
  }
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

const baseEnv = (provider: "anthropic" | "openai" = "anthropic") => agentEnv(fake, work, provider);

function agentWith(opts: StartOptions & { provider?: "anthropic" | "openai" } = {}): TestAgent {
  const a = startAgent({ ...opts, env: { ...baseEnv(opts.provider), ...opts.env } });
  running.push(a);
  return a;
}

function raw(env: Record<string, string> = {}): RawAgent {
  const a = spawnRawAgent({ ...baseEnv(), ...env });
  running.push(a);
  return a;
}

function workspace(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The fake MCP server as an ACP stdio declaration. */
function fakeMcp(name: string, env: Record<string, string> = {}) {
  return {
    name,
    command: process.execPath,
    args: [join(ROOT, "tests", "fake-mcp.ts")],
    env: Object.entries(env).map(([k, v]) => ({ name: k, value: v })),
  };
}

const INIT = (id: number, protocolVersion: number) => ({ jsonrpc: "2.0", id, method: "initialize", params: { protocolVersion } });

describe("wire", () => {
  test("version negotiation answers min(requested, 1) with agent info and capabilities", async () => {
    const a = raw();
    a.writeLine(INIT(1, 7));
    const r = await a.response(1);
    expect(r.result.protocolVersion).toBe(1);
    expect(r.result.agentInfo.name).toBe("tendril");
    expect(r.result.agentCapabilities.promptCapabilities).toMatchObject({ image: true, embeddedContext: true });
    expect(r.result.agentCapabilities.mcpCapabilities).toMatchObject({ http: true, sse: true });
    expect(r.result.agentCapabilities.loadSession).toBe(true);
    expect(r.result.agentCapabilities.sessionCapabilities).toEqual({ list: {}, resume: {}, close: {}, delete: {}, fork: {}, additionalDirectories: {} });
    a.writeLine(INIT(2, 0));
    expect((await a.response(2)).result.protocolVersion).toBe(0);
  });

  test("a client that stops reading the agent's output ends the agent (its next answer meets a closed pipe)", async () => {
    const a = raw({ TENDRIL_LOG: "info" });
    a.writeLine(INIT(1, 1));
    await a.response(1);
    a.child.stdout.destroy();
    for (let i = 2; i < 6; i++) a.writeLine(INIT(i, 1));
    expect(await a.exited(10_000)).toBe(1);
    expect(a.stderr()).toContain("reason=signal");
  });

  test("relative cwd is refused with -32602 naming the problem", async () => {
    const a = raw();
    a.writeLine(INIT(1, 1));
    await a.response(1);
    a.writeLine({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: "some/dir", mcpServers: [] } });
    const r = await a.response(2);
    expect(r.error.code).toBe(-32602);
    expect(r.error.message).toContain("cwd must be an absolute path");
  });

  test("every malformed input class gets its JSON-RPC error and the agent keeps serving", async () => {
    const a = raw();
    a.writeLine("this is not json");
    let m = await a.nextMessage();
    expect(m).toMatchObject({ id: null, error: { code: -32700 } });
    a.writeLine({ jsonrpc: "1.0", id: 3, method: "initialize", params: { protocolVersion: 1 } });
    m = await a.nextMessage();
    expect(m).toMatchObject({ id: 3, error: { code: -32600 } });
    a.writeLine({ jsonrpc: "2.0" });
    m = await a.nextMessage();
    expect(m).toMatchObject({ id: null, error: { code: -32600 } });
    a.writeLine([INIT(4, 1)]);
    m = await a.nextMessage();
    expect(m).toMatchObject({ id: null, error: { code: -32600 } });
    a.writeLine(INIT(5, 1));
    await a.response(5);
    a.writeLine({ jsonrpc: "2.0", id: 6, method: "no/such_method", params: {} });
    expect((await a.response(6)).error.code).toBe(-32601);
    a.writeLine({ jsonrpc: "2.0", id: 7, method: "session/new", params: { cwd: 42 } });
    expect((await a.response(7)).error.code).toBe(-32602);
    a.writeLine({ jsonrpc: "2.0", id: 8, method: "session/prompt", params: { sessionId: "nope", prompt: [{ type: "text", text: "hi" }] } });
    const unknown = await a.response(8);
    expect(unknown.error.code).toBe(-32002);
    a.writeLine({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "nope" } });
    a.writeRaw('{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":1}}\r\n\r\n');
    expect((await a.response(9)).result.protocolVersion).toBe(1);
    expect(a.seen).toEqual([]); // the notification got no reply
  });

  test("an over-long line ends the connection and the process exits non-zero within 5 s", async () => {
    const a = raw({ TENDRIL_MAX_LINE_BYTES: "1024" });
    a.writeLine(INIT(1, 1));
    await a.response(1);
    const t0 = Date.now();
    a.writeRaw("{" + "x".repeat(5000));
    const code = await a.exited(5000);
    expect(code).not.toBe(0);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  test("stdin EOF exits 0", async () => {
    const a = raw();
    a.writeLine(INIT(1, 1));
    await a.response(1);
    a.child.stdin.end();
    expect(await a.exited(5000)).toBe(0);
  });
});

describe("turns", () => {
  for (const provider of ["anthropic", "openai"] as const) {
    test(`a text-only turn streams chunks and ends with end_turn (${provider})`, async () => {
      const a = agentWith({ provider });
      await a.initialize();
      const { sessionId, modes } = await a.newSession(workspace(`text-${provider}`));
      expect(modes?.availableModes.map((m) => m.id)).toEqual(["ask", "auto-edit", "yolo", "read-only", "plan"]);
      fake.script([{ text: "Hello from the fake model." }]);
      const before = fake.requests.length;
      const r = await a.prompt(sessionId, "say hello");
      expect(r.stopReason).toBe("end_turn");
      expect(a.text()).toBe("Hello from the fake model.");
      expect(a.ofKind("usage_update").length).toBe(1);
      const req = fake.requests[before]!;
      const tools = (req.body.tools ?? []).map((t: any) => t.name ?? t.function?.name);
      expect(tools).toContain("dev__shell");
      expect(tools).toContain("dev__str_replace");
      expect(tools.some((n: string) => n.includes("_Stop"))).toBe(false);
    });
  }

  test("history across prompts: the second LLM request contains the first exchange", async () => {
    const a = agentWith();
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("history"));
    fake.script([{ text: "first answer" }, { text: "second answer" }]);
    await a.prompt(sessionId, "first question");
    const before = fake.requests.length;
    await a.prompt(sessionId, "second question");
    const body = JSON.stringify(fake.requests[before]!.body.messages);
    expect(body).toContain("first question");
    expect(body).toContain("first answer");
    expect(body).toContain("second question");
  });

  test("a stop reason of max_tokens and refusal reaches the client", async () => {
    const a = agentWith();
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("stops"));
    fake.script([{ text: "trunc", stopReason: "max_tokens" }, { text: "no", stopReason: "refusal" }]);
    expect((await a.prompt(sessionId, "long")).stopReason).toBe("max_tokens");
    expect((await a.prompt(sessionId, "bad")).stopReason).toBe("refusal");
  });

  test("unsupported content block and oversize prompt are refused with -32602", async () => {
    const a = agentWith({ env: { TENDRIL_MAX_PROMPT_BYTES: "1000" } });
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("blocks"));
    const audio = a.prompt(sessionId, [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }]);
    await expect(audio).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("unsupported content block: audio") });
    const big = a.prompt(sessionId, "x".repeat(2000));
    await expect(big).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("MAX_PROMPT_BYTES") });
    fake.script([{ text: "ok" }]);
    const ok = await a.prompt(sessionId, [
      { type: "text", text: "see" },
      { type: "resource_link", uri: "file:///x.txt", name: "x.txt" },
      { type: "resource", resource: { uri: "file:///y.txt", text: "embedded body" } },
    ]);
    expect(ok.stopReason).toBe("end_turn");
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain("embedded body");
  });

  test("a 429 then success: the turn completes after the retry", async () => {
    const a = agentWith();
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("retry"));
    fake.script([{ fault: { status: 429, retryAfterS: 0.1 } }, { text: "after retry" }]);
    const r = await a.prompt(sessionId, "hi");
    expect(r.stopReason).toBe("end_turn");
    expect(a.text()).toBe("after retry");
  });

  test("LLM down: the prompt answers -32603 with the cause, and auth errors name the key", async () => {
    const a = agentWith({ env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:9", TENDRIL_LLM_MAX_RETRIES: "0" } });
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("down"));
    const err = await a.prompt(sessionId, "hi").catch((e) => e);
    expect(err.code).toBe(-32603);
    expect(err.message).toMatch(/LLM/);
    const b = agentWith();
    await b.initialize();
    const s2 = await b.newSession(workspace("auth"));
    fake.script([{ fault: { status: 401 } }]);
    const authErr = await b.prompt(s2.sessionId, "hi").catch((e) => e);
    expect(authErr.code).toBe(-32603);
    expect(authErr.message).toContain("ANTHROPIC_API_KEY");
  });
});

describe("tools", () => {
  test("an unknown tool gets a failed update, the LLM sees the error, and the turn continues", async () => {
    const a = agentWith();
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("unknown"));
    fake.script([{ toolCalls: [{ id: "c1", name: "nope__tool", input: {} }] }, { text: "ok then" }]);
    const before = fake.requests.length;
    const r = await a.prompt(sessionId, "go");
    expect(r.stopReason).toBe("end_turn");
    const failed = a.ofKind("tool_call_update").find((u) => u.toolCallId === "c1");
    expect(failed?.status).toBe("failed");
    expect(JSON.stringify(failed?.content)).toContain("unknown tool: nope__tool");
    expect(JSON.stringify(fake.requests[before + 1]!.body.messages)).toContain("unknown tool: nope__tool");
  });

  test("hook tools are never offered and calling one fails as an unknown tool", async () => {
    const a = agentWith();
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("hooks"), [fakeMcp("fk", { FAKE_MCP_STOP: "objection" })]);
    fake.script([{ toolCalls: [{ id: "h1", name: "fk___Stop", input: {} }] }, { text: "done" }]);
    const before = fake.requests.length;
    await a.prompt(sessionId, "go");
    const offered = fake.requests[before]!.body.tools.map((t: any) => t.name);
    expect(offered).toContain("fk__echo");
    expect(offered.some((n: string) => n.includes("Stop"))).toBe(false);
    const u = a.ofKind("tool_call_update").find((x) => x.toolCallId === "h1");
    expect(u?.status).toBe("failed");
    expect(JSON.stringify(u?.content)).toContain("unknown tool: fk___Stop");
  });

  test("a real dev__shell call goes through the permission exchange and reports its output", async () => {
    const a = agentWith({ script: ["allow_once"] });
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("shell"));
    fake.script([{ toolCalls: [{ id: "s1", name: "dev__shell", input: { command: "echo hi-from-shell" } }] }, { text: "ran it" }]);
    const before = fake.requests.length;
    expect((await a.prompt(sessionId, "run echo")).stopReason).toBe("end_turn");
    expect(a.permissions.length).toBe(1);
    const req = a.permissions[0]!.request;
    expect(req.toolCall.toolCallId).toBe("s1");
    expect(req.toolCall._meta).toEqual({ toolName: "dev__shell" });
    expect(req.options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once", "reject_always"]);
    const start = a.ofKind("tool_call").find((u) => u.toolCallId === "s1")!;
    expect(start).toMatchObject({ kind: "execute", status: "pending", title: "shell: echo hi-from-shell", rawInput: { command: "echo hi-from-shell" } });
    expect(start._meta).toEqual({ toolName: "dev__shell" });
    const statuses = a.ofKind("tool_call_update").filter((u) => u.toolCallId === "s1").map((u) => u.status);
    expect(statuses).toEqual(["in_progress", "completed"]);
    const done = a.ofKind("tool_call_update").find((u) => u.toolCallId === "s1" && u.status === "completed")!;
    expect(JSON.stringify(done.content)).toContain("hi-from-shell");
    expect(done.rawOutput).toBeDefined();
    expect(JSON.stringify(fake.requests[before + 1]!.body.messages)).toContain("hi-from-shell");
  });

  test("the shim folder exists only from the first shell command to the agent's exit, with rg first on the command's PATH", async () => {
    const tmp = workspace("shim-tmp");
    const shims = () => readdirSync(tmp).filter((n) => n.startsWith("tendril-shims-"));
    const a = agentWith({ env: { TENDRIL_MODE: "yolo", TMPDIR: tmp } });
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("shim-ws"));
    fake.script([{ text: "no tools" }]);
    await a.prompt(sessionId, "just talk");
    expect(shims()).toEqual([]);
    fake.script([{ toolCalls: [{ id: "w1", name: "dev__shell", input: { command: "command -v rg" } }] }, { text: "found it" }]);
    await a.prompt(sessionId, "where is rg");
    expect(shims().length).toBe(1);
    const done = a.ofKind("tool_call_update").find((u) => u.toolCallId === "w1" && u.status === "completed")!;
    expect(JSON.stringify(done.content)).toContain(`${shims()[0]}/rg`);
    expect(await a.close(5000)).toBe(0);
    expect(shims()).toEqual([]);
  });

  test("reject_once: the command is not executed, the LLM hears `rejected by user`, the turn continues", async () => {
    const dir = workspace("reject");
    const a = agentWith({ script: ["reject_once"] });
    await a.initialize();
    const { sessionId } = await a.newSession(dir);
    fake.script([{ toolCalls: [{ id: "r1", name: "dev__shell", input: { command: "touch marker" } }] }, { text: "fine" }]);
    const before = fake.requests.length;
    expect((await a.prompt(sessionId, "touch")).stopReason).toBe("end_turn");
    expect(existsSync(join(dir, "marker"))).toBe(false);
    expect(a.ofKind("tool_call_update").find((u) => u.toolCallId === "r1")?.status).toBe("failed");
    expect(JSON.stringify(fake.requests[before + 1]!.body.messages)).toContain("rejected by user");
  });

  test("allow_always: a second call with the same command word is not asked again", async () => {
    const a = agentWith({ script: ["allow_always"] });
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("always"));
    fake.script([
      { toolCalls: [{ id: "a1", name: "dev__shell", input: { command: "echo one" } }] },
      { text: "one" },
      { toolCalls: [{ id: "a2", name: "dev__shell", input: { command: "echo two" } }] },
      { text: "two" },
    ]);
    await a.prompt(sessionId, "first");
    await a.prompt(sessionId, "second");
    expect(a.permissions.length).toBe(1);
    expect(a.ofKind("tool_call_update").find((u) => u.toolCallId === "a2" && u.status === "completed")).toBeDefined();
  });

  test("an edit carries a diff and locations; a todo call mirrors as a plan", async () => {
    const dir = workspace("edit");
    writeFileSync(join(dir, "a.txt"), "alpha\nbeta\n");
    const a = agentWith({ env: { TENDRIL_MODE: "auto-edit" } });
    await a.initialize();
    const { sessionId } = await a.newSession(dir);
    fake.script([
      {
        toolCalls: [
          { id: "e1", name: "dev__str_replace", input: { path: "a.txt", old_str: "beta", new_str: "gamma" } },
          { id: "t1", name: "dev__todo", input: { items: [{ text: "edit a.txt", done: true }, { text: "test", done: false }] } },
        ],
      },
      { text: "edited" },
    ]);
    await a.prompt(sessionId, "edit");
    expect(a.permissions.length).toBe(0);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("alpha\ngamma\n");
    expect(a.ofKind("tool_call").find((u) => u.toolCallId === "e1")).toMatchObject({ kind: "edit", locations: [{ path: join(dir, "a.txt") }] });
    const done = a.ofKind("tool_call_update").find((u) => u.toolCallId === "e1" && u.status === "completed")!;
    expect(done.content?.[0]).toEqual({ type: "diff", path: join(dir, "a.txt"), oldText: "beta", newText: "gamma" });
    const plan = a.ofKind("plan").at(-1)!;
    expect(plan.entries.map((e) => [e.content, e.status])).toEqual([["edit a.txt", "completed"], ["test", "pending"]]);
  });

  // Concurrency itself is tested in memory (core/agent/tool-calls.test.ts); this is the wiring: a real
  // MCP server's results reach the client and the LLM in call order although they finish out of order.
  test("parallel calls complete and return in call order through a real MCP server", async () => {
    const a = agentWith({ env: { TENDRIL_MODE: "yolo" } });
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("parallel"), [fakeMcp("fk")]);
    const ms = [200, 10, 100];
    fake.script([{ toolCalls: ms.map((m, i) => ({ id: `p${i}`, name: "fk__sleep", input: { ms: m } })) }, { text: "all slept" }]);
    const before = fake.requests.length;
    await a.prompt(sessionId, "sleep");
    const order = a.ofKind("tool_call_update").filter((u) => u.status === "completed").map((u) => u.toolCallId);
    expect(order).toEqual(["p0", "p1", "p2"]);
    const msgs = JSON.stringify(fake.requests[before + 1]!.body.messages);
    expect(msgs.indexOf("slept 200 ms")).toBeLessThan(msgs.indexOf("slept 10 ms"));
    expect(msgs.indexOf("slept 10 ms")).toBeLessThan(msgs.indexOf("slept 100 ms"));
  });

});

describe("cancellation and failures", () => {
  test("cancel during `sleep 60`: cancelled within 500 ms, the process group dead within 1 s, the next prompt works", async () => {
    const dir = workspace("cancel");
    const pidFile = join(dir, "pid");
    const a = agentWith({ script: ["allow_once"] });
    await a.initialize();
    const { sessionId } = await a.newSession(dir);
    fake.script([{ toolCalls: [{ id: "k1", name: "dev__shell", input: { command: `echo $$ > ${pidFile}; sleep 60` } }] }]);
    const turn = a.prompt(sessionId, "sleep");
    expect(await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", 5000)).toBe(true);
    const pgid = Number(readFileSync(pidFile, "utf8").trim());
    expect(alive(pgid)).toBe(true);
    const t0 = Date.now();
    await a.cancel(sessionId);
    const r = await turn;
    expect(r.stopReason).toBe("cancelled");
    expect(Date.now() - t0).toBeLessThan(500);
    expect(await waitFor(() => !alive(pgid), 1000)).toBe(true);
    fake.script([{ text: "still here" }]);
    const before = fake.requests.length;
    expect((await a.prompt(sessionId, "again")).stopReason).toBe("end_turn");
    const msgs = JSON.stringify(fake.requests[before]!.body.messages);
    expect(msgs).toContain("k1");
    expect(msgs).toContain("cancelled");
  });

  test("cancel while a permission request is pending withdraws it and answers cancelled", async () => {
    const a = agentWith({ script: ["hang"] });
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("cancel-perm"));
    fake.script([{ toolCalls: [{ id: "w1", name: "dev__shell", input: { command: "echo never" } }] }]);
    const turn = a.prompt(sessionId, "go");
    expect(await waitFor(() => a.permissions.length === 1, 5000)).toBe(true);
    const t0 = Date.now();
    await a.cancel(sessionId);
    expect((await turn).stopReason).toBe("cancelled");
    expect(Date.now() - t0).toBeLessThan(500);
    expect(a.ofKind("tool_call_update").find((u) => u.toolCallId === "w1")?.status).toBe("failed");
  });

  test("cancel during a hanging LLM request answers cancelled within 500 ms", async () => {
    const a = agentWith();
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("cancel-llm"));
    fake.script([{ fault: { hang: true } }]);
    const asked = fake.requests.length;
    const turn = a.prompt(sessionId, "hang");
    expect(await waitFor(() => fake.requests.length > asked, 10_000)).toBe(true); // the request hangs now
    const t0 = Date.now();
    await a.cancel(sessionId);
    expect((await turn).stopReason).toBe("cancelled");
    expect(Date.now() - t0).toBeLessThan(500);
  });

  test("stdin EOF during a running command kills its process group and exits 0", async () => {
    const dir = workspace("eof");
    const pidFile = join(dir, "pid");
    const a = agentWith({ env: { TENDRIL_MODE: "yolo" } });
    await a.initialize();
    const { sessionId } = await a.newSession(dir);
    fake.script([{ toolCalls: [{ id: "e1", name: "dev__shell", input: { command: `echo $$ > ${pidFile}; sleep 60` } }] }]);
    void a.prompt(sessionId, "sleep").catch(() => {});
    expect(await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "", 5000)).toBe(true);
    const pgid = Number(readFileSync(pidFile, "utf8").trim());
    expect(await a.close(5000)).toBe(0);
    expect(await waitFor(() => !alive(pgid), 1000)).toBe(true);
  });

  test("an MCP server hanging on initialize fails session/new within MCP_INIT_TIMEOUT_S and is dead", async () => {
    const dir = workspace("mcp-hang");
    const pidFile = join(dir, "mcp.pid");
    const a = agentWith({ env: { TENDRIL_MCP_INIT_TIMEOUT_S: "0.4" } });
    await a.initialize();
    const t0 = Date.now();
    const err = await a.newSession(dir, [fakeMcp("hangs", { FAKE_MCP_HANG: "initialize", FAKE_MCP_PID_FILE: pidFile })]).catch((e) => e);
    expect(err.code).toBe(-32603);
    expect(err.message).toContain("hangs");
    expect(Date.now() - t0).toBeLessThan(4000);
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    expect(await waitFor(() => !alive(pid), 1000)).toBe(true);
  });

  test("64-call cap: calls beyond MAX_TOOL_CALLS_PER_TURN are refused, and a model that keeps going ends with max_turn_requests", async () => {
    const a = agentWith({ env: { TENDRIL_MODE: "yolo" } });
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("cap"), [fakeMcp("fk")]);
    const calls = (n: number, p: string) => Array.from({ length: n }, (_, i) => ({ id: `${p}${i}`, name: "fk__echo", input: { text: `${p}${i}` } }));
    fake.script([{ toolCalls: calls(66, "x") }, { toolCalls: calls(1, "y") }]);
    const r = await a.prompt(sessionId, "spam");
    expect(r.stopReason).toBe("max_turn_requests");
    const finals = a.ofKind("tool_call_update").filter((u) => u.status === "completed" || u.status === "failed");
    expect(finals.filter((u) => u.status === "completed").length).toBe(64);
    const refused = finals.filter((u) => u.status === "failed").map((u) => u.toolCallId);
    expect(refused).toEqual(["x64", "x65", "y0"]);
    expect(JSON.stringify(finals.find((u) => u.toolCallId === "x64")!.content)).toContain("MAX_TOOL_CALLS_PER_TURN");
  });

  test("long tool descriptions are clamped before they reach the LLM; long results are trimmed with a marker", async () => {
    const a = agentWith({ env: { TENDRIL_MODE: "yolo", TENDRIL_MAX_TOOL_RESULT_BYTES: "2000" } });
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("clamp"), [fakeMcp("fk", { FAKE_MCP_DESC_BYTES: "5000", FAKE_MCP_RESULT_BYTES: "10000" })]);
    fake.script([{ toolCalls: [{ id: "b1", name: "fk__echo", input: { text: "x" } }] }, { text: "ok" }]);
    const before = fake.requests.length;
    await a.prompt(sessionId, "go");
    const echo = fake.requests[before]!.body.tools.find((t: any) => t.name === "fk__echo");
    expect(Buffer.byteLength(echo.description)).toBeLessThanOrEqual(1024);
    expect(echo.description).toContain("truncated");
    const msgs = JSON.stringify(fake.requests[before + 1]!.body.messages);
    expect(msgs).toContain("trimmed from the middle");
    expect(msgs.length).toBeLessThan(20000);
  });
});

describe("modes", () => {
  test("session/set_mode read-only denies a shell call by policy without asking; yolo runs it without asking", async () => {
    const a = agentWith();
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("modes"));
    await a.agent.request("session/set_mode", { sessionId, modeId: "read-only" });
    fake.script([{ toolCalls: [{ id: "m1", name: "dev__shell", input: { command: "echo ro" } }] }, { text: "denied" }]);
    await a.prompt(sessionId, "try");
    const denied = a.ofKind("tool_call_update").find((u) => u.toolCallId === "m1")!;
    expect(denied.status).toBe("failed");
    expect(JSON.stringify(denied.content)).toContain("denied by mode read-only");
    await a.agent.request("session/set_mode", { sessionId, modeId: "yolo" });
    fake.script([{ toolCalls: [{ id: "m2", name: "dev__shell", input: { command: "echo yolo-ran" } }] }, { text: "ran" }]);
    await a.prompt(sessionId, "again");
    expect(a.permissions.length).toBe(0);
    expect(JSON.stringify(a.ofKind("tool_call_update").find((u) => u.toolCallId === "m2" && u.status === "completed")?.content)).toContain("yolo-ran");
    const bad = await a.agent.request("session/set_mode", { sessionId, modeId: "reckless" }).catch((e) => e);
    expect(bad.code).toBe(-32602);
  });

  test("a deny rule from the config file fails the call with `denied by policy`", async () => {
    const cfgDir = join(work, "rules-config");
    mkdirSync(join(cfgDir, "tendril"), { recursive: true });
    writeFileSync(join(cfgDir, "tendril", "config.toml"), '[[rules]]\ntool = "dev__shell"\ndecision = "deny"\nwhen = { arg = "command", prefix = "rm " }\n');
    const dir = workspace("rules");
    writeFileSync(join(dir, "keep.txt"), "keep");
    const a = agentWith({ env: { XDG_CONFIG_HOME: cfgDir, TENDRIL_MODE: "yolo" } });
    await a.initialize();
    const { sessionId } = await a.newSession(dir);
    fake.script([{ toolCalls: [{ id: "d1", name: "dev__shell", input: { command: "rm keep.txt" } }] }, { text: "ok" }]);
    await a.prompt(sessionId, "rm");
    expect(existsSync(join(dir, "keep.txt"))).toBe(true);
    expect(JSON.stringify(a.ofKind("tool_call_update").find((u) => u.toolCallId === "d1")?.content)).toContain("denied by policy");
  });
});
