// Owns the fault-injecting fake MCP stdio server every test uses (`bun tests/fake-mcp.ts`): raw ND-JSON
// JSON-RPC so a test can make it hang, crash, spam, or misbehave exactly where it wants. Behaviour is
// set by FAKE_MCP_* env variables (listed in ENV below). Not a product module; never shipped.
import { appendFileSync, readFileSync } from "node:fs";
import { spawn } from "node:child_process";

const env = process.env;
const ENV = {
  name: env.FAKE_MCP_NAME ?? "fake-mcp",
  hang: env.FAKE_MCP_HANG ?? "", // "initialize" | "tools/list": never answer that method
  toolCount: Number(env.FAKE_MCP_TOOLS ?? 0), // extra tools t0..tN-1
  descBytes: Number(env.FAKE_MCP_DESC_BYTES ?? 0), // description size of every tool (0 = short text)
  toolDelayMs: Number(env.FAKE_MCP_TOOL_DELAY_MS ?? 0), // delay before answering any tools/call
  resultBytes: Number(env.FAKE_MCP_RESULT_BYTES ?? 0), // size of echo's result text (0 = echo the input)
  pidFile: env.FAKE_MCP_PID_FILE, // appends own pid there (one line per start: restarts are countable)
  maxStarts: Number(env.FAKE_MCP_MAX_STARTS ?? 0), // with PID_FILE: once it holds N pids, crash at start (exit 1)
  initDelayMs: Number(env.FAKE_MCP_INIT_DELAY_MS ?? 0), // delay before answering initialize
  grandchild: env.FAKE_MCP_GRANDCHILD, // spawns a SIGTERM-ignoring `sleep 300`, writes its pid there
  stop: env.FAKE_MCP_STOP, // defined → `_Stop` hook tool returning that text
  postCompact: env.FAKE_MCP_POSTCOMPACT, // defined → `_PostCompact` hook tool returning that text
  cancelLog: env.FAKE_MCP_CANCEL_LOG, // appends `cancelled <requestId>` per notifications/cancelled
  initLog: env.FAKE_MCP_INIT_LOG, // appends `asked <pid>` when initialize arrives, `answered <pid>` when answered
  initBarrier: Number(env.FAKE_MCP_INIT_BARRIER ?? 0), // with INIT_LOG: answer initialize once N servers were asked (at most 10 s)
  exitAfter: Number(env.FAKE_MCP_EXIT_AFTER ?? 0), // exits right after answering the Nth tools/call
  stdoutNoise: env.FAKE_MCP_STDOUT_NOISE === "1", // prints a non-JSON line before anything else
  instructions: env.FAKE_MCP_INSTRUCTIONS, // `instructions` of the initialize result
  pageSize: Number(env.FAKE_MCP_PAGE_SIZE ?? 0), // >0 → tools/list is paginated with nextCursor
  extraTools: (env.FAKE_MCP_EXTRA_TOOLS ?? "").split(",").filter((s) => s !== ""), // echo-like tools by name
  bigSchemaBytes: Number(env.FAKE_MCP_BIG_SCHEMA_BYTES ?? 0), // >0 → tool `big_schema` with a schema that size
  listChanged: env.FAKE_MCP_LIST_CHANGED === "1", // tool `grow` adds a tool and sends list_changed
  progress: env.FAKE_MCP_PROGRESS === "1", // tools/call with a progress token gets two progress notifications first
  prompts: env.FAKE_MCP_PROMPTS === "1", // prompts (PROMPTS below) and tool `add_prompt` (adds one, sends prompts list_changed)
};

type Json = Record<string, unknown>;
interface FakeTool {
  def: Json;
  run: (args: Json, id: string | number) => Promise<Json | null>; // null = answer nothing (cancelled)
}

const text = (t: string, isError = false): Json => ({ content: [{ type: "text", text: t }], isError });
const objectSchema = (props: Record<string, string>): Json => ({
  type: "object",
  properties: Object.fromEntries(Object.entries(props).map(([k, t]) => [k, { type: t }])),
});
function descriptionOf(base: string): string {
  if (ENV.descBytes <= 0) return base;
  return (base + " " + "d".repeat(ENV.descBytes)).slice(0, ENV.descBytes);
}

