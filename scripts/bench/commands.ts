// Benchmark: slash-command announcements and /compact through the built agent (one process, the fake
// LLM). `session/new` → its answer against → `available_commands_update` (goal: the announcement adds
// ≤ 1 ms); `session/new` with an MCP server that offers prompts against one that offers none (the
// prompts/list beside tools/list); and `/compact` on a 200-turn session: its first update and its answer.
import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionStore } from "../../core/agent/session-store.ts";
import { startFakeLlm } from "../../tests/fake-llm.ts";
import { report, type Row } from "./harness.ts";

const ROOT = join(import.meta.dir, "..", "..");
const BIN = join(ROOT, "dist", "tendril");
const FAKE_MCP = join(ROOT, "tests", "fake-mcp.ts");
const TURNS = 200;

type Msg = Record<string, any>;

/** One agent process driven by raw lines: requests, and a wait for the first message a test matches. */
class Wire {
  readonly #waiters: { match: (m: Msg) => boolean; resolve: (at: number, m: Msg) => void }[] = [];
  /** Every message so far, with its arrival time: a wait may start after what it waits for came. */
  readonly #seen: { at: number; m: Msg }[] = [];
  #id = 0;
  #buf = "";
  constructor(readonly child: ChildProcessByStdio<Writable, Readable, null>) {
    child.stdout.setEncoding("utf8").on("data", (s: string) => {
      const at = performance.now();
      this.#buf += s;
      let nl: number;
      while ((nl = this.#buf.indexOf("\n")) >= 0) {
        const m = JSON.parse(this.#buf.slice(0, nl)) as Msg;
        this.#seen.push({ at, m });
        this.#buf = this.#buf.slice(nl + 1);
        for (const [i, w] of [...this.#waiters.entries()].reverse()) if (w.match(m)) this.#waiters.splice(i, 1), w.resolve(at, m);
      }
    });
  }
  /** Resolves with performance.now() when a message matching `match` arrives. */
  when(match: (m: Msg) => boolean): Promise<number> {
    const already = this.#seen.find((s) => match(s.m));
    if (already) return Promise.resolve(already.at);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }
  /** Sends a request; the promise is its answer (and when it arrived). */
  request(method: string, params: unknown): { id: number; answer: Promise<{ at: number; message: Msg }> } {
    const id = ++this.#id;
    const answer = new Promise<{ at: number; message: Msg }>((resolve) =>
      this.#waiters.push({ match: (m) => m.id === id && m.method === undefined, resolve: (at, message) => resolve({ at, message }) }),
    );
    this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    return { id, answer };
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
const row = (name: string, xs: number[]): Row => ({ name, medianMs: median(xs), minMs: Math.min(...xs) });

/** A saved session of TURNS turns (a prompt, a tool call and its output, an answer each). */
function writeSession(store: SessionStore, id: string, cwd: string): void {
  const file = store.create({ id, cwd, created: new Date().toISOString(), title: "bench", model: "fake-model", mode: "yolo" });
  for (let t = 0; t < TURNS; t++) {
    const call = { id: `c${t}`, name: "dev__shell", input: { command: `cat src/file${t}.ts` } };
    const out = `line of file ${t}\n`.repeat(20);
    file.append([
      { type: "turn" },
      { type: "update", update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: `look at file ${t}` } } },
      { type: "history", message: { role: "user", content: [{ type: "text", text: `look at file ${t}` }] } },
      { type: "history", message: { role: "assistant", text: `Reading file ${t}.`, toolCalls: [call] } },
      { type: "history", message: { role: "tool", results: [{ callId: call.id, content: out, isError: false }] } },
      { type: "history", message: { role: "assistant", text: `File ${t} looks fine.`, toolCalls: [] } },
    ]);
  }
  file.close();
}

export async function run(): Promise<void> {
  if (!existsSync(BIN)) {
    console.log("\n## commands: skipped (run `npm run build` first)");
    return;
  }
  const fake = await startFakeLlm();
  fake.respond(() => ({ text: "SUMMARY: two hundred files read, all fine." }));
  const home = mkdtempSync(join(tmpdir(), "tendril-bench-commands-"));
  const ws = join(home, "ws");
  mkdirSync(ws);
  const state = join(home, "state");
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_STATE_HOME: state, XDG_CONFIG_HOME: join(home, "config"), XDG_CACHE_HOME: join(home, "cache"),
    TENDRIL_PROVIDER: "anthropic", TENDRIL_MODEL: "fake-model", ANTHROPIC_API_KEY: "bench", ANTHROPIC_BASE_URL: fake.anthropicBaseUrl, TENDRIL_LOG: "error", TENDRIL_MODE: "yolo",
  };
  const child = spawn(BIN, ["agent"], { env, stdio: ["pipe", "pipe", "ignore"] });
  const wire = new Wire(child);
  try {
    await wire.request("initialize", { protocolVersion: 1, clientCapabilities: { session: { compaction: {} } } }).answer;
    const runs = Number(process.env.TENDRIL_BENCH_RUNS ?? 30);

    // session/new (dev tools only): its answer, and the announcement after it
    const answers: number[] = [];
    const announced: number[] = [];
    const gaps: number[] = [];
    for (let i = 0; i <= runs; i++) {
      const t0 = performance.now();
      const { answer } = wire.request("session/new", { cwd: ws, mcpServers: [] });
      const a = await answer;
      const sessionId = a.message.result.sessionId as string;
      const at = await wire.when((m) => m.params?.sessionId === sessionId && m.params?.update?.sessionUpdate === "available_commands_update");
      if (i === 0) continue; // warm-up
      answers.push(a.at - t0);
      announced.push(at - t0);
      gaps.push(at - a.at);
      wire.request("session/close", { sessionId });
    }
    report("commands: session/new (dev tools only), in one agent process", [
      row("session/new → its answer", answers),
      row("session/new → available_commands_update", announced),
    ]);
    console.log(`  the announcement after the answer: median ${median(gaps).toFixed(3)} ms, max ${Math.max(...gaps).toFixed(3)} ms (goal ≤ 1 ms)`);

    // session/new with a fresh MCP server each time (its own name: never shared): prompts or none
    const withServer = async (prompts: boolean, i: number) => {
      const server = { name: "fk", command: process.execPath, args: [FAKE_MCP], env: [{ name: "FAKE_MCP_NAME", value: `b${i}${prompts}` }, ...(prompts ? [{ name: "FAKE_MCP_PROMPTS", value: "1" }] : [])] };
      const t0 = performance.now();
      const a = await wire.request("session/new", { cwd: ws, mcpServers: [server] }).answer;
      const sessionId = a.message.result.sessionId as string;
      const at = await wire.when((m) => m.params?.sessionId === sessionId && m.params?.update?.sessionUpdate === "available_commands_update");
      await wire.request("session/close", { sessionId }).answer;
      return { answer: a.at - t0, announced: at - t0 };
    };
    const plain: number[] = [];
    const prompted: number[] = [];
    const promptedAnnounced: number[] = [];
    const serverRuns = Math.max(5, Math.floor(runs / 3));
    for (let i = 0; i <= serverRuns; i++) {
      // alternate which goes first: a server started just before still warms up on the other core
      const firstWith = i % 2 === 0;
      const a = await withServer(firstWith, i);
      const b = await withServer(!firstWith, i);
      const [p, q] = firstWith ? [b, a] : [a, b];
      if (i === 0) continue;
      plain.push(p.answer);
      prompted.push(q.answer);
      promptedAnnounced.push(q.announced);
    }
    report("commands: session/new with a stdio MCP server started for it", [
      row("server without prompts → answer", plain),
      row("server with 4 prompts → answer (+ prompts/list)", prompted),
      row("server with 4 prompts → available_commands_update", promptedAnnounced),
    ]);

    // /compact on a 200-turn session: the first update the client sees, and the answer
    const store = new SessionStore(join(state, "tendril"));
    const compactRuns = Math.max(5, Math.floor(runs / 4));
    const first: number[] = [];
    const done: number[] = [];
    for (let i = 0; i <= compactRuns; i++) {
      const id = `bench-compact-${i}`;
      writeSession(store, id, ws);
      await wire.request("session/resume", { sessionId: id, cwd: ws, mcpServers: [] }).answer;
      const t0 = performance.now();
      const firstAt = wire.when((m) => m.params?.sessionId === id && m.params?.update?.sessionUpdate === "compaction_update");
      const a = await wire.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "/compact" }] }).answer;
      if (i === 0) continue;
      first.push((await firstAt) - t0);
      done.push(a.at - t0);
      await wire.request("session/close", { sessionId: id }).answer;
    }
    report(`commands: /compact on a ${TURNS}-turn session (ratio against session/new's answer)`, [
      row("session/new → its answer", answers),
      row("/compact → first update (compaction_update)", first),
      row("/compact → its answer (summary from the fake LLM)", done),
    ]);
  } finally {
    child.stdin.end();
    await new Promise((r) => child.once("close", r));
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}
