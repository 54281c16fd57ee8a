// Benchmark: persisted sessions. `session/load` of a 1,000-turn session with tool calls through the
// built agent (time to the answer, peak RSS) against node reading and parsing the same file (and `wc -l`);
// and the cost per turn of persistence: an in-memory turn with the session file against one without.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionStore } from "../../core/agent/session-store.ts";
import { memoryAgent } from "../../tests/memory-agent.ts";
import { BUILT, compareFns, median, note, report, type Row } from "./harness.ts";

const TURNS = 1000;

function writeSession(state: string, cwd: string): string {
  const store = new SessionStore(state);
  const id = "bench-session";
  const file = store.create({ id, cwd, created: new Date().toISOString(), title: "bench", model: "m", mode: "yolo" });
  for (let t = 0; t < TURNS; t++) {
    const call = { id: `c${t}`, name: "dev__shell", input: { command: `cat src/file${t}.ts` } };
    const out = `line one of file ${t}\n`.repeat(20);
    file.append([
      { type: "turn" },
      { type: "update", update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: `look at file ${t} please` } } },
      { type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `Reading file ${t}.` } } },
      { type: "update", update: { sessionUpdate: "tool_call", toolCallId: call.id, title: call.input.command, kind: "execute", status: "pending", rawInput: call.input } },
      { type: "update", update: { sessionUpdate: "tool_call_update", toolCallId: call.id, status: "completed", content: [{ type: "content", content: { type: "text", text: out } }] } },
      { type: "update", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `File ${t} looks fine.` } } },
      { type: "history", message: { role: "user", content: [{ type: "text", text: `look at file ${t} please` }] } },
      { type: "history", message: { role: "assistant", text: `Reading file ${t}.`, toolCalls: [call] } },
      { type: "history", message: { role: "tool", results: [{ callId: call.id, content: out, isError: false }] } },
      { type: "history", message: { role: "assistant", text: `File ${t} looks fine.`, toolCalls: [] } },
    ]);
  }
  file.close();
  return store.path(id);
}

/** Starts the agent, loads the session, returns the time to the load answer and the peak RSS. */
function loadOnce(bin: string, env: NodeJS.ProcessEnv, cwd: string, method = "session/load"): Promise<{ ms: number; rssKiB: number }> {
  return new Promise((done, fail) => {
    const child = spawn(bin, ["agent"], { env, stdio: ["pipe", "pipe", "ignore"] });
    const t0 = performance.now();
    // Only the new text is searched, with the few characters before it that the answer's start may
    // straddle: searching all that was read at each chunk would cost this side time quadratic in the
    // replay's size (~8 ms for this file), counted as the agent's.
    const answer = '"id":2,';
    let tail = "";
    let answered = false;
    child.stdout.setEncoding("utf8").on("data", (s: string) => {
      const seen = !answered && (tail + s).includes(answer);
      tail = s.slice(-(answer.length - 1));
      if (!seen) return;
      answered = true;
      const ms = performance.now() - t0;
      const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
      const rssKiB = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
      child.stdin.end();
      child.on("close", () => done({ ms, rssKiB }));
    });
    child.on("error", fail);
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } }) + "\n");
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method, params: { sessionId: "bench-session", cwd, mcpServers: [] } }) + "\n");
  });
}

/** Node reading the session file and parsing every line: the floor a load is compared with. */
const NODE_READ_PARSE = `const fs = require("node:fs");
for (const line of fs.readFileSync(process.argv[1], "utf8").split("\\n")) if (line) JSON.parse(line);`;

/** Runs a floor command to its end; a failed one fails the benchmark (it would measure nothing). */
export function runFloor(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { stdio: "ignore" });
  if (r.error || r.status !== 0) throw new Error(`${cmd} ${args[0]}: ${r.error?.message ?? `exit ${r.status}`}`);
}

interface LoadBench {
  home: string;
  file: string;
  env: NodeJS.ProcessEnv;
}

