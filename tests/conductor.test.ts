// End-to-end tests of `tendril conductor` through the built binary: proxies written with the ACP SDK,
// raw proxies in each dialect, `tendril agent` + the fake LLM at the end of the chain, ordering under a
// burst, a component dying mid-turn, exit paths, and the trace file with its printed form.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeLlm, type FakeLlm } from "./fake-llm.ts";
import { agentEnv } from "./agent-env.ts";
import { startAgent, type StartOptions, type TestAgent } from "./acp-client.ts";
import { BIN, ROOT, runBin, runBinAsync } from "./binary.ts";
import { type RawAgent, spawnRawMode } from "./raw-harness.ts";
import { childrenOf, pidAlive, waitFor } from "./fake-mcp-helpers.ts";

let fake: FakeLlm;
let work: string;
const running: TestAgent[] = [];
const raws: RawAgent[] = [];

const FIXTURES = join(ROOT, "tests", "fixtures");
const SDK_PROXY = `${process.execPath} ${join(FIXTURES, "sdk-proxy.ts")}`;
const RAW_PROXY = `${process.execPath} ${join(FIXTURES, "raw-proxy.ts")}`;
const BURST_AGENT = `${process.execPath} ${join(FIXTURES, "burst-agent.ts")}`;
const TENDRIL_AGENT = `${BIN} agent`;
const API_PROXY = `${process.execPath} ${join(FIXTURES, "api-proxy.ts")}`;

beforeAll(async () => {
  fake = await startFakeLlm();
  work = mkdtempSync(join(tmpdir(), "tendril-conductor-e2e-"));
});

