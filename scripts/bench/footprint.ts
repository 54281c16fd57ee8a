// Benchmark: what an agent costs while it waits. The agent's process tree (process count, RSS, and
// PSS, which counts the binary's shared pages once) idle after one session/new, and after 16
// sessions that each declare the same 3 stdio MCP servers (shared: 3 server processes in all).
// The floor is the bare process (`tendril --version` has no tree to measure; its RSS is printed).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUILT } from "./harness.ts";

const ROOT = join(import.meta.dir, "..", "..");
const FAKE_MCP = join(ROOT, "tests", "fake-mcp.ts");

function field(pid: number, file: string, name: string): number {
  try {
    return Number(new RegExp(`${name}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/${file}`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Every descendant of `root` (its own process group and the groups it started), by parent links. */
export function processTree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of parents) if (ppid === out[i]) out.push(pid);
  return out;
}

/** The process tree under `root`: its process count, summed RSS and PSS. */
export function measureProcessTree(root: number): { processes: number; rssMiB: number; pssMiB: number } {
  const pids = processTree(root);
  const rss = pids.reduce((n, p) => n + field(p, "status", "VmRSS"), 0);
  const pss = pids.reduce((n, p) => n + field(p, "smaps_rollup", "Pss"), 0);
  return { processes: pids.length, rssMiB: rss / 1024, pssMiB: pss / 1024 };
}

/**
 * `tendril agent` with its state under `home` (and `extra` env), idle after initialize and one
 * session/new: send a JSON-RPC message, await the answer to an id.
 */
export async function openIdleAgent(home: string, extra: Record<string, string> = {}, bin = BUILT) {
  const env = { ...process.env, HOME: home, XDG_STATE_HOME: join(home, "state"), XDG_CACHE_HOME: join(home, "cache"), XDG_CONFIG_HOME: join(home, "config"), TENDRIL_PROVIDER: "replay", TENDRIL_REPLAY: "/dev/null", TENDRIL_LOG: "error", ...extra };
  const agent = spawn(bin, ["agent"], { env, stdio: ["pipe", "pipe", "ignore"] });
  let buf = "";
  agent.stdout.setEncoding("utf8").on("data", (s: string) => (buf += s));
  const answered = (id: number) =>
    new Promise<void>((resolve) => {
      const check = () => (buf.includes(`"id":${id},`) ? resolve() : setTimeout(check, 5));
      check();
    });
  const send = (m: Record<string, unknown>) => agent.stdin.write(JSON.stringify(m) + "\n");
  send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1 } });
  await answered(0);
  send({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: home, mcpServers: [] } });
  await answered(1);
  await new Promise((r) => setTimeout(r, 300));
  return { agent, send, answered };
}

/** The agent's process tree idle after initialize and one session/new (a fresh agent each time). */
export async function measureIdleAgent(bin = BUILT): Promise<{ processes: number; rssMiB: number; pssMiB: number }> {
  const home = mkdtempSync(join(tmpdir(), "tendril-bench-footprint-"));
  const { agent } = await openIdleAgent(home, {}, bin);
  try {
    return measureProcessTree(agent.pid!);
  } finally {
    agent.stdin.end();
    await new Promise((r) => agent.once("exit", r));
    rmSync(home, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  if (!existsSync(BUILT)) {
    console.log("\n## footprint: skipped (run `npm run build` first)");
    return;
  }
  const home = mkdtempSync(join(tmpdir(), "tendril-bench-footprint-"));
  const { agent, send, answered } = await openIdleAgent(home);
  try {
    const one = measureProcessTree(agent.pid!);
    const servers = ["a", "b", "c"].map((n) => ({ name: n, command: process.execPath, args: [FAKE_MCP], env: [{ name: "FAKE_MCP_NAME", value: n }] }));
    for (let i = 0; i < 16; i++) {
      send({ jsonrpc: "2.0", id: 10 + i, method: "session/new", params: { cwd: home, mcpServers: servers } });
    }
    for (let i = 0; i < 16; i++) await answered(10 + i);
    await new Promise((r) => setTimeout(r, 500));
    const many = measureProcessTree(agent.pid!);
    const version = field(agent.pid!, "status", "VmRSS");
    console.log("\n## footprint: the agent's process tree, idle");
    console.log(`  after initialize + 1 session/new          ${one.processes} process(es), RSS ${one.rssMiB.toFixed(1)} MiB, PSS ${one.pssMiB.toFixed(1)} MiB`);
    console.log(`  after 16 sessions × the same 3 MCP servers ${many.processes} process(es), RSS ${many.rssMiB.toFixed(1)} MiB, PSS ${many.pssMiB.toFixed(1)} MiB`);
    console.log(`  (of which the agent process itself: RSS ${(version / 1024).toFixed(1)} MiB; the 3 servers are bun running the test MCP server)`);
  } finally {
    agent.stdin.end();
    await new Promise((r) => agent.once("exit", r));
    rmSync(home, { recursive: true, force: true });
  }
}
