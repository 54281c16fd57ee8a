// Benchmark: what a coding session bills (SPEC §3.9). One scripted session — two prompts, 37 requests,
// file reads and command output growing the context, a burst of parallel reads — runs through the real
// session manager and turn loop; each request it sends goes through the real Anthropic and OpenAI Chat
// body builders and is billed by a fake provider that bills as the real one (tests/billing-model.ts).
// Prints billed input units with caching, the same session uncached, and the floor. Goals: Anthropic
// ≤ 0.25× uncached and ≤ 1.15× the floor; OpenAI prefix hit share ≥ 95%. `npm run bench -- cost`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toAnthropicBody } from "../../core/llm/anthropic.ts";
import { toOpenAiBody } from "../../core/llm/openai.ts";
import type { LlmRequest, ToolCall } from "../../core/llm/types.ts";
import type { McpCallResult, McpSessionTools, McpToolInfo } from "../../core/mcp/types.ts";
import { anthropicBlocks, billAnthropic, billOpenAi, floorUnits, openAiBlocks } from "../../tests/billing-model.ts";
import { memoryAgent } from "../../tests/memory-agent.ts";
import { cargoLog, tscEslintLog, vitestLog } from "../../tests/log-samples.ts";
import { POLICIES } from "./logs.ts";

/** Deterministic text of about `bytes` bytes that reads like source or command output (seeded). */
function filler(seed: number, bytes: number, kind: "file" | "log"): string {
  let x = seed * 2654435761;
  const next = () => ((x = (x * 1103515245 + 12345) >>> 0) % 1000) / 1000;
  const words = ["const", "value", "return", "await", "session", "request", "limit", "error", "result", "config", "if", "for", "=>", "null", "stream"];
  const lines: string[] = [];
  let size = 0;
  for (let n = 1; size < bytes; n++) {
    const line =
      kind === "file"
        ? `${"  ".repeat(Math.floor(next() * 4))}${Array.from({ length: 4 + Math.floor(next() * 8) }, () => words[Math.floor(next() * words.length)]).join(" ")};`
        : `[${String(n).padStart(4, "0")}] ${next() < 0.1 ? "FAIL" : "ok  "} ${Array.from({ length: 3 + Math.floor(next() * 6) }, () => words[Math.floor(next() * words.length)]).join("_")} (${Math.floor(next() * 900)} ms)`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n");
}

const SCHEMA_PATH = { type: "object", properties: { path: { type: "string", description: "a path relative to the workspace" } }, required: ["path"] };
const SCHEMA_CMD = { type: "object", properties: { command: { type: "string", description: "a shell command line" }, timeout_s: { type: "number", description: "seconds before the command is stopped" } }, required: ["command"] };

/** What a shell call of the session answers with a log: one of logs.ts's policies (Tendril's digest,
 *  Tendril's raw output, or a peer's), by name. */
type LogPolicy = "tendril digest" | "tendril raw" | "claude code" | "codex";

/** The logs of the session's build and test runs (`npm test`, `npx tsc`): long, failures in the middle. */
const LOGS = [() => vitestLog(900).text, () => cargoLog().text, () => tscEslintLog().text, () => vitestLog(600).text];

function logAs(policy: LogPolicy, log: string): string {
  return POLICIES.find(([name]) => name === policy)![1](log);
}

/** Two tools shaped like the `dev` ones: reading a file and running a command, with real-sized text;
 *  with `logs`, the build and test commands print real-looking logs, as `logs` says the model sees them. */
function benchTools(logs?: LogPolicy): McpSessionTools {
  const info = (tool: string, description: string, inputSchema: Record<string, unknown>): McpToolInfo => ({ qualifiedName: `dev__${tool}`, server: "dev", tool, description, inputSchema, readOnly: true, hook: false });
  const text = (t: string): McpCallResult => ({ content: [{ type: "text", text: t }], text: t, isError: false });
  return {
    tools: () => [
      info("read_file", `Read a file of the workspace. ${filler(1, 600, "file").replace(/\n/g, " ")}`, SCHEMA_PATH),
      info("shell", `Run a command in the workspace and return its output. ${filler(2, 900, "file").replace(/\n/g, " ")}`, SCHEMA_CMD),
    ],
    instructions: () => ({}),
    onToolsChanged: () => {},
    close: async () => {},
    async call(name, args) {
      const seed = JSON.stringify(args).length * 31 + name.length;
      if (name === "dev__read_file") return text(filler(seed, 2000 + (seed % 9) * 1000, "file"));
      const command = String(args.command ?? "");
      if (logs && /npm test|tsc/.test(command)) return text(logAs(logs, LOGS[seed % LOGS.length]!()));
      return text(filler(seed, 400 + (seed % 7) * 700, "log"));
    },
  };
}

const read = (i: number): ToolCall => ({ id: `r${i}`, name: "dev__read_file", input: { path: `src/module-${i}.ts` } });
const shell = (i: number, command: string): ToolCall => ({ id: `c${i}`, name: "dev__shell", input: { command } });

/** The scripted answers: two prompts, 37 responses in all, one a burst of 12 parallel reads. */
function script(): Turn[] {
  let n = 0;
  const step = (calls: ToolCall[], text = "") => ({ text, calls });
  const first = [
    step([shell(n++, "git status && tree -L 2 src")], "Let me look at the layout."),
    ...Array.from({ length: 4 }, (_, i) => step(i % 2 ? [shell(n++, `rg -n "limit" src/part-${i}`)] : [read(n++)])),
    // 25 new blocks in one step: past the API's 20-block lookback from the newest breakpoint.
    step(Array.from({ length: 12 }, () => read(n++)), "Reading the modules involved."),
    ...Array.from({ length: 6 }, (_, i) => step(i % 2 ? [shell(n++, `rg -n "limit" src/part-${i}`)] : [read(n++)])),
    ...Array.from({ length: 7 }, (_, i) => step([shell(n++, i % 3 ? "npm test -- --filter session" : "npx tsc --noEmit -p .")], "Checking.")),
    { text: "The limit is read in two places; the session store ignores it. I changed the store and the tests pass." },
  ];
  const second = [
    ...Array.from({ length: 16 }, (_, i) => step(i % 3 === 0 ? [shell(n++, "npm test")] : [read(n++)], i % 4 ? "" : "Continuing.")),
    { text: "Done: the handoff now keeps the limit too; all tests pass." },
  ];
  return [
    { prompt: "Find why the session limit is ignored after a reload and fix it.", responses: first },
    { prompt: "Now make the handoff keep it as well, and run the tests.", responses: second },
  ];
}

type Turn = { prompt: string; responses: { text?: string; calls?: ToolCall[] }[] };

/** The LLM requests an in-memory agent makes over scripted turns (each must end its turn). */
async function record(turns: Turn[], logs?: LogPolicy): Promise<LlmRequest[]> {
  const ws = mkdtempSync(join(tmpdir(), "tendril-bench-cost-"));
  const a = memoryAgent({ mode: "yolo", pool: { openTools: async () => benchTools(logs) }, maxTokens: 32_000, contextWindow: 1_000_000 });
  const seen: LlmRequest[] = [];
  const inner = a.provider.stream.bind(a.provider);
  a.provider.stream = (r) => (seen.push(structuredClone({ ...r, signal: undefined, onRetry: undefined }) as unknown as LlmRequest), inner(r));
  try {
    a.send({ jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: ws, mcpServers: [] } });
    const sessionId = (await a.response(1)).result.sessionId as string;
    let id = 2;
    for (const turn of turns) {
      a.provider.push(...turn.responses);
      a.send({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: turn.prompt }] } });
      const answer = await a.response(id++, 30_000);
      if (answer.result?.stopReason !== "end_turn") throw new Error(`the scripted session ended with ${JSON.stringify(answer)}`);
    }
  } finally {
    await a.close();
    rmSync(ws, { recursive: true, force: true });
  }
  return seen;
}