const cancelled = new Map<string | number, () => void>();
let grown = 0;

function sleepCancellable(ms: number, id: string | number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      cancelled.delete(id);
      resolve(true);
    }, ms);
    cancelled.set(id, () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}

function buildTools(): Map<string, FakeTool> {
  const tools = new Map<string, FakeTool>();
  const add = (name: string, def: Json, run: FakeTool["run"]) =>
    tools.set(name, { def: { name, description: descriptionOf(`${name} tool`), ...def }, run });
  const echo: FakeTool["run"] = async (a) => text(ENV.resultBytes > 0 ? "x".repeat(ENV.resultBytes) : String(a.text ?? ""));
  add("echo", { inputSchema: objectSchema({ text: "string" }) }, echo);
  add("sleep", { inputSchema: objectSchema({ ms: "number" }) }, async (a, id) =>
    (await sleepCancellable(Number(a.ms ?? 0), id)) ? text(`slept ${a.ms} ms`) : null,
  );
  add("fail", { inputSchema: objectSchema({ message: "string" }) }, async (a) => text(String(a.message ?? "failed"), true));
  // Asks its client a question (elicitation/create) and answers with the action taken (and any form
  // content); `field` makes it a form with that required field (`default` its stated default), `url` a URL-mode question.
  add("confirm", { inputSchema: objectSchema({ field: "string", default: "string", url: "string" }) }, async (a) => {
    const property = { type: "string", ...(a.default !== undefined ? { default: String(a.default) } : {}) };
    const requestedSchema = a.field ? { type: "object", properties: { [String(a.field)]: property }, required: [String(a.field)] } : { type: "object", properties: {} };
    const params = a.url
      ? { mode: "url", message: "Sign in, please", url: String(a.url), elicitationId: "el-1" }
      : { message: "Proceed with the thing?", requestedSchema };
    const r = (await askClient("elicitation/create", params)) as { action?: string; content?: unknown; code?: number; message?: string };
    if (r?.action === undefined) return text(`elicitation failed: ${r?.message ?? JSON.stringify(r)}`, true);
    // a URL question the user accepted: the server says when the interaction is over
    if (a.url && r.action === "accept") send({ jsonrpc: "2.0", method: "notifications/elicitation/complete", params: { elicitationId: "el-1" } });
    return text(`answered ${r.action}${r.content && Object.keys(r.content).length ? ` ${JSON.stringify(r.content)}` : ""}`);
  });
  // Asks the client for its roots (roots/list) and answers with what it said.
  add("roots", { inputSchema: objectSchema({}) }, async () => text(JSON.stringify(await askClient("roots/list", {}))));
  add("read", { inputSchema: objectSchema({ path: "string" }), annotations: { readOnlyHint: true } }, async (a) => {
    try {
      return text(readFileSync(String(a.path), "utf8"));
    } catch (err) {
      return text(`cannot read ${a.path}: ${(err as Error).message}`, true);
    }
  });
  for (let i = 0; i < ENV.toolCount; i++) add(`t${i}`, { inputSchema: objectSchema({}) }, async () => text(`t${i} ran`));
  for (const name of ENV.extraTools) add(name, { inputSchema: objectSchema({ text: "string" }) }, echo);
  if (ENV.bigSchemaBytes > 0) {
    const pad = { type: "string", description: "s".repeat(ENV.bigSchemaBytes) };
    add("big_schema", { inputSchema: { type: "object", properties: { pad } } }, async () => text("big"));
  }
  if (ENV.stop !== undefined) add("_Stop", { inputSchema: objectSchema({}) }, async () => text(ENV.stop ?? ""));
  if (ENV.postCompact !== undefined) {
    add("_PostCompact", { inputSchema: objectSchema({}) }, async () => text(ENV.postCompact ?? ""));
  }
  if (ENV.listChanged) {
    add("grow", { inputSchema: objectSchema({}) }, async () => {
      const name = `grown${grown++}`;
      add(name, { inputSchema: objectSchema({}) }, async () => text(`${name} ran`));
      send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
      return text(`added ${name}`);
    });
  }
  if (ENV.prompts) {
    add("add_prompt", { inputSchema: objectSchema({ name: "string" }) }, async (a) => {
      PROMPTS.set(String(a.name), { def: { name: String(a.name), description: "added later" }, get: () => [user(`the ${a.name} prompt`)] });
      send({ jsonrpc: "2.0", method: "notifications/prompts/list_changed" });
      return text(`added prompt ${a.name}`);
    });
  }
  return tools;
}