afterAll(async () => {
  for (const a of running) await a.close(2000).catch(() => {});
  for (const r of raws) r.kill();
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

function chainAgent(components: string[], opts: StartOptions & { flags?: string[] } = {}): TestAgent {
  const a = startAgent({ ...opts, args: ["conductor", "agent", ...(opts.flags ?? []), ...components], env: { ...agentEnv(fake, work), ...opts.env } });
  running.push(a);
  return a;
}

function workspace(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Direct children of `pid` that are components (group leaders), not their `/bin/sh` watchdogs. */
function componentsOf(pid: number): number[] {
  return childrenOf(pid).filter((child) => {
    try {
      return readFileSync(`/proc/${child}/cmdline`, "utf8").split("\0")[0] !== "/bin/sh";
    } catch {
      return false; // gone meanwhile
    }
  });
}

function rawChain(args: string[], env: Record<string, string> = {}): RawAgent {
  const r = spawnRawMode("conductor", env, args);
  raws.push(r);
  return r;
}

describe("chains in front of tendril agent", () => {
  test("two SDK-written proxies: initialize, session/new, a prompt with a permission round trip, cancel", async () => {
    const a = chainAgent([SDK_PROXY, SDK_PROXY, TENDRIL_AGENT], { script: ["allow_once"] });
    const init = await a.initialize();
    expect(init.agentInfo?.name).toBe("tendril");
    const dir = workspace("sdk-chain");
    const { sessionId } = await a.newSession(dir);
    fake.script([{ toolCalls: [{ id: "c1", name: "dev__shell", input: { command: "echo through-the-chain" } }] }, { text: "all done" }]);
    const r = await a.prompt(sessionId, "run it");
    expect(r.stopReason).toBe("end_turn");
    expect(a.permissions).toHaveLength(1);
    expect(a.permissions[0]!.request.sessionId).toBe(sessionId);
    const done = a.ofKind("tool_call_update").find((u) => u.toolCallId === "c1" && u.status === "completed");
    expect(JSON.stringify(done?.rawOutput ?? done?.content)).toContain("through-the-chain");
    expect(a.text()).toContain("all done");

    fake.script([{ fault: { hang: true } }]);
    const asked = fake.requests.length;
    const turn = a.prompt(sessionId, "hang");
    expect(await waitFor(() => fake.requests.length > asked, 10_000)).toBe(true); // the request hangs now
    const t0 = Date.now();
    await a.cancel(sessionId);
    expect((await turn).stopReason).toBe("cancelled");
    expect(Date.now() - t0).toBeLessThan(2500);
  }, 30_000);

  for (const dialect of ["proxy", "underscore", "sacp"]) {
    test(`a raw proxy speaking only the ${dialect} dialect, rewriting chunks on the way back`, async () => {
      const a = chainAgent([`DIALECT=${dialect} REWRITE=upper ${RAW_PROXY}`, TENDRIL_AGENT]);
      expect((await a.initialize()).agentInfo?.name).toBe("tendril");
      const { sessionId } = await a.newSession(workspace(`raw-${dialect}`));
      fake.script([{ text: "quiet words" }]);
      expect((await a.prompt(sessionId, "hi")).stopReason).toBe("end_turn");
      expect(a.text()).toBe("QUIET WORDS");
    }, 20_000);
  }

  test("a component that dies mid-turn ends the chain with an error naming it; every other group is gone", async () => {
    const a = chainAgent([`DIE_ON=session/prompt ${RAW_PROXY}`, TENDRIL_AGENT]);
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("dies"));
    const leaders = componentsOf(a.child.pid!);
    expect(leaders.length).toBe(2);
    const err = await a.prompt(sessionId, "boom").then(
      () => undefined,
      (e: unknown) => e as { message: string; code: number },
    );
    expect(err?.code).toBe(-32603);
    expect(err?.message).toContain("component 1 (raw-proxy.ts) exited with code 3");
    expect(err?.message).toContain("giving up on session/prompt");
    expect(await a.close(5000)).toBe(1);
    expect(await waitFor(() => leaders.every((p) => !pidAlive(p)), 3000)).toBe(true);
    expect(a.stderr()).toContain("[raw-proxy.ts] raw-proxy: giving up");
  }, 20_000);
});

describe("MCP-over-ACP", () => {
  test("a proxy written with the proxy library offers a tool; tendril agent calls it natively over mcp/message", async () => {
    const file = join(work, "mcp-native.jsonl");
    const a = chainAgent([API_PROXY, TENDRIL_AGENT], { env: { TENDRIL_MODE: "yolo" }, flags: ["--trace", file] });
    const init = await a.initialize();
    expect((init.agentCapabilities?.mcpCapabilities as { acp?: boolean } | undefined)?.acp).toBe(true);
    const { sessionId } = await a.newSession(workspace("mcp-api"));
    fake.script([{ toolCalls: [{ id: "m1", name: "notes__shout", input: { text: "quiet" } }] }, { text: "shouted" }]);
    expect((await a.prompt(sessionId, "shout it")).stopReason).toBe("end_turn");
    const done = a.ofKind("tool_call_update").find((u) => u.toolCallId === "m1" && u.status === "completed");
    expect(JSON.stringify(done)).toContain("QUIET!");
    // the agent got the declaration as made (no bridge) and asked over mcp/message itself
    const records = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const toAgent = records.find((r) => r.hop === 1 && r.dir === "out" && r.message.method === "session/new");
    expect(toAgent.message.params.mcpServers[0]).toMatchObject({ type: "acp", name: "notes" });
    expect(records.some((r) => r.hop === 1 && r.dir === "in" && r.message.method === "mcp/message")).toBe(true);
  }, 30_000);

  test("a proxy drives its own sub-session on tendril agent and answers its permission requests; the client sees only the result", async () => {
    const a = chainAgent([API_PROXY, TENDRIL_AGENT], { script: ["reject_once"] });
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("research"));
    fake.script([{ toolCalls: [{ id: "r1", name: "dev__shell", input: { command: "echo inside-the-sub-session" } }] }, { text: "the answer is 42" }]);
    expect((await a.prompt(sessionId, "/research what is the answer?")).stopReason).toBe("end_turn");
    expect(a.text()).toBe("research: the answer is 42");
    expect(a.permissions).toEqual([]); // the proxy answered the sub-session's request itself
    expect(a.updates.every((u) => u.sessionId === sessionId)).toBe(true);
    const toolResult = JSON.stringify(fake.requests.at(-1)!.body.messages);
    expect(toolResult).toContain("inside-the-sub-session"); // allowed, so the command ran
  }, 30_000);

  test("for an agent that does not advertise acp MCP the conductor bridges: the declaration becomes a stdio server that reaches the proxy", async () => {
    const ECHO_AGENT = `${process.execPath} ${join(FIXTURES, "echo-agent.ts")}`;
    const a = chainAgent([API_PROXY, ECHO_AGENT]);
    const init = await a.initialize();
    expect((init.agentCapabilities?.mcpCapabilities as { acp?: boolean } | undefined)?.acp).toBe(true); // the conductor carries them
    const { sessionId } = await a.newSession(workspace("mcp-bridge"));
    await a.prompt(sessionId, "mcp");
    const [server] = JSON.parse(a.text()) as { name: string; command: string; args: string[] }[];
    expect(server!.name).toBe("notes");
    expect(server!.args).toContain("mcp-bridge");
    // be the agent's MCP client: start the bridge as declared and call the tool through it
    const bridge = spawn(server!.command, server!.args, { stdio: ["pipe", "pipe", "inherit"] });
    const lines: any[] = [];
    bridge.stdout.setEncoding("utf8").on("data", (c: string) => c.split("\n").filter(Boolean).forEach((l) => lines.push(JSON.parse(l))));
    const ask = (m: object) => bridge.stdin.write(JSON.stringify(m) + "\n");
    ask({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } });
    ask({ jsonrpc: "2.0", method: "notifications/initialized" });
    ask({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    ask({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "shout", arguments: { text: "bridged" } } });
    expect(await waitFor(() => lines.length >= 3, 5000)).toBe(true);
    expect(lines.find((l) => l.id === 1).result.serverInfo.name).toBe("notes");
    expect(lines.find((l) => l.id === 2).result.tools[0].name).toBe("shout");
    expect(lines.find((l) => l.id === 3).result.content[0].text).toBe("BRIDGED!");
    bridge.stdin.end();
    expect(await new Promise((r) => bridge.on("exit", r))).toBe(0);
  }, 30_000);

  test("a raw proxy in the sacp dialect offers its acp: MCP server; the agent calls it over _mcp/*", async () => {
    const a = chainAgent([`DIALECT=sacp MCP=1 ${RAW_PROXY}`, TENDRIL_AGENT], { env: { TENDRIL_MODE: "yolo" } });
    await a.initialize();
    const { sessionId } = await a.newSession(workspace("mcp-sacp"));
    fake.script([{ toolCalls: [{ id: "w1", name: "sacp-notes__whisper", input: { text: "LOUD" } }] }, { text: "whispered" }]);
    expect((await a.prompt(sessionId, "whisper it")).stopReason).toBe("end_turn");
    const done = a.ofKind("tool_call_update").find((u) => u.toolCallId === "w1" && u.status === "completed");
    expect(JSON.stringify(done)).toContain("loud (via conn-for-acp:notes-1)");
  }, 30_000);
});

describe("routing through the binary", () => {
  test("1,000 rapid updates arrive in order before the response, unknown kinds and fields intact", async () => {
    const r = rawChain(["agent", `DIALECT=sacp ${RAW_PROXY}`, SDK_PROXY, BURST_AGENT]);
    r.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    const init = await r.nextMessage();
    expect(init.result.echoMeta).toBeNull(); // the agent never sees the proxy marker
    r.writeLine({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId: "burst-1", prompt: [] } });
    for (let i = 0; i < 1000; i++) expect((await r.nextMessage()).params.update.content.text).toBe(`${i} `);
    expect((await r.nextMessage()).params).toEqual({ sessionId: "burst-1", update: { sessionUpdate: "_vendor_note", note: "kept" }, extra: 1 });
    expect(await r.nextMessage()).toEqual({ jsonrpc: "2.0", id: 2, result: { stopReason: "end_turn" } });
    r.child.stdin.end();
    expect(await r.exited()).toBe(0);
  }, 20_000);

  test("a chain that is itself a proxy nests inside another chain", async () => {
    const inner = `${BIN} conductor proxy ${JSON.stringify(`DIALECT=underscore ${RAW_PROXY}`)}`;
    const r = rawChain(["agent", SDK_PROXY, inner, BURST_AGENT], { BURST: "3" });
    r.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    expect((await r.nextMessage()).result.protocolVersion).toBe(1);
    r.writeLine({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId: "burst-1", prompt: [] } });
    for (let i = 0; i < 3; i++) expect((await r.nextMessage()).params.update.content.text).toBe(`${i} `);
    await r.nextMessage();
    expect((await r.nextMessage()).id).toBe(2);
  }, 20_000);

  test("a tendril chain runs as a proxy inside the published sacp conductor (@thinkwell/conductor)", async () => {
    const peer = join(ROOT, "scripts", "bench", "peers", "thinkwell-conductor.ts");
    const inner = `${BIN} conductor proxy 'DIALECT=underscore ${RAW_PROXY}'`;
    const child = spawn(process.execPath, [peer, inner, BURST_AGENT], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, BURST: "2" } });
    const lines: any[] = [];
    let buf = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      buf += c;
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) (lines.push(JSON.parse(buf.slice(0, nl))), (buf = buf.slice(nl + 1)));
    });
    const send = (m: object) => child.stdin.write(JSON.stringify(m) + "\n");
    try {
      send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
      expect(await waitFor(() => lines.length >= 1, 10_000)).toBe(true);
      expect(lines[0].result.protocolVersion).toBe(1);
      expect(lines[0].result.echoMeta).toBeNull(); // the agent saw no proxy marker
      send({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId: "burst-1", prompt: [] } });
      expect(await waitFor(() => lines.length >= 5, 10_000)).toBe(true);
      expect(lines.slice(1, 3).map((m) => m.params.update.content.text)).toEqual(["0 ", "1 "]);
      expect(lines[4]).toEqual({ jsonrpc: "2.0", id: 2, result: { stopReason: "end_turn" } });
    } finally {
      child.stdin.end(); // EOF cascades: the peer shuts down, its components see EOF and exit
      const exited = new Promise((r) => child.once("exit", r));
      if ((await Promise.race([exited, Bun.sleep(5000).then(() => "timeout")])) === "timeout") child.kill("SIGKILL");
    }
  }, 30_000);

  test("tendril prompt drives a chain", async () => {
    fake.script([{ text: "answer through a chain" }]);
    const agent = `${BIN} conductor agent '${SDK_PROXY}' '${BIN} agent'`;
    const res = await runBinAsync(["prompt", "--agent", agent, "--cwd", workspace("prompt"), "hello"], {
      env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? "/tmp", ...agentEnv(fake, work) },
    });
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("answer through a chain");
  }, 30_000);

  test("a component not on PATH is named before anything runs (exit 2)", () => {
    const res = runBin(["conductor", "agent", SDK_PROXY, "no-such-agent --flag"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('component 2 "no-such-agent --flag": "no-such-agent": not found on PATH');
  });

  test("a malformed line from a component ends the chain naming it and its stderr", async () => {
    const r = rawChain(["agent", "sh -c 'echo starting >&2; echo this is not json; sleep 5'"]);
    r.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    const answer = await r.nextMessage();
    expect(answer.error.message).toContain('component 1 (sh) wrote a malformed line');
    expect(answer.error.message).toContain('"this is not json"');
    expect(answer.error.data.stderr).toEqual(["starting"]);
    expect(await r.exited()).toBe(1);
    expect(r.stderr()).toContain("[sh] starting");
  }, 20_000);

  test("an over-long line from a component ends the chain naming it", async () => {
    const r = rawChain(["agent", BURST_AGENT], { BURST: "50", TENDRIL_MAX_LINE_BYTES: "1000" });
    r.writeLine({ jsonrpc: "2.0", id: 1, method: "_big", params: { bytes: 2000 } });
    const answer = await r.nextMessage();
    expect(answer.error.message).toContain("component 1 (burst-agent.ts) wrote a line over MAX_LINE_BYTES");
    expect(await r.exited()).toBe(1);
  }, 20_000);

  for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
    test(`${signal} kills every component group and exits ${code}`, async () => {
      const r = rawChain(["agent", SDK_PROXY, BURST_AGENT]);
      r.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
      await r.nextMessage();
      const leaders = componentsOf(r.child.pid!);
      expect(leaders.length).toBe(2);
      r.child.kill(signal);
      expect(await r.exited()).toBe(code);
      expect(await waitFor(() => leaders.every((p) => !pidAlive(p)), 3000)).toBe(true);
    }, 20_000);
  }

  test("stdin EOF: components get EOF, finish, and the conductor exits 0 with every group gone", async () => {
    const r = rawChain(["agent", SDK_PROXY, BURST_AGENT]);
    r.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    await r.nextMessage();
    const leaders = componentsOf(r.child.pid!);
    const t0 = Date.now();
    r.child.stdin.end();
    expect(await r.exited()).toBe(0);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(leaders.every((p) => !pidAlive(p))).toBe(true);
  }, 20_000);
});

