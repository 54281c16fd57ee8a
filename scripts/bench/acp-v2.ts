// Benchmark: one turn of ROUND_TRIPS (50) tool calls through `dist/tendril agent` over ACP v2 beside
// the same turn over v1 (goal: v2 ≤ 1.05× v1), both against one zero-latency fake LLM in its own
// process, turns alternated (each round in the other order) so machine noise hits both alike. Per
// turn, in a fresh session whose MCP server started untimed: wall time from the prompt to its end
// (v1: the prompt's answer; v2: `state_update` idle) and the agent process's CPU time.
import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuTimeMs, fakeLlmProcess } from "./agent.ts";
import { report, type Row } from "./harness.ts";

const ROOT = join(import.meta.dir, "..", "..");
const BIN = join(ROOT, "dist", "tendril");
const FAKE_MCP = join(ROOT, "tests", "fake-mcp.ts");
const ROUND_TRIPS = Number(process.env.TENDRIL_BENCH_ROUND_TRIPS ?? 50);

/** A raw ND-JSON client of the agent: requests by id, and a hook on every notification. */
class Wire {
  readonly child: ChildProcessByStdio<Writable, Readable, null>;
  #next = 0;
  readonly #waiting = new Map<number, (m: any) => void>();
  onNotification: (m: any) => void = () => {};

  constructor(env: Record<string, string>) {
    this.child = spawn(BIN, ["agent"], { stdio: ["pipe", "pipe", "ignore"], env: { ...process.env, ...env } });
    let buf = "";
    this.child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buf += chunk;
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const m = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        if (m.id !== undefined && m.method === undefined) this.#waiting.get(m.id)?.(m);
        else if (m.method === "session/request_permission") this.#send({ jsonrpc: "2.0", id: m.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
        else this.onNotification(m);
      }
    });
  }

  #send(m: object): void {
    this.child.stdin.write(JSON.stringify(m) + "\n");
  }

  request(method: string, params: object): Promise<any> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, (m) => (this.#waiting.delete(id), m.error ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result)));
      this.#send({ jsonrpc: "2.0", id, method, params });
    });
  }

  close(): void {
    this.child.kill("SIGKILL");
  }
}

export async function run(runs = Number(process.env.TENDRIL_BENCH_RUNS ?? 20)): Promise<void> {
  if (!existsSync(BIN)) {
    console.log("\n## acp-v2: skipped (run `npm run build` first)");
    return;
  }
  const work = mkdtempSync(join(tmpdir(), "tendril-bench-v2-"));
  const turn = [...Array.from({ length: ROUND_TRIPS }, () => ({ toolCalls: [{ name: "fk__echo", input: { text: "x" } }] })), { text: "done" }];
  const llm = await fakeLlmProcess(work, Array.from({ length: 2 * (runs + 1) }, () => turn).flat());
  const env = { TENDRIL_PROVIDER: "anthropic", ANTHROPIC_API_KEY: "bench", ANTHROPIC_BASE_URL: llm.url, TENDRIL_MODE: "yolo", XDG_CONFIG_HOME: work, XDG_STATE_HOME: join(work, "state"), XDG_CACHE_HOME: join(work, "cache"), TENDRIL_LOG: "error" };
  const v1 = new Wire(env);
  const v2 = new Wire(env);
  const fk = { name: "fk", command: process.execPath, args: [FAKE_MCP], env: [] };
  try {
    await v1.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    await v2.request("initialize", { protocolVersion: 2, info: { name: "bench", version: "1" }, capabilities: {} });
    const cases = [
      {
        name: `ACP v1: a turn of ${ROUND_TRIPS} tool calls`,
        wire: v1,
        open: async (): Promise<string> => (await v1.request("session/new", { cwd: work, mcpServers: [fk] })).sessionId,
        async turn(sessionId: string) {
          await v1.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "loop" }] });
        },
      },
      {
        name: `ACP v2: the same turn`,
        wire: v2,
        open: async (): Promise<string> => (await v2.request("session/new", { cwd: work, mcpServers: [{ type: "stdio", ...fk }] })).sessionId,
        async turn(sessionId: string) {
          const idle = new Promise<void>((resolve) => {
            v2.onNotification = (m) => {
              const u = m.params?.update;
              if (m.params?.sessionId === sessionId && u?.sessionUpdate === "state_update" && u.state === "idle") resolve();
            };
          });
          await v2.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "loop" }] });
          await idle;
        },
      },
    ];
    const wall: number[][] = cases.map(() => []);
    const cpu: number[][] = cases.map(() => []);
    for (let i = 0; i <= runs; i++) {
      // Each round in the other order, so neither version always runs first.
      for (const j of i % 2 ? [1, 0] : [0, 1]) {
        const c = cases[j]!;
        // A fresh session per turn (its MCP server started untimed): only the turn is measured.
        const sessionId = await c.open();
        const pid = c.wire.child.pid!;
        const c0 = cpuTimeMs(pid);
        const t0 = performance.now();
        await c.turn(sessionId);
        if (i > 0) (wall[j]!.push(performance.now() - t0), cpu[j]!.push(cpuTimeMs(pid) - c0));
      }
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const rows = (of: number[][]): Row[] => cases.map((c, j) => ({ name: c.name, medianMs: med(of[j]!), minMs: Math.min(...of[j]!) }));
    report(`a ${ROUND_TRIPS}-tool-call turn over ACP v2 vs v1 (wall, per turn; goal v2 ≤ ×1.05)`, rows(wall));
    report("the agent process's CPU time per turn", rows(cpu));
  } finally {
    v1.close();
    v2.close();
    llm.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) await run();