function prepareLoad(): LoadBench {
  const home = mkdtempSync(join(tmpdir(), "tendril-bench-lifecycle-"));
  const state = join(home, "state");
  const file = writeSession(join(state, "tendril"), home);
  const env = { ...process.env, HOME: home, XDG_STATE_HOME: state, XDG_CONFIG_HOME: join(home, "config"), XDG_CACHE_HOME: join(home, "cache"), TENDRIL_PROVIDER: "replay", TENDRIL_REPLAY: "/dev/null", TENDRIL_LOG: "error" };
  return { home, file, env };
}

/** `session/load` of a TURNS-turn session (spawn + initialize + load) against node's read+parse of the
 *  file, `wc -l` and spawn + initialize + session/new; `runs` interleaved rounds. */
async function compareLoads(b: LoadBench, runs: number, quick: boolean, bin = BUILT): Promise<{ nodeParse: Row; load: Row; peakRssMiB: number }> {
  const { home, file, env } = b;
  note(`\n(session file: ${TURNS} turns, ${(statSync(file).size / 1024 / 1024).toFixed(1)} MiB)`);
  const loads: { ms: number; rssKiB: number }[] = [];
  const floors = quick
    ? []
    : [
        { name: "wc -l SESSION.jsonl (floor of reading it)", fn: () => runFloor("wc", ["-l", file]) },
        { name: "tendril agent: spawn + initialize + session/new", fn: async () => void (await loadOnce(bin, env, home, "session/new")) },
      ];
  const rows = await compareFns(
    `lifecycle: session/load of a ${TURNS}-turn session (ratio against node reading and parsing the file)`,
    [
      { name: "node: read + JSON.parse every line", fn: () => runFloor("node", ["-e", NODE_READ_PARSE, file]) },
      { name: "tendril agent: spawn + initialize + session/load", fn: async () => void loads.push(await loadOnce(bin, env, home)) },
      ...floors,
    ],
    runs,
  );
  const peakRssMiB = median(loads.map((l) => l.rssKiB)) / 1024;
  note(`  peak RSS of the agent during the load: median ${peakRssMiB.toFixed(1)} MiB`);
  return { nodeParse: rows[0]!, load: rows[1]!, peakRssMiB };
}

export async function measureSessionLoad(runs = 7, quick = false, bin = BUILT): Promise<{ nodeParse: Row; load: Row; peakRssMiB: number }> {
  const b = prepareLoad();
  try {
    return await compareLoads(b, runs, quick, bin);
  } finally {
    rmSync(b.home, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  if (!existsSync(BUILT)) {
    console.log("\n## lifecycle: skipped (run `npm run build` first)");
    return;
  }
  const b = prepareLoad();
  const { home } = b;
  try {
    await compareLoads(b, 7, false);

    const withFile = memoryAgent({ store: new SessionStore(join(home, "mem-state")) });
    const without = memoryAgent();
    const turn = async (a: ReturnType<typeof memoryAgent>, sessionId: string, n: number) => {
      a.provider.push({ text: "reading", calls: [{ id: `e${n}`, name: "t__echo", input: { text: "x".repeat(2000) } }] }, { text: "done" });
      a.send({ jsonrpc: "2.0", id: 1000 + n, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: `turn ${n}` }] } });
      await a.response(1000 + n);
    };
    const start = async (a: ReturnType<typeof memoryAgent>) => {
      a.send({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: home, mcpServers: [] } });
      return (await a.response(1)).result.sessionId as string;
    };
    const [s1, s2] = [await start(without), await start(withFile)];
    let n = 0;
    await compareFns(
      "lifecycle: one turn with a tool call, in memory (ratio: the cost of persisting it, fsync included)",
      [
        { name: "turn without a session file", fn: () => turn(without, s1, n++) },
        { name: "turn written to its session file", fn: () => turn(withFile, s2, n++) },
      ],
      50,
    );
    await withFile.close();
    await without.close();
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

export { report };