/** The scripted coding session (with the build and test logs as `logs` shows them). */
const recordSession = (logs?: LogPolicy) => record(script(), logs);

/** A parent whose first response hands a task to a subagent: the parent's request, the child's, the
 *  parent's after the result. */
const recordSubagent = () =>
  record([
    {
      prompt: "Find why the session limit is ignored.",
      responses: [{ calls: [{ id: "task", name: "agent__task", input: { description: "find the limit", prompt: "Find where the session limit is read." } }] }, { text: "In two places." }, { text: "Done." }],
    },
  ]);

const fmt = (n: number) => Math.round(n).toLocaleString("en-US").padStart(11);
const ratio = (a: number, b: number) => (a / b).toFixed(3);

export async function run(): Promise<void> {
  const requests = await recordSession();
  const on = requests.map((r) => anthropicBlocks(toAnthropicBody({ ...r, promptCache: "on" }) as never));
  const off = requests.map((r) => anthropicBlocks(toAnthropicBody({ ...r, promptCache: "off" }) as never));
  const cached = billAnthropic(on);
  const uncached = billAnthropic(off);
  const floor = floorUnits(off.map((blocks) => blocks.reduce((s, b) => s + b.tokens, 0)));
  const openai = billOpenAi(requests.map((r) => openAiBlocks(toOpenAiBody(r, true) as never)));
  console.log(`\n## cost: one scripted session, ${requests.length} requests, billed input units (input token = 1; Anthropic writes 1.25, reads 0.1)`);
  console.log(`  anthropic with caching     ${fmt(cached.units)}   (uncached ${fmt(cached.uncached)}, written ${fmt(cached.written)}, read ${fmt(cached.read)})`);
  console.log(`  anthropic uncached         ${fmt(uncached.units)}   ×${ratio(cached.units, uncached.units)} of it (goal ≤ 0.25)`);
  console.log(`  floor (write once, read)   ${fmt(floor)}   billed ×${ratio(cached.units, floor)} of it (goal ≤ 1.15)`);
  console.log(`  openai with its prefix cache ${fmt(openai.units).trimStart()} of ${fmt(openai.prompt).trimStart()} uncached (×${ratio(openai.units, openai.prompt)})`);
  console.log(`  openai prefix hit share    ${(100 * (openai.read / openai.reusable)).toFixed(1).padStart(10)}%  of the tokens an earlier request sent (goal ≥ 95%); ${(100 * (openai.read / openai.prompt)).toFixed(1)}% of all prompt tokens`);
  // The same session with real-looking build and test logs (10 of its 37 requests follow one): billed as sent raw and as digested.
  const billed = async (policy: LogPolicy) => billAnthropic((await recordSession(policy)).map((r) => anthropicBlocks(toAnthropicBody({ ...r, promptCache: "on" }) as never)));
  const withRaw = await billed("tendril raw");
  const withDigest = await billed("tendril digest");
  console.log(`  with build and test logs   ${fmt(withDigest.units)}   digested (raw output: ${fmt(withRaw.units).trimStart()}; ×${ratio(withDigest.units, withRaw.units)} of it; ×${ratio(withDigest.units, cached.units)} of the session without logs)`);
  // The same session, the same agent, only the logs shown as each peer shows them: what the log policy
  // alone does to the bill (a peer's own prompts and caching are not part of it). Each on its provider.
  const withClaude = await billed("claude code");
  console.log(`  logs as Claude Code shows them ${fmt(withClaude.units).trimStart()} on Anthropic: the digest bills ×${ratio(withDigest.units, withClaude.units)} of it (and shows every failure; its 2 KB preview does not)`);
  const openAiBilled = async (policy: LogPolicy) => billOpenAi((await recordSession(policy)).map((r) => openAiBlocks(toOpenAiBody(r, true) as never)));
  const [codexOpenAi, digestOpenAi] = [await openAiBilled("codex"), await openAiBilled("tendril digest")];
  console.log(`  logs as codex shows them   ${fmt(codexOpenAi.units)}   on OpenAI: the digest bills ${fmt(digestOpenAi.units).trimStart()}, ×${ratio(digestOpenAi.units, codexOpenAi.units)} of it`);
  // A subagent's first request: the parent's tools and system prompt, already written, are read back.
  const sub = await recordSubagent();
  const subBill = billAnthropic(sub.map((r) => anthropicBlocks(toAnthropicBody({ ...r, promptCache: "on" }) as never)));
  const child = subBill.perRequest[1]!;
  const childTotal = child.uncached + child.written + child.read;
  console.log(`  subagent's first request   ${fmt(child.units)}   units of ${fmt(childTotal).trimStart()} tokens: ${fmt(child.read).trimStart()} read from the parent's cache (×${ratio(child.units, childTotal)} of uncached)`);
}
