// Benchmark: `tendril conductor trace FILE --html OUT` on a generated 10,000-message trace (a client, one
// proxy and an agent: prompts, streamed updates, answers; ~20,000 records), beside its floors: `cat`
// reading the file and the text diagram (`conductor trace FILE`); in process, reading the file and
// parsing its lines (the floor) beside reading, pairing and writing the page; and, when chromium is on
// PATH, how long the page takes to load, parse its data and draw the rows in view. Figures only.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compareCommands, compareFns, which } from "./harness.ts";
import { readWholeTrace } from "../../core/conductor/trace-follow.ts";
import { stepsOf } from "../../core/conductor/trace-steps.ts";
import { tracePage } from "../../core/conductor/trace-view.ts";
import { DEFAULT_LIMITS } from "../../core/limits.ts";

const ROOT = join(import.meta.dir, "..", "..");
const BIN = join(ROOT, "dist", "tendril");
const DIR = "/tmp/tendril-bench-trace";
const MESSAGES = Number(process.env.TENDRIL_BENCH_TRACE_MESSAGES ?? 10_000);
const TRACE = join(DIR, `trace-${MESSAGES}.jsonl`);
const OUT = join(DIR, "page.html");

/** A chain's trace: each message read from one hop and written to the next, as the conductor records them. */
function makeTrace(): void {
  const lines: string[] = [JSON.stringify({ components: ["raw-proxy.ts", "burst-agent.ts"] })];
  let t = 0;
  let n = 0;
  const put = (from: "client" | number, to: "client" | number, message: object, routed: object = message) => {
    t += 0.05;
    lines.push(JSON.stringify({ t: Math.round(t * 1000) / 1000, hop: from, dir: "in", message }));
    lines.push(JSON.stringify({ t: Math.round((t + 0.01) * 1000) / 1000, hop: to, dir: "out", message: routed }));
    n++;
  };
  for (let turn = 0; n < MESSAGES; turn++) {
    const sessionId = `sess-${turn % 3}`;
    const prompt = { jsonrpc: "2.0", method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: `question ${turn}: what does the parser do with a trailing comma?` }] } };
    put("client", 0, { ...prompt, id: turn }, { ...prompt, id: 1000 + turn });
    put(0, 1, { jsonrpc: "2.0", id: 2000 + turn, method: "proxy/successor", params: { method: "session/prompt", params: prompt.params } }, { ...prompt, id: 3000 + turn });
    for (let i = 0; i < 20 && n < MESSAGES - 2; i++) {
      const update = { jsonrpc: "2.0", method: "session/update", params: { sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `chunk ${i} of the answer, with a few words in it ` } } } };
      put(1, 0, update, { jsonrpc: "2.0", method: "proxy/successor", params: { method: "session/update", params: update.params } });
      put(0, "client", update);
    }
    put(1, 0, { jsonrpc: "2.0", id: 3000 + turn, result: { stopReason: "end_turn" } }, { jsonrpc: "2.0", id: 2000 + turn, result: { stopReason: "end_turn" } });
    put(0, "client", { jsonrpc: "2.0", id: 1000 + turn, result: { stopReason: "end_turn" } }, { jsonrpc: "2.0", id: turn, result: { stopReason: "end_turn" } });
  }
  writeFileSync(TRACE, lines.join("\n") + "\n");
}

async function browserLoad(): Promise<void> {
  const chromiumPath = which("chromium");
  if (!chromiumPath) return void console.log("\n(chromium is not on PATH: the page load in a browser is not measured)");
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox"], timeout: 30_000 });
  try {
    const page = await browser.newPage();
    await compareFns(`the --html page in headless chromium (${MESSAGES} messages), until it is ready`, [
      { name: "about:blank (the browser's floor)", fn: async () => void (await page.goto("about:blank")) },
      {
        name: "page.html: loaded, data parsed, rows in view drawn",
        fn: async () => {
          await page.goto(`file://${OUT}`);
          await page.waitForSelector("body[data-ready]", { timeout: 60_000 });
        },
      },
    ], 5);
  } finally {
    await browser.close();
  }
}

export async function run(): Promise<void> {
  if (!existsSync(BIN)) return void console.log(`\n(${BIN} is missing: run npm run build; the trace page benchmark is skipped)`);
  mkdirSync(DIR, { recursive: true });
  if (!existsSync(TRACE)) makeTrace();
  const bytes = statSync(TRACE).size;
  compareCommands(`conductor trace --html: ${MESSAGES} messages, ${(bytes / 1024 / 1024).toFixed(1)} MiB of trace`, [
    { name: "cat FILE (reading it, the floor)", cmd: "sh", args: ["-c", `cat '${TRACE}' >/dev/null`] },
    { name: "tendril conductor trace FILE (text diagram)", cmd: BIN, args: ["conductor", "trace", TRACE], options: { stdio: ["ignore", "ignore", "ignore"] } },
    { name: "tendril conductor trace FILE --html OUT", cmd: BIN, args: ["conductor", "trace", TRACE, "--html", OUT] },
  ], 7);
  await compareFns("the same in process (no start-up)", [
    { name: "read the file, JSON.parse each line (floor)", fn: () => void readFileSync(TRACE, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l)) },
    { name: "read strictly (trace-follow.ts)", fn: async () => void (await readWholeTrace(TRACE, DEFAULT_LIMITS.MAX_TRACE_LINE_BYTES)) },
    {
      name: "read, pair into steps, build the page",
      fn: async () => {
        const whole = await readWholeTrace(TRACE, DEFAULT_LIMITS.MAX_TRACE_LINE_BYTES);
        tracePage({ title: "trace.jsonl", components: whole.components, steps: stepsOf(whole.records) });
      },
    },
  ], 7);
  console.log(`  page size: ${(statSync(OUT).size / 1024 / 1024).toFixed(1)} MiB for ${(bytes / 1024 / 1024).toFixed(1)} MiB of trace`);
  await browserLoad();
}
