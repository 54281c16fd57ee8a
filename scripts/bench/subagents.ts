// Benchmark: what a subagent adds to a turn beyond its own LLM time (goal ≤ 2 ms). In process, over
// the real ACP surface and session manager with a zero-latency provider: a turn whose one tool call is
// `agent__task` (the child answers in one LLM request) beside the same turn with a plain in-memory
// tool call instead, turns alternated. Added latency = median(task turn) − median(plain turn) − the
// child's median time inside the provider. Once for a client that shows subagents (child updates,
// announcements and messages on the wire) and once for one that does not (progress in the parent call).
import { tmpdir } from "node:os";
import type { LlmEvent, LlmProvider, LlmRequest } from "../../core/llm/types.ts";
import { memoryAgent, type MemoryAgent } from "../../tests/memory-agent.ts";

const CHILD_PROMPT = "child: answer at once";

/** Parent: one tool call (the task, or t__echo), then "done"; the child: one answer. Times the child. */
function provider(childTimes: number[]): LlmProvider {
  return {
    name: "bench",
    async *stream(req: LlmRequest): AsyncIterable<LlmEvent> {
      const t0 = performance.now();
      const last = req.messages.at(-1);
      const asked = last?.role === "user" && last.content[0]?.type === "text" ? last.content[0].text : "";
      const usage = { inputTokens: 10, outputTokens: 5 };
      if (asked === CHILD_PROMPT) {
        yield { type: "text", text: "the child's answer" };
        // Timed before the last event: the loop closes the stream once it has it.
        childTimes.push(performance.now() - t0);
        yield { type: "done", stopReason: "end_turn", usage };
        return;
      }
      if (last?.role === "user") {
        const call = asked === "task"
          ? { id: `t${performance.now()}`, name: "agent__task", input: { description: "bench", prompt: CHILD_PROMPT } }
          : { id: `e${performance.now()}`, name: "t__echo", input: { text: "x" } };
        yield { type: "tool_call", call };
        yield { type: "done", stopReason: "tool_use", usage };
        return;
      }
      yield { type: "text", text: "done" };
      yield { type: "done", stopReason: "end_turn", usage };
    },
  };
}

let nextId = 1;
async function turn(a: MemoryAgent, sessionId: string, text: string): Promise<number> {
  const id = nextId++;
  const t0 = performance.now();
  a.send({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text }] } });
  const answer = await a.response(id, 30_000);
  if (answer.result?.stopReason !== "end_turn") throw new Error(`bench turn failed: ${JSON.stringify(answer).slice(0, 300)}`);
  return performance.now() - t0;
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function measure(capable: boolean, runs: number): Promise<{ plain: number; task: number; child: number }> {
  const childTimes: number[] = [];
  const a = memoryAgent({ provider: provider(childTimes), mode: "yolo" });
  try {
    a.send({ jsonrpc: "2.0", id: nextId, method: "initialize", params: { protocolVersion: 1, clientCapabilities: capable ? { subagents: {} } : {} } });
    await a.response(nextId++);
    a.send({ jsonrpc: "2.0", id: nextId, method: "session/new", params: { cwd: tmpdir(), mcpServers: [] } });
    const sessionId = (await a.response(nextId++)).result.sessionId as string;
    const plain: number[] = [];
    const task: number[] = [];
    for (let i = 0; i < runs + 2; i++) {
      // Alternated, each round in the other order; the first two rounds warm up.
      const order = i % 2 === 0 ? (["plain", "task"] as const) : (["task", "plain"] as const);
      for (const kind of order) {
        const ms = await turn(a, sessionId, kind);
        if (i >= 2) (kind === "plain" ? plain : task).push(ms);
      }
    }
    return { plain: median(plain), task: median(task), child: median(childTimes.slice(2)) };
  } finally {
    await a.close();
  }
}

export async function run(runs = Number(process.env.TENDRIL_BENCH_RUNS ?? 40)): Promise<void> {
  console.log(`\n## subagents: a turn with an agent__task call against the same turn with a plain tool call (${runs} each, medians)`);
  for (const capable of [true, false]) {
    const m = await measure(capable, runs);
    const added = m.task - m.plain - m.child;
    const who = capable ? "client with subagents" : "client without        ";
    console.log(`  ${who}  plain ${m.plain.toFixed(2)} ms  task ${m.task.toFixed(2)} ms  child's LLM ${m.child.toFixed(3)} ms  added ${added.toFixed(2)} ms (goal ≤ 2 ms)`);
  }
}
