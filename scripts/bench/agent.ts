// Benchmark: `tendril agent` start-up (spawn → initialize answer, RSS) beside a published ACP agent when
// one is installed (@agentclientprotocol/claude-agent-acp, or TENDRIL_BENCH_PEER_ACP=path/to/index.js)
// and a minimal SDK agent run by bun (the floor); and the agent's overhead per tool round trip
// (50 sequential calls through a zero-latency fake LLM) beside calling the same tool over MCP directly
// plus the LLM request alone, in wall time and in CPU per trip (the agent's from /proc);
// and the cost of live shell output (a 50 MB command, with and without the client's terminal flag).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUILT, buildLabel, median, note, report, type Row } from "./harness.ts";

const ROOT = join(import.meta.dir, "..", "..");
const FAKE_MCP = join(ROOT, "tests", "fake-mcp.ts");
const ROUND_TRIPS = Number(process.env.TENDRIL_BENCH_ROUND_TRIPS ?? 50);

const FLOOR_AGENT = `
import * as acp from "@agentclientprotocol/sdk";
import { Readable, Writable } from "node:stream";
acp.agent({ name: "floor" })
  .onRequest("initialize", () => ({ protocolVersion: 1, agentCapabilities: {}, authMethods: [] }))
  .connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
`;

interface Spawnable {
  name: string;
  cmd: string;
  args: string[];
  /** What on stdout ends the measurement: the initialize answer unless set. */
  done?: RegExp;
}

function rssKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

const INITIALIZE_ANSWER = /"id":0,"result"/;

/** Spawns, sends initialize, resolves with ms to the answer (or `done`) and RSS right after it. */
function initializeOnce(s: Spawnable): Promise<{ ms: number; rssKb: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(s.cmd, s.args, { cwd: ROOT, stdio: ["pipe", "pipe", "ignore"], env: { ...process.env, TENDRIL_LOG: "error" } });
    const timer = setTimeout(() => (child.kill("SIGKILL"), reject(new Error(`${s.name}: no initialize answer in 20 s`))), 20_000);
    let buf = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      buf += c;
      if (!(s.done ?? INITIALIZE_ANSWER).test(buf)) return;
      const ms = performance.now() - t0;
      const rss = rssKb(child.pid!);
      clearTimeout(timer);
      child.kill("SIGKILL");
      resolve({ ms, rssKb: rss });
    });
    child.on("error", reject);
    child.stdin.on("error", () => {});
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } }) + "\n");
  });
}

/** The published peer: TENDRIL_BENCH_PEER_ACP, else claude-agent-acp as `npm run bench:peers` installs
 *  it (scripts/bench/peers) or as a dependency of the repository. */
function peerAgent(): Spawnable | undefined {
  let path = process.env.TENDRIL_BENCH_PEER_ACP;
  for (const base of [join(ROOT, "scripts", "bench", "peers", "package.json"), join(ROOT, "package.json")]) {
    if (path) break;
    try {
      path = createRequire(base).resolve("@agentclientprotocol/claude-agent-acp/dist/index.js");
    } catch {
      // not installed there
    }
  }
  return path && existsSync(path) ? { name: "claude-agent-acp (node)", cmd: "node", args: [path] } : undefined;
}

export interface InitializeFigures {
  /** spawn → initialize answered, and the RSS then (in MiB, as medianMs/minMs). */
  tendril: Row;
  tendrilRss: Row;
  /** spawn → `--version` printed: the start-up the answer is measured beyond. */
  version: Row;
  peer?: Row;
  peerRss?: Row;
}

/** Spawn → initialize answer of the agent, the published peer (when installed), the SDK floor and
 *  `tendril --version` (spawned and read the same way), interleaved `runs` times. */