interface FakePrompt {
  def: Json;
  get: (args: Record<string, string>) => Json[]; // throws → a JSON-RPC error
}
const user = (t: string): Json => ({ role: "user", content: { type: "text", text: t } });
/** With FAKE_MCP_PROMPTS=1: `review <file> [focus]`, `summarize <text>`, `hello` (no arguments, two
 *  messages, one the assistant's), `broken` (prompts/get fails). */
const PROMPTS = new Map<string, FakePrompt>([
  ["review", {
    def: { name: "review", description: "Review one file", arguments: [{ name: "file", description: "the file", required: true }, { name: "focus", required: false }] },
    get: (a) => [user(`Review ${a.file}${a.focus ? ` focusing on ${a.focus}` : ""}.`)],
  }],
  ["summarize", { def: { name: "summarize", title: "Summarize", arguments: [{ name: "text", required: true }] }, get: (a) => [user(`Summarize: ${a.text}`)] }],
  ["hello", { def: { name: "hello", description: "Say hello" }, get: () => [user("Say hello."), { role: "assistant", content: { type: "text", text: "Hello!" } }] }],
  ["broken", { def: { name: "broken", description: "Always fails" }, get: () => { throw new Error("this prompt is broken"); } }],
]);

function getPrompt(id: string | number, params: Json): void {
  const prompt = PROMPTS.get(String(params.name));
  if (!prompt) return send({ jsonrpc: "2.0", id, error: { code: -32602, message: `Unknown prompt: ${params.name}` } });
  try {
    send({ jsonrpc: "2.0", id, result: { messages: prompt.get((params.arguments as Record<string, string>) ?? {}) } });
  } catch (err) {
    send({ jsonrpc: "2.0", id, error: { code: -32603, message: (err as Error).message } });
  }
}

const tools = buildTools();
let callsAnswered = 0;

function send(message: Json, then?: () => void): void {
  process.stdout.write(JSON.stringify(message) + "\n", () => then?.());
}

function listTools(params: Json): Json {
  const all = [...tools.values()].map((t) => t.def);
  if (ENV.pageSize <= 0) return { tools: all };
  const start = Number(params.cursor ?? 0);
  const end = start + ENV.pageSize;
  return { tools: all.slice(start, end), ...(end < all.length ? { nextCursor: String(end) } : {}) };
}

async function callTool(id: string | number, params: Json): Promise<void> {
  const tool = tools.get(String(params.name));
  const token = (params._meta as Json | undefined)?.progressToken;
  if (ENV.progress && token !== undefined) {
    send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: 1, total: 2, message: "halfway" } });
    await new Promise((r) => setTimeout(r, 150));
    send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: 2, total: 2, message: "done" } });
  }
  if (ENV.toolDelayMs > 0 && !(await sleepCancellable(ENV.toolDelayMs, id))) return;
  const result = tool ? await tool.run((params.arguments as Json) ?? {}, id) : text(`Tool ${params.name} not found`, true);
  if (result === null) return;
  callsAnswered++;
  const exit = ENV.exitAfter > 0 && callsAnswered >= ENV.exitAfter;
  send({ jsonrpc: "2.0", id, result }, exit ? () => process.exit(3) : undefined);
}

const asked = new Map<string, (result: unknown) => void>();
let askedCount = 0;

/** A request from this server to the client; resolves with the client's result (or its error). */
function askClient(method: string, params: Json): Promise<unknown> {
  const id = `srv-${++askedCount}`;
  return new Promise((resolve) => {
    asked.set(id, resolve);
    send({ jsonrpc: "2.0", id, method, params });
  });
}

