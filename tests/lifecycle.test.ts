// End-to-end lifecycle of `tendril agent` through the built binary: a session survives kill -9 of
// the agent (its tool process group dies with it), loads in a new process, and goes on.
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as acp from "@agentclientprotocol/sdk";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentEnv } from "./agent-env.ts";
import { startAgent, type TestAgent } from "./acp-client.ts";
import { startFakeLlm, type FakeLlm } from "./fake-llm.ts";
import { pidAlive, waitFor } from "./fake-mcp-helpers.ts";
import { BIN, ROOT, runBinAsync } from "./binary.ts";

let fake: FakeLlm;
let work: string;
const running: TestAgent[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-lifecycle-"));
});

afterAll(async () => {
  for (const a of running) await a.close(2000).catch(() => {});
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

function agent(env: Record<string, string> = {}): TestAgent {
  const a = startAgent({ env: { ...agentEnv(fake, work), TENDRIL_MODE: "yolo", ...env } });
  running.push(a);
  return a;
}

test("kill -9 mid-tool-call: the tool's group dies, the session loads in a new agent with the call failed, and goes on", async () => {
  const ws = join(work, "ws-kill");
  mkdirSync(ws, { recursive: true });
  const pidFile = join(ws, "sleep.pid");
  const a = agent();
  await a.initialize();
  const { sessionId } = await a.newSession(ws);
  fake.script([
    { text: "Sleeping.", toolCalls: [{ id: "z1", name: "dev__shell", input: { command: `sleep 30 & echo $! > ${pidFile}; wait` } }] },
  ]);
  void a.prompt(sessionId, "sleep a while").catch(() => {});
  expect(await waitFor(() => readFileSafe(pidFile) !== "", 10_000)).toBe(true);
  const sleeper = Number(readFileSafe(pidFile));
  expect(pidAlive(sleeper)).toBe(true);
  a.child.kill("SIGKILL");
  // Nothing the agent started outlives it, even though it had no chance to clean up.
  expect(await waitFor(() => !pidAlive(sleeper), 5000)).toBe(true);

  const b = agent();
  await b.initialize();
  await b.agent.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
  const replayed = b.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);
  expect(replayed[0]).toMatchObject({ sessionUpdate: "user_message_chunk" });
  expect(replayed.some((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "z1" && u.status === "failed")).toBe(true);
  fake.script([{ text: "Back again." }]);
  expect((await b.prompt(sessionId, "are you there?")).stopReason).toBe("end_turn");
  expect(b.text()).toBe("Sleeping.Back again."); // the replayed turn, then the new one
});

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return "";
  }
}

test("allow_always persists across a restart for that workspace; `approvals revoke` takes it back", async () => {
  const ws = join(work, "ws-approve");
  mkdirSync(ws, { recursive: true });
  const env = { ...agentEnv(fake, work), TENDRIL_MODE: "ask" };
  const shellCall = (id: string, command: string) => [{ toolCalls: [{ id, name: "dev__shell", input: { command } }] }, { text: "ok" }];

  const a = startAgent({ env, script: ["allow_always"] });
  running.push(a);
  await a.initialize();
  fake.script(shellCall("g1", "echo first"));
  await a.prompt((await a.newSession(ws)).sessionId, "run it");
  expect(a.permissions.length).toBe(1);
  expect(await a.close()).toBe(0);

  const b = startAgent({ env, script: ["reject_once"] });
  running.push(b);
  await b.initialize();
  fake.script(shellCall("g2", "echo second"));
  await b.prompt((await b.newSession(ws)).sessionId, "run it again");
  expect(b.permissions.length).toBe(0); // remembered: not asked
  expect(b.ofKind("tool_call_update").some((u) => u.toolCallId === "g2" && u.status === "completed")).toBe(true);
  expect(await b.close()).toBe(0);

  const listed = await runBinAsync(["agent", "approvals", "list", "--json", "--cwd", ws], { env });
  expect(listed.code).toBe(0);
  const [approval] = JSON.parse(listed.stdout);
  expect(approval).toMatchObject({ decision: "allow", tool: "dev__shell", scope: "dev__shell echo", workspace: ws });
  const table = await runBinAsync(["agent", "approvals", "list"], { env });
  expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+DECISION\s+TOOL\s+SCOPE\s+WORKSPACE$/);
  expect((await runBinAsync(["agent", "approvals", "revoke", approval.id], { env })).code).toBe(0);
  const unknown = await runBinAsync(["agent", "approvals", "revoke", "nope1234"], { env });
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain("no approval with ID nope1234");

  const c = startAgent({ env, script: ["reject_once"] });
  running.push(c);
  await c.initialize();
  fake.script(shellCall("g3", "echo third"));
  await c.prompt((await c.newSession(ws)).sessionId, "and again");
  expect(c.permissions.length).toBe(1); // asked again after the revoke
});

