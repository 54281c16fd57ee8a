// In-process components (issue 26): `tendril:crate-sources` runs inside the conductor and gives the same
// answers and the same trace as the spawned `tendril crate-fetch --proxy` (through the built binary,
// the loopback fake LLM and fake registry); an in-process component that dies or stops reading ends the
// chain with an error naming it, and the chain's other components are ended too (in memory).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startAgent, type TestAgent } from "./acp-client.ts";
import { agentEnv } from "./agent-env.ts";
import { BIN } from "./binary.ts";
import { FakeRegistry } from "./fake-crates-registry.ts";
import { waitFor } from "./fake-mcp-helpers.ts";
import { type FakeRequest, type FakeTurn, startFakeLlm, type FakeLlm } from "./fake-llm.ts";
import { runChain } from "../core/conductor/runner.ts";
import { parseComponents, type InProcessComponent } from "../core/conductor/components.ts";
import { memoryPeer } from "./memory-hop.ts";
import { loadLimits } from "../core/limits.ts";
import { Proxy } from "../core/conductor/proxy.ts";

const MARKER = "pub fn answer() -> u32 { 42 } // DEMO_MARKER";
const reg = new FakeRegistry().add("demo", { vers: "1.0.0", files: { "src/lib.rs": `${MARKER}\n` } });
let fake: FakeLlm;
let work: string;
const running: TestAgent[] = [];

function isResearch(req: FakeRequest): boolean {
  return JSON.stringify(req.body?.system ?? "").includes("research sub-agent");
}

/** The research agent: fetch the source, read lib.rs, return what it says. */
function researchTurn(req: FakeRequest): FakeTurn {
  const said = JSON.stringify(req.body.messages);
  if (said.includes("Delivered to the user")) return { text: "done" };
  const line = /pub fn answer[^\\]*DEMO_MARKER/.exec(said);
  if (line) return { toolCalls: [{ id: "ret", name: "crate-research__return_response_to_user", input: { response: `answer() returns 42: ${line[0]}` } }] };
  const path = /is at (\/[^\s\\]+)/.exec(said);
  if (path) return { toolCalls: [{ id: "read", name: "crate-research__read_crate_file", input: { path: `${path[1]}/src/lib.rs` } }] };
  return { toolCalls: [{ id: "src", name: "crate-research__get_rust_crate_source", input: { crate_name: "demo" } }] };
}

/** The asking agent: one query per prompt, then a report. */
function outerTurn(req: FakeRequest): FakeTurn {
  const messages = req.body.messages as { role: string; content: unknown }[];
  if (JSON.stringify(messages.at(-1)).includes("tool_result")) return { text: "reported" };
  return { toolCalls: [{ id: "q1", name: "crate-sources__rust_crate_query", input: { crate_name: "demo", prompt: "What does answer() return?" } }] };
}

beforeAll(async () => {
  await reg.start();
  fake = await startFakeLlm({ respond: (req) => (isResearch(req) ? researchTurn(req) : outerTurn(req)) });
  work = mkdtempSync(join(tmpdir(), "tendril-conductor2-inproc-"));
});

afterAll(async () => {
  for (const a of running) await a.close(2000).catch(() => {});
  await fake.close();
  await reg.stop();
  rmSync(work, { recursive: true, force: true });
});

function records(file: string): any[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    })
    .filter((r) => r.message !== undefined);
}

/**
 * A trace as a person compares two runs: per hop and direction, the kinds of message that passed
 * (method, the inner one of a wrapper, the update kind; or the answer kind) and how many requests and
 * answers, ids and times left out. Independent flows interleave differently in any two runs (the
 * research sub-session's updates beside the tool call's answers), and progress reaches the client at
 * most MAX_PROGRESS_UPDATES_PER_S times a second, so notification counts and the order across flows
 * are not compared.
 */
function shape(recs: any[]): Record<string, { kinds: string[]; requests: number; answers: number }> {
  const out: Record<string, { kinds: Set<string>; requests: number; answers: number }> = {};
  for (const r of recs) {
    const m = r.message;
    const inner = m.params?.method && /successor|mcp\//.test(m.method ?? "") ? `(${m.params.method})` : "";
    const what = m.method ? `${m.method}${inner}${m.method === "session/update" ? `:${m.params?.update?.sessionUpdate}` : ""}` : m.error ? "error" : "result";
    const lane = (out[`${r.hop} ${r.dir}`] ??= { kinds: new Set(), requests: 0, answers: 0 });
    lane.kinds.add(what);
    if (m.method && m.id !== undefined) lane.requests++;
    if (!m.method) lane.answers++;
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, { kinds: [...v.kinds].sort(), requests: v.requests, answers: v.answers }]));
}