function handle(msg: Json): void {
  const id = msg.id as string | number | undefined;
  const method = String(msg.method ?? "");
  if (method === "" && typeof id === "string" && asked.has(id)) {
    asked.get(id)!(msg.result ?? msg.error);
    asked.delete(id);
    return;
  }
  const params = (msg.params as Json) ?? {};
  if (method === "notifications/cancelled") {
    if (ENV.cancelLog) appendFileSync(ENV.cancelLog, `cancelled ${String(params.requestId)}\n`);
    cancelled.get(params.requestId as string | number)?.();
    return;
  }
  if (id === undefined || method === "" || ENV.hang === method) return;
  if (method === "initialize") {
    if (ENV.initLog) appendFileSync(ENV.initLog, `asked ${process.pid}\n`);
    const answer = () => {
      if (ENV.initLog) appendFileSync(ENV.initLog, `answered ${process.pid}\n`);
      answerInitialize(id, params);
    };
    if (ENV.initBarrier > 0 && ENV.initLog) {
      const until = Date.now() + 10_000;
      const asked = () => readFileSync(ENV.initLog!, "utf8").split("\n").filter((l) => l.startsWith("asked ")).length;
      const wait = () => (asked() >= ENV.initBarrier || Date.now() > until ? answer() : setTimeout(wait, 10));
      wait();
    } else if (ENV.initDelayMs > 0) setTimeout(answer, ENV.initDelayMs);
    else answer();
  } else if (method === "tools/list") send({ jsonrpc: "2.0", id, result: listTools(params) });
  else if (method === "tools/call") void callTool(id, params);
  else if (method === "ping") send({ jsonrpc: "2.0", id, result: {} });
  else if (method === "prompts/list" && ENV.prompts) send({ jsonrpc: "2.0", id, result: { prompts: [...PROMPTS.values()].map((p) => p.def) } });
  else if (method === "prompts/get" && ENV.prompts) getPrompt(id, params);
  else send({ jsonrpc: "2.0", id, error: { code: -32601, message: `Method not found: ${method}` } });
}

function answerInitialize(id: string | number, params: Json): void {
  send({
    jsonrpc: "2.0",
    id,
    result: {
      protocolVersion: String(params.protocolVersion ?? "2025-06-18"),
      capabilities: { tools: { listChanged: true }, ...(ENV.prompts ? { prompts: { listChanged: true } } : {}) },
      serverInfo: { name: ENV.name, version: "0.0.1" },
      ...(ENV.instructions !== undefined ? { instructions: ENV.instructions } : {}),
    },
  });
}

function countLines(file: string): number {
  try {
    return readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").length;
  } catch {
    return 0;
  }
}

function startGrandchild(file: string): void {
  // Same process group as this server (not detached), ignores SIGTERM: only a group SIGKILL ends it.
  const script = `trap "" TERM; echo $$ > ${JSON.stringify(file)}; exec sleep 300`;
  const child = spawn("bash", ["-c", script], { stdio: ["ignore", "inherit", "inherit"] });
  child.unref();
}

if (ENV.pidFile) {
  if (ENV.maxStarts > 0 && countLines(ENV.pidFile) >= ENV.maxStarts) {
    process.stderr.write(`fake-mcp: refusing to start again (FAKE_MCP_MAX_STARTS=${ENV.maxStarts})\n`);
    process.exit(1);
  }
  appendFileSync(ENV.pidFile, `${process.pid}\n`);
}
if (ENV.grandchild) startGrandchild(ENV.grandchild);
if (ENV.stdoutNoise) process.stdout.write("fake-mcp: this line is not JSON\n");

let buffered = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  buffered += chunk;
  let nl: number;
  while ((nl = buffered.indexOf("\n")) !== -1) {
    const line = buffered.slice(0, nl).trim();
    buffered = buffered.slice(nl + 1);
    if (line === "") continue;
    try {
      handle(JSON.parse(line) as Json);
    } catch (err) {
      process.stderr.write(`fake-mcp: bad line: ${(err as Error).message}\n`);
    }
  }
});
process.stdin.on("end", () => process.exit(0));