describe("trace", () => {
  test("--trace writes every hop's messages as JSONL; `conductor trace` prints them as a sequence diagram", async () => {
    const file = join(work, "trace.jsonl");
    const r = rawChain(["agent", "--trace", file, `DIALECT=proxy ${RAW_PROXY}`, BURST_AGENT], { BURST: "2" });
    r.writeLine({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
    await r.nextMessage();
    r.writeLine({ jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId: "burst-1", prompt: [{ type: "text", text: "hello trace" }] } });
    for (let i = 0; i < 4; i++) await r.nextMessage();
    r.child.stdin.end();
    expect(await r.exited()).toBe(0);
    const [meta, ...records] = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(meta).toEqual({ components: ["raw-proxy.ts", "burst-agent.ts"] });
    for (const rec of records) {
      expect(typeof rec.t).toBe("number");
      expect(["in", "out"]).toContain(rec.dir);
      expect(rec.hop === "client" || typeof rec.hop === "number").toBe(true);
    }
    expect(records[0]).toMatchObject({ hop: "client", dir: "in", message: { method: "initialize", id: 1 } });
    expect(records[1]).toMatchObject({ hop: 0, dir: "out", message: { method: "proxy/initialize" } });
    expect(records.some((x) => x.hop === 1 && x.dir === "out" && x.message.method === "initialize")).toBe(true);

    const printed = runBin(["conductor", "trace", file]);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain("client");
    expect(printed.stdout.split("\n")[0]).toMatch(/#0 raw-prox\s+#1 burst-ag$/);
    expect(printed.stderr).toBe("");
    expect(printed.stdout).toMatch(/●─+▶[\s│]+session\/prompt #2\s+"hello trace"/);
    expect(printed.stdout).toMatch(/session\/update \[as proxy\/successor\]  agent_message_chunk "1"/);
    expect(printed.stdout).toMatch(/session\/prompt #\d+ \[from proxy\/successor\]/);
    expect(printed.stdout).toContain("↩ session/prompt  stopReason=end_turn");
    expect(printed.stdout).not.toContain("\x1b["); // no colour off a terminal
    const only = runBin(["conductor", "trace", "--method", "session/*", file]);
    expect(only.stdout).not.toContain("initialize");
    expect(only.stdout).toContain("agent_message_chunk");
  }, 20_000);
});