test("a profile with [[mcp]] by value runs its server and its rules, and leaves out dev when it says so", async () => {
  const agents = join(work, "config", "tendril", "agents");
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    join(agents, "tester.toml"),
    `mode = "yolo"
dev = false
system_prompt = "You test things."

[[rules]]
tool = "fk__echo"
decision = "deny"
when = { arg = "text", glob = "secret *" }

[[mcp]]
name = "fk"
command = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(join(ROOT, "tests", "fake-mcp.ts"))}]
`,
  );
  const ws = join(work, "ws-profile");
  mkdirSync(ws, { recursive: true });
  const a = agent({ TENDRIL_PROFILE: "tester" });
  await a.initialize();
  const { sessionId } = await a.newSession(ws);
  const before = fake.requests.length;
  fake.script([
    { toolCalls: [{ id: "p1", name: "fk__echo", input: { text: "secret stuff" } }, { id: "p2", name: "fk__echo", input: { text: "hello" } }] },
    { text: "done" },
  ]);
  await a.prompt(sessionId, "echo twice");
  const first = fake.requests[before]!.body;
  expect(JSON.stringify(first.system)).toContain("You test things.");
  const offered = (first.tools as { name: string }[]).map((t) => t.name);
  // The profile's servers only, besides the agent's own task tool (SPEC §3.10): no dev tools.
  expect(offered.filter((n) => n !== "agent__task").every((n) => n.startsWith("fk__"))).toBe(true);
  expect(offered.some((n) => n.startsWith("dev__"))).toBe(false);
  const finals = a.ofKind("tool_call_update").filter((u) => u.status === "completed" || u.status === "failed");
  expect(finals.map((u) => [u.toolCallId, u.status])).toEqual([
    ["p1", "failed"],
    ["p2", "completed"],
  ]);
  expect(JSON.stringify(fake.requests[before + 1]!.body.messages)).toContain("denied by policy");

  const bad = await runBinAsync(["agent", "--profile", "nope"], { env: agentEnv(fake, work) });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("profile not found");
});

test("with TENDRIL_MCP_HOOK_SERVERS=dev, dev's _Stop objects while todo items are open, and the turn goes on", async () => {
  const ws = join(work, "ws-hooks");
  mkdirSync(ws, { recursive: true });
  const a = agent({ TENDRIL_MCP_HOOK_SERVERS: "dev" });
  await a.initialize();
  const { sessionId } = await a.newSession(ws);
  const before = fake.requests.length;
  fake.script([
    { toolCalls: [{ id: "t1", name: "dev__todo", input: { items: [{ text: "write the tests", done: false }] } }] },
    { text: "All done." },
    { text: "Right, the tests are still open; I will stop here." },
  ]);
  expect((await a.prompt(sessionId, "plan it")).stopReason).toBe("end_turn");
  const thought = a.ofKind("agent_thought_chunk").map((u) => (u.content.type === "text" ? u.content.text : "")).join("");
  expect(thought).toContain("[dev _Stop hook]");
  expect(thought).toContain("write the tests");
  expect(fake.requests.length - before).toBe(3);
  expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain("A stop hook objected");
});

test("with no `models` configured, the provider's own list is offered; a switch reaches the next LLM request", async () => {
  for (const provider of ["anthropic", "openai"] as const) {
    const ws = join(work, `ws-models-${provider}`);
    mkdirSync(ws, { recursive: true });
    const a = startAgent({ env: { ...agentEnv(fake, work, provider), TENDRIL_MODE: "yolo" } });
    running.push(a);
    await a.initialize();
    const created = (await a.newSession(ws)) as acp.NewSessionResponse & { configOptions: any[] };
    expect((created.configOptions.find((o: any) => o.id === "model") as any).options.map((o: any) => o.value)).toEqual(["fake-model", "fake-model-large"]);
    await a.agent.request(acp.methods.agent.session.setConfigOption, { sessionId: created.sessionId, configId: "model", value: "fake-model-large" });
    fake.script([{ text: "hi" }]);
    await a.prompt(created.sessionId, "hello");
    expect(fake.requests.at(-1)!.body.model).toBe("fake-model-large");
  }
});

/** Ctrl-C as a terminal sends it: the first SIGINT cancels the hung turn and `a` serves on; at idle, a second exits 130. */
async function sigintCancelsThenStops(a: TestAgent, ws: string): Promise<void> {
  await a.initialize();
  const { sessionId } = await a.newSession(ws);
  fake.script([{ fault: { hang: true } }]);
  const turn = a.prompt(sessionId, "think forever");
  await waitFor(() => fake.remaining() === 0, 5000);
  a.child.kill("SIGINT");
  expect((await turn).stopReason).toBe("cancelled");
  fake.script([{ text: "still here" }]);
  expect((await a.prompt(sessionId, "you there?")).stopReason).toBe("end_turn");
  const exited = new Promise((resolve) => a.child.once("exit", (code, sig) => resolve(code ?? sig)));
  a.child.kill("SIGINT"); // idle: stops
  expect(await exited).toBe(130);
}