export async function measureInitialize(runs = 10, bin = BUILT): Promise<InitializeFigures> {
  // --version right after the agent: a heavier process just before it (the floor, the peer) would slow it.
  const cases: Spawnable[] = [
    { name: `${buildLabel(bin)} agent`, cmd: bin, args: ["agent"] },
    { name: `${buildLabel(bin)} --version (its output)`, cmd: bin, args: ["--version"], done: /\n/ },
  ];
  const peer = peerAgent();
  if (peer) cases.push(peer);
  cases.push({ name: "minimal SDK agent (bun -e, floor)", cmd: process.execPath, args: ["-e", FLOOR_AGENT] });
  const times: number[][] = cases.map(() => []);
  const rss: number[][] = cases.map(() => []);
  for (let i = 0; i <= runs; i++) {
    for (const [j, c] of cases.entries()) {
      const r = await initializeOnce(c);
      if (i > 0) (times[j]!.push(r.ms), rss[j]!.push(r.rssKb));
    }
  }
  const timeRows = cases.map((c, j) => ({ name: c.name, medianMs: median(times[j]!), minMs: Math.min(...times[j]!) }));
  const rssRows = cases.map((c, j) => ({ name: c.name, medianMs: median(rss[j]!) / 1024, minMs: Math.min(...rss[j]!) / 1024 }));
  report("agent start-up: spawn → initialize answer", timeRows);
  report("agent RSS right after initialize", rssRows.filter((_, j) => j !== 1), "MiB");
  const beyond = timeRows[0]!.medianMs - timeRows[1]!.medianMs;
  note(`  the initialize answer beyond start-up (--version): ${beyond.toFixed(2)} ms`);
  if (!peer) note("  (no published ACP agent installed: `npm run bench:peers` installs claude-agent-acp, or set TENDRIL_BENCH_PEER_ACP)");
  return { tendril: timeRows[0]!, tendrilRss: rssRows[0]!, version: timeRows[1]!, ...(peer ? { peer: timeRows[2]!, peerRss: rssRows[2]! } : {}) };
}

/** User + system CPU time a process has used so far, from /proc (Linux). */
export function cpuTimeMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/** The fake LLM in a process of its own (answering `turns` in order), so that neither the agent's
 *  client nor the direct calls below share a thread with it. */
export async function fakeLlmProcess(work: string, turns: object[]): Promise<{ url: string; stop: () => void }> {
  const script = join(work, "llm-script.json");
  writeFileSync(script, JSON.stringify(turns));
  const child = spawn(process.execPath, [join(ROOT, "tests", "fake-llm.ts"), "--script", script], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => {
      out += s;
      if (out.includes("\n")) resolve(out.trim());
    });
    child.once("exit", () => reject(new Error("the fake LLM exited before listening")));
  });
  return { url, stop: () => void child.kill("SIGTERM") };
}

export interface RoundTripFigures {
  /** Wall time per call / request / trip. */
  mcp: Row;
  llm: Row;
  agent: Row;
  /** Wall: a trip through the agent ÷ (a direct tools/call + the LLM exchange alone), median of the
   *  per-run ratios (each run measures the three back to back, so load that shifts between runs
   *  shifts all three). */
  wallRatio: number;
  /** CPU per trip (ms, medians over the runs): the agent process's own (every thread's run time from
   *  /proc), beside this process's own for a direct tools/call and for a request alone (the client
   *  work a trip cannot do without); cpuRatio: agent ÷ (mcp + llm), median of the per-run ratios. */
  cpu: { agent: number; mcp: number; llm: number };
  cpuRatio: number;
}

/**
 * CPU time a process has used so far, in ms: the sum of its threads' run time from
 * /proc/PID/task/TID/schedstat (nanoseconds; the same time as stat's user + system, whose 10 ms ticks
 * are too coarse for one burst of trips). A thread that exited is not counted: the agent's live for
 * its life. Falls back to stat's ticks where schedstat is not kept.
 */
export function threadsCpuMs(pid: number): number {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    return ns / 1e6;
  } catch {
    return cpuTimeMs(pid);
  }
}