async function ask(component: string, name: string): Promise<{ result: string; trace: any[] }> {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  const file = join(work, `${name}.jsonl`);
  const a = startAgent({
    args: ["conductor", "agent", "--trace", file, component, "tendril agent"],
    env: {
      ...agentEnv(fake, work),
      PATH: `${dirname(BIN)}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      HOME: join(work, `home-${name}`),
      CARGO_HOME: join(work, "cargo"),
      TENDRIL_CRATES_INDEX: reg.indexUrl,
      TENDRIL_MODE: "yolo",
    },
  });
  running.push(a);
  await a.initialize();
  const { sessionId } = await a.newSession(dir);
  expect((await a.prompt(sessionId, "ask about demo")).stopReason).toBe("end_turn");
  const done = a.ofKind("tool_call_update").find((u) => u.toolCallId === "q1" && u.status === "completed");
  expect(await a.close(5000)).toBe(0);
  expect(await waitFor(() => records(file).some((r) => r.hop === "client" && r.dir === "out" && r.message.result?.stopReason), 5000)).toBe(true);
  return { result: JSON.stringify(done?.content), trace: records(file) };
}

test("tendril:crate-sources in-process and `tendril crate-fetch --proxy` spawned give the same answer and the same trace", async () => {
  const spawned = await ask("tendril crate-fetch --proxy", "spawned");
  const inProcess = await ask("tendril:crate-sources", "in-process");
  expect(spawned.result).toContain(`answer() returns 42: ${MARKER}`);
  expect(inProcess.result).toBe(spawned.result);
  expect(shape(inProcess.trace)).toEqual(shape(spawned.trace));
  expect(JSON.parse(readFileSync(join(work, "in-process.jsonl"), "utf8").split("\n")[0]!).components).toEqual(["tendril:crate-sources", "tendril agent"]);
}, 60_000);

test("an unknown in-process component is a usage error naming the known ones (exit 2)", () => {
  expect(() => parseComponents(["tendril:nope", "agent"], { PATH: "/usr/bin:/bin" }, "/", ["crate-sources"])).toThrow(
    'component 1 "tendril:nope": no in-process component "nope" (known: tendril:crate-sources)',
  );
});

/** An in-process agent: answers initialize and any request with `{}`; counts how it ended. */
function memoryAgent(ends: string[]): InProcessComponent {
  return async (io, ctx) => {
    const p = new Proxy(io, { maxLineBytes: 1 << 20 });
    p.onRequest("proxy/initialize", () => ({ protocolVersion: 1 }));
    const end = await Promise.race([p.ended.then((e) => e.reason), new Promise<string>((r) => ctx.signal.addEventListener("abort", () => r("stopped")))]);
    ends.push(end);
    return 0;
  };
}

async function chainWith(components: Record<string, InProcessComponent>, env: Record<string, string> = {}) {
  const client = memoryPeer();
  const lines: string[] = [];
  const specs = parseComponents(Object.keys(components).map((n) => `tendril:${n}`), {}, "/", Object.keys(components));
  const code = runChain({
    mode: "agent",
    specs,
    client: client.io,
    env: {},
    limits: loadLimits(env),
    stderrLine: (l) => void lines.push(l),
    stop: new Promise(() => {}),
    inProcess: components,
  });
  return { client, lines, code };
}

test("an in-process component that dies ends the chain with an error naming it and its last lines; the others are ended", async () => {
  const ends: string[] = [];
  const { client, code, lines } = await chainWith({
    dier: async (io, ctx) => {
      const first = await new Promise<boolean>((r) => io.port.listen(() => r(true), () => r(false)));
      if (first) {
        ctx.stderrLine("giving up on the first message");
        throw new Error("boom");
      }
      return 0;
    },
    agent: memoryAgent(ends),
  });
  client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } });
  const answer = await client.next(5000);
  expect(answer.id).toBe(1);
  expect(answer.error.message).toBe("component 1 (tendril:dier) exited with code 1; last stderr: giving up on the first message | boom");
  expect(answer.error.data).toEqual({ component: 1, stderr: ["giving up on the first message", "boom"] });
  expect(await code).toBe(1);
  expect(lines).toContain("[tendril:dier] boom");
  expect(ends).toHaveLength(1); // the agent was ended too
});

test("an in-process component that stops reading ends the chain once MAX_HOP_QUEUE_BYTES wait for it, naming it", async () => {
  const ends: string[] = [];
  const { client, code } = await chainWith(
    {
      deaf: async (_io, ctx) => {
        await new Promise((r) => ctx.signal.addEventListener("abort", r)); // never reads
        return 0;
      },
      agent: memoryAgent(ends),
    },
    { TENDRIL_MAX_HOP_QUEUE_BYTES: "4096" },
  );
  client.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, pad: "x".repeat(1000) } });
  for (let i = 0; i < 8; i++) client.send({ jsonrpc: "2.0", method: "_x/note", params: { pad: "x".repeat(1000) } });
  const answer = await client.next(5000);
  expect(answer.error.message).toMatch(/^component 1 \(tendril:deaf\) stopped reading its input \(\d+ bytes waiting, over MAX_HOP_QUEUE_BYTES\)/);
  expect(await code).toBe(1);
  expect(ends).toHaveLength(1);
});