test("regression: Ctrl-C lost the turn; now the first SIGINT cancels running turns and the agent serves on, a second exits 130", async () => {
  const ws = join(work, "ws-sigint");
  mkdirSync(ws, { recursive: true });
  const a = agent();
  await sigintCancelsThenStops(a, ws);
});

test("MCP client capabilities: roots name the session's workspace; progress shows as the call's content", async () => {
  const ws = join(work, "ws-roots");
  mkdirSync(ws, { recursive: true });
  const a = agent();
  await a.initialize();
  const fk = { name: "fk", command: process.execPath, args: [join(ROOT, "tests", "fake-mcp.ts")], env: [{ name: "FAKE_MCP_PROGRESS", value: "1" }] };
  const { sessionId } = await a.newSession(ws, [fk]);
  const before = fake.requests.length;
  fake.script([{ toolCalls: [{ id: "r1", name: "fk__roots", input: {} }, { id: "e1", name: "fk__echo", input: { text: "x" } }] }, { text: "ok" }]);
  await a.prompt(sessionId, "where am I?");
  const results = JSON.stringify(fake.requests[before + 1]!.body.messages);
  expect(results).toContain(`file://${ws}`);
  const progress = a.ofKind("tool_call_update").filter((u) => u.toolCallId === "e1" && u.status === "in_progress" && u.content);
  expect(progress.map((u) => (u.content![0] as any).content.text)).toContain("progress 1/2: halfway");
});

test("in-process tools: SIGTERM of the agent during `sleep 300` exits 143 and leaves no shell process", async () => {
  const ws = join(work, "ws-term");
  mkdirSync(ws, { recursive: true });
  const pidFile = join(ws, "sleep.pid");
  const a = agent();
  await a.initialize();
  const { sessionId } = await a.newSession(ws);
  fake.script([{ toolCalls: [{ id: "s1", name: "dev__shell", input: { command: `sleep 300 & echo $! > ${pidFile}; wait` } }] }]);
  void a.prompt(sessionId, "sleep").catch(() => {});
  expect(await waitFor(() => readFileSafe(pidFile) !== "", 10_000)).toBe(true);
  const sleeper = Number(readFileSafe(pidFile));
  const exited = new Promise((resolve) => a.child.once("exit", (code, sig) => resolve(code ?? sig)));
  a.child.kill("SIGTERM");
  expect(await exited).toBe(143);
  expect(await waitFor(() => !pidAlive(sleeper), 5000)).toBe(true);
});

test("conductor: the first SIGINT cancels the client's running turn and the chain serves on; a second exits 130", async () => {
  const ws = join(work, "ws-conductor-sigint");
  mkdirSync(ws, { recursive: true });
  const a = startAgent({ command: BIN, args: ["conductor", "agent", `${BIN} agent`], env: { ...agentEnv(fake, work), TENDRIL_MODE: "yolo" } });
  running.push(a);
  await sigintCancelsThenStops(a, ws);
});

test("MCP elicitation: a server's question during a call is asked of the user; a form becomes a permission question too", async () => {
  const ws = join(work, "ws-elicit");
  mkdirSync(ws, { recursive: true });
  const a = startAgent({ env: { ...agentEnv(fake, work), TENDRIL_MODE: "yolo" }, script: ["allow_once", "reject_once", "reject_once"] });
  running.push(a);
  await a.initialize();
  const fk = { name: "fk", command: process.execPath, args: [join(ROOT, "tests", "fake-mcp.ts")], env: [] };
  const { sessionId } = await a.newSession(ws, [fk]);
  const before = fake.requests.length;
  fake.script([
    { toolCalls: [{ id: "q1", name: "fk__confirm", input: {} }] },
    { toolCalls: [{ id: "q2", name: "fk__confirm", input: {} }] },
    { toolCalls: [{ id: "q3", name: "fk__confirm", input: { field: "name" } }] },
    { text: "ok" },
  ]);
  await a.prompt(sessionId, "ask me");
  expect(a.permissions.map((p) => p.request.toolCall.title)).toEqual([
    "fk__confirm asks: Proceed with the thing?",
    "fk__confirm asks: Proceed with the thing?",
    "fk__confirm asks: Proceed with the thing? (form fields: name)",
  ]);
  const seen = JSON.stringify(fake.requests.slice(before).map((r) => r.body.messages.at(-1)));
  for (const answer of ["answered accept", "answered decline"]) expect(seen).toContain(answer);
  expect(seen.split("answered decline").length - 1).toBe(2); // the plain question and the form, both rejected by the user
});