/** This process's user + system CPU (every thread), in ms. */
const selfCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/**
 * A tool call's round trip through the agent against what the trip cannot do without: a direct MCP
 * tools/call of the same tool (same fake server) and the LLM exchange alone (same provider code, same
 * fake LLM in its own process). `runs` measured runs (after one warm-up), each a burst of `trips`
 * direct calls, `trips` requests alone and one agent turn of `trips` calls, back to back. Wall time
 * per trip, and CPU per trip: the agent's from /proc, the direct client's from this process.
 * `bin`: the agent binary (another build, for a before/after run).
 */
export async function measureRoundTrips(runs = 5, trips = ROUND_TRIPS, bin = BUILT): Promise<RoundTripFigures> {
  // Warm-up runs, and before them the direct calls and requests alone 16 bursts more: both processes'
  // JITs compile on threads whose CPU is counted, and a fresh bench process (the guard's) otherwise
  // charged its own compiling to the direct side (0.3-0.5 ms a call + request, not 0.2).
  const WARM_UP = 4;
  const WARM_DIRECT = 16 * trips;
  const { startAgent } = await import("../../tests/acp-client.ts");
  const { createMcpPool } = await import("../../core/mcp/pool.ts");
  const { DEFAULT_LIMITS } = await import("../../core/limits.ts");
  const { loadConfig } = await import("../../core/config.ts");
  const { createProvider } = await import("../../core/llm/provider.ts");
  const work = mkdtempSync(join(tmpdir(), "tendril-bench-agent-"));
  // The fake LLM answers in order: per run, `trips` requests alone, then a turn of `trips` tool calls and a closing text.
  const alone = Array.from({ length: trips }, () => ({ text: "ok" }));
  const turn = [...Array.from({ length: trips }, () => ({ toolCalls: [{ name: "fk__echo", input: { text: "x" } }] })), { text: "done" }];
  const llm = await fakeLlmProcess(work, [...Array.from({ length: WARM_DIRECT }, () => ({ text: "ok" })), ...Array.from({ length: runs + WARM_UP }, () => [...alone, ...turn]).flat()]);
  const agent = startAgent({
    command: bin,
    env: { TENDRIL_PROVIDER: "anthropic", ANTHROPIC_API_KEY: "bench", ANTHROPIC_BASE_URL: llm.url, TENDRIL_MODE: "yolo", XDG_CONFIG_HOME: work, XDG_STATE_HOME: join(work, "state"), XDG_CACHE_HOME: join(work, "cache"), TENDRIL_LOG: "error" },
  });
  const pool = createMcpPool({ limits: DEFAULT_LIMITS, env: process.env });
  const fk = { name: "fk", transport: "stdio" as const, command: process.execPath, args: [FAKE_MCP] };
  try {
    await agent.initialize();
    const direct = await pool.openTools([fk], { cwd: work });
    const cfg = await loadConfig({ provider: "anthropic" }, { ANTHROPIC_API_KEY: "bench", ANTHROPIC_BASE_URL: llm.url, HOME: work }, () => undefined);
    const provider = await createProvider(cfg, () => undefined);
    const tools = direct.tools().map((t) => ({ name: t.qualifiedName, description: t.description, inputSchema: t.inputSchema }));
    const requestAlone = async () => {
      const messages = [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }];
      for await (const _ of provider.stream({ model: cfg.model, system: "s", messages, tools, maxTokens: 100, signal: new AbortController().signal })) void _;
    };
    for (let k = 0; k < WARM_DIRECT; k++) await direct.call("fk__echo", { text: "x" }), await requestAlone();
    const wall = { mcp: [] as number[], llm: [] as number[], agent: [] as number[], ratio: [] as number[] };
    const cpu = { mcp: [] as number[], llm: [] as number[], agent: [] as number[], ratio: [] as number[] };
    for (let i = 0; i < runs + WARM_UP; i++) {
      let c0 = selfCpuMs();
      let t0 = performance.now();
      for (let k = 0; k < trips; k++) await direct.call("fk__echo", { text: "x" });
      const mcpMs = (performance.now() - t0) / trips;
      const mcpCpu = selfCpuMs() - c0;
      c0 = selfCpuMs();
      t0 = performance.now();
      for (let k = 0; k < trips; k++) await requestAlone();
      const llmMs = (performance.now() - t0) / trips;
      const llmCpu = selfCpuMs() - c0;
      // A fresh session per turn, opened outside the timing: each turn's history grows from nothing to
      // `trips` calls, as a real turn's does.
      const { sessionId } = await agent.newSession(work, [{ name: "fk", command: process.execPath, args: [FAKE_MCP], env: [] }]);
      c0 = threadsCpuMs(agent.child.pid!);
      t0 = performance.now();
      await agent.prompt(sessionId, "loop");
      const agentMs = (performance.now() - t0) / trips;
      const agentCpu = threadsCpuMs(agent.child.pid!) - c0;
      if (i < WARM_UP) continue;
      wall.mcp.push(mcpMs), wall.llm.push(llmMs), wall.agent.push(agentMs), wall.ratio.push(agentMs / (mcpMs + llmMs));
      cpu.mcp.push(mcpCpu / trips), cpu.llm.push(llmCpu / trips), cpu.agent.push(agentCpu / trips), cpu.ratio.push(agentCpu / (mcpCpu + llmCpu));
    }
    const row = (name: string, xs: number[]) => ({ name, medianMs: median(xs), minMs: Math.min(...xs) });
    const rows = [
      row(`direct MCP tools/call ×${trips} (per call)`, wall.mcp),
      row(`LLM request alone ×${trips} (provider → fake, per request)`, wall.llm),
      row(`agent turn, ${trips} LLM→tool round trips (per trip)`, wall.agent),
    ] as [Row, Row, Row];
    const perTrip = { agent: median(cpu.agent), mcp: median(cpu.mcp), llm: median(cpu.llm) };
    const wallRatio = median(wall.ratio);
    const cpuRatio = median(cpu.ratio);
    report("tool round trip through the agent vs the tool alone (the fake LLM in its own process), wall", rows);
    report("the same, CPU per call / request / trip (this process for the direct ones; the agent's process)", [
      row("direct MCP tools/call (this process)", cpu.mcp),
      row("LLM request alone (this process)", cpu.llm),
      row("agent round trip (the agent's process)", cpu.agent),
    ]);
    note(`  agent overhead per round trip beyond the tool and the LLM exchange: ${(rows[2].medianMs - rows[0].medianMs - rows[1].medianMs).toFixed(2)} ms wall, ×${wallRatio.toFixed(2)} (median of ${runs} runs' ratios)`);
    note(`  CPU: ${perTrip.agent.toFixed(3)} ms per trip in the agent, ×${cpuRatio.toFixed(2)} a direct tools/call + request alone (${(perTrip.mcp + perTrip.llm).toFixed(3)} ms; median of ${runs} runs' ratios)`);
    await direct.close();
    return { mcp: rows[0], llm: rows[1], agent: rows[2], wallRatio, cpu: perTrip, cpuRatio };
  } finally {
    await agent.close(3000).catch(() => {});
    await pool.closeAll().catch(() => {});
    llm.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

export interface LiveOutputFigures {
  /** The agent's CPU per 50 MB shell call, by client flag (medianMs = CPU ms). */
  cpu: Row[];
  /** The most live output updates within any one second of a call, by flag. */
  rate: Row[];
  /** Live output updates per call and the turn's wall time, by flag. */
  count: Row[];
  wall: Row[];
}

/**
 * The cost of live shell output (SPEC §3.3): one `dev__shell` call printing 50 MB, run `runs` times by
 * a client without the terminal flag, with `_meta.terminal_output` and with `terminal_output_delta`
 * (three agents, turns interleaved): the agent process's CPU per call and the live updates per second.
 * `paced`: the 50 MB in 25 parts 0.1 s apart (a build printing for seconds), else as fast as it goes.
 */
export async function measureLiveOutput(runs = 5, mb = 50, paced = false): Promise<LiveOutputFigures> {
  const { startAgent } = await import("../../tests/acp-client.ts");
  const acp = await import("@agentclientprotocol/sdk");
  const work = mkdtempSync(join(tmpdir(), "tendril-bench-live-"));
  const part = `head -c ${(mb * 1000 * 1000) / 25} /dev/zero | tr '\\0' x`;
  const command = paced ? `for i in $(seq 25); do ${part}; sleep 0.1; done; echo; echo END` : `head -c ${mb * 1000 * 1000} /dev/zero | tr '\\0' x; echo; echo END`;
  const how = paced ? `${mb} MB over 25 parts 0.1 s apart` : `${mb} MB at once`;
  const flags: [string, Record<string, unknown> | undefined][] = [["no flag", undefined], ["_meta.terminal_output", { terminal_output: true }], ["_meta.terminal_output_delta", { terminal_output_delta: true }]];
  const turn = [{ toolCalls: [{ name: "dev__shell", input: { command, timeout_s: 300 } }] }, { text: "done" }];
  const llm = await fakeLlmProcess(work, Array.from({ length: (runs + 1) * flags.length }, () => turn).flat());
  const env = { TENDRIL_PROVIDER: "anthropic", ANTHROPIC_API_KEY: "bench", ANTHROPIC_BASE_URL: llm.url, TENDRIL_MODE: "yolo", XDG_CONFIG_HOME: work, XDG_STATE_HOME: join(work, "state"), XDG_CACHE_HOME: join(work, "cache"), TENDRIL_LOG: "error" };
  const agents = flags.map(() => startAgent({ env }));
  const cpu: number[][] = flags.map(() => []);
  const rate: number[][] = flags.map(() => []);
  const count: number[][] = flags.map(() => []);
  const wall: number[][] = flags.map(() => []);
  try {
    for (const [j, a] of agents.entries()) {
      const meta = flags[j]![1];
      await a.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: meta ? { _meta: meta } : {}, clientInfo: { name: "bench", version: "0" } });
    }
    for (let i = 0; i <= runs; i++) {
      for (const [j, a] of agents.entries()) {
        const { sessionId } = await a.newSession(work);
        const from = a.updates.length;
        const before = cpuTimeMs(a.child.pid!);
        const t0 = performance.now();
        await a.prompt(sessionId, "flood");
        const ms = performance.now() - t0;
        const times = a.updates.flatMap((n, k) => (k >= from && Object.keys(n.update._meta ?? {}).some((key) => key.startsWith("terminal_output")) ? [a.arrivals[k]!] : []));
        // the most live updates that arrived within any one second
        const busiest = times.reduce((most, t, k) => Math.max(most, times.filter((u, m) => m >= k && u - t < 1000).length), 0);
        if (i > 0) (cpu[j]!.push(cpuTimeMs(a.child.pid!) - before), rate[j]!.push(busiest), count[j]!.push(times.length), wall[j]!.push(ms));
      }
    }
  } finally {
    await Promise.all(agents.map((a) => a.close(3000).catch(() => {})));
    llm.stop();
    rmSync(work, { recursive: true, force: true });
  }
  const rows = (xs: number[][]) => flags.map(([name], j) => ({ name, medianMs: median(xs[j]!), minMs: Math.min(...xs[j]!) }));
  const figures = { cpu: rows(cpu), rate: rows(rate), count: rows(count), wall: rows(wall) };
  report(`live shell output (${how}): the agent's CPU per shell call, by client flag`, figures.cpu);
  report(`live shell output (${how}): the most output updates within one second`, figures.rate, "/s");
  report(`live shell output (${how}): output updates per call`, figures.count, "");
  report(`live shell output (${how}): the turn's wall time`, figures.wall);
  return figures;
}

export async function run(): Promise<void> {
  if (!existsSync(BUILT)) {
    console.log("\n## agent: skipped (run `npm run build` first)");
    return;
  }
  await measureInitialize();
  await measureRoundTrips();
  await measureLiveOutput();
  await measureLiveOutput(5, 50, true);
}

if (import.meta.main) await run();
