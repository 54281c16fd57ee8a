// MCP elicitation through the ACP surface, in memory (the real pool, the fake MCP server as a child):
// a client that advertised a mode gets the server's question as `elicitation/create` (tied to the
// session and the tool call) and its answer (accept with content, decline, cancel) reaches the
// server; an accepted URL question's completion is `elicitation/complete`; a mode the client did not
// advertise takes the permission fallback (a form, with or without fields) or is declined (a URL); a cancelled turn withdraws the question.
import { afterAll, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { loadLimits } from "../limits.ts";
import { createMcpPool } from "../mcp/pool.ts";
import { memoryAgent, type MemoryAgent } from "../../tests/memory-agent.ts";
import { FAKE_MCP_PATH, waitFor } from "../../tests/fake-mcp-helpers.ts";

const pool = createMcpPool({ limits: loadLimits({}), env: process.env });
afterAll(() => pool.closeAll());

let nextId = 1;
const req = (a: MemoryAgent, method: string, params: Record<string, unknown>) => {
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method, params });
  return { id, answer: a.response(id, 15_000) };
};
const fk = { name: "fk", command: process.execPath, args: [FAKE_MCP_PATH], env: [] };
/** The tool results the model saw by its last request, in order. */
const results = (a: MemoryAgent) =>
  (a.provider.requests.at(-1) ?? []).filter((m) => m.role === "tool").flatMap((m) => (m as { results: { content: string }[] }).results.map((x) => x.content));

async function session(elicitation: Record<string, unknown> | undefined): Promise<{ a: MemoryAgent; sessionId: string }> {
  const a = memoryAgent({ pool, mode: "yolo" });
  await req(a, "initialize", { protocolVersion: 1, clientCapabilities: elicitation ? { elicitation } : {} }).answer;
  const r = await req(a, "session/new", { cwd: tmpdir(), mcpServers: [fk] }).answer;
  return { a, sessionId: r.result.sessionId };
}

/** The agent's next request of `method` not yet answered (waits for it). */
async function asked(a: MemoryAgent, method: string, answered: Set<unknown>): Promise<Record<string, any>> {
  let found: Record<string, any> | undefined;
  await waitFor(() => (found = a.out.find((m) => m.method === method && m.id !== undefined && !answered.has(m.id))) !== undefined, 10_000);
  if (!found) throw new Error(`no ${method} request`);
  answered.add(found.id);
  return found;
}

test("form and URL questions go to a client that shows them as elicitation/create; its answers reach the server", async () => {
  const { a, sessionId } = await session({ form: {}, url: {} });
  a.provider.push(
    { calls: [{ id: "f1", name: "fk__confirm", input: { field: "name" } }] },
    { calls: [{ id: "f2", name: "fk__confirm", input: { field: "name" } }] },
    { calls: [{ id: "f3", name: "fk__confirm", input: {} }] },
    { calls: [{ id: "u1", name: "fk__confirm", input: { url: "https://example.test/login" } }] },
    { text: "done" },
  );
  const turn = req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "ask me" }] });
  const answered = new Set<unknown>();
  const form = await asked(a, "elicitation/create", answered);
  expect(form.params).toEqual({
    sessionId,
    toolCallId: "f1",
    mode: "form",
    message: "Proceed with the thing?",
    requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  });
  a.send({ jsonrpc: "2.0", id: form.id, result: { action: "accept", content: { name: "Ada", bogus: { nested: true } } } });
  a.send({ jsonrpc: "2.0", id: (await asked(a, "elicitation/create", answered)).id, result: { action: "decline" } });
  a.send({ jsonrpc: "2.0", id: (await asked(a, "elicitation/create", answered)).id, result: { action: "cancel" } });
  const url = await asked(a, "elicitation/create", answered);
  expect(url.params).toMatchObject({ sessionId, toolCallId: "u1", mode: "url", message: "Sign in, please", url: "https://example.test/login" });
  expect(typeof url.params.elicitationId).toBe("string");
  a.send({ jsonrpc: "2.0", id: url.id, result: { action: "accept" } });
  expect((await turn.answer).result.stopReason).toBe("end_turn");
  // what the server answered with is what the user said (content the form cannot carry dropped)
  expect(results(a)).toEqual(['answered accept {"name":"Ada"}', "answered decline", "answered cancel", "answered accept"]);
  // the server said the URL interaction completed: the client hears it under the id it was given
  expect(await waitFor(() => a.out.some((m) => m.method === "elicitation/complete"), 5000)).toBe(true);
  expect(a.out.find((m) => m.method === "elicitation/complete")!.params).toEqual({ elicitationId: url.params.elicitationId });
  expect(a.out.some((m) => m.method === "session/request_permission")).toBe(false);
  await a.close();
});

test("without the capability: a form (with or without fields) becomes a permission question naming the server's message; a URL is declined unasked", async () => {
  const { a, sessionId } = await session(undefined);
  a.provider.push(
    { calls: [{ id: "q1", name: "fk__confirm", input: {} }] },
    { calls: [{ id: "q2", name: "fk__confirm", input: { field: "name" } }] },
    { calls: [{ id: "q3", name: "fk__confirm", input: { field: "city", default: "Oslo" } }] },
    { calls: [{ id: "q4", name: "fk__confirm", input: { url: "https://example.test/login" } }] },
    { text: "done" },
  );
  const turn = req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "ask me" }] });
  const answered = new Set<unknown>();
  const plain = await asked(a, "session/request_permission", answered);
  expect(plain.params.toolCall.title).toBe("fk__confirm asks: Proceed with the thing?");
  a.send({ jsonrpc: "2.0", id: plain.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
  const form = await asked(a, "session/request_permission", answered);
  expect(form.params.toolCall.title).toBe("fk__confirm asks: Proceed with the thing? (form fields: name)");
  expect(form.params.toolCall.toolCallId).toBe("q2");
  a.send({ jsonrpc: "2.0", id: form.id, result: { outcome: { outcome: "selected", optionId: "reject_once" } } });
  const withDefault = await asked(a, "session/request_permission", answered);
  expect(withDefault.params.toolCall.title).toBe("fk__confirm asks: Proceed with the thing? (form fields: city)");
  a.send({ jsonrpc: "2.0", id: withDefault.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
  expect((await turn.answer).result.stopReason).toBe("end_turn");
  // accepted with the form's own default; the URL nobody can visit is declined without a question
  expect(results(a)).toEqual(["answered accept", "answered decline", 'answered accept {"city":"Oslo"}', "answered decline"]);
  expect(a.out.filter((m) => m.method === "session/request_permission").length).toBe(3);
  expect(a.out.some((m) => m.method === "elicitation/create")).toBe(false);
  await a.close();
});

test("a client that shows forms only: forms go to it, a URL question is declined unasked", async () => {
  const { a, sessionId } = await session({ form: {} });
  a.provider.push(
    { calls: [{ id: "u1", name: "fk__confirm", input: { url: "https://example.test/login" } }] },
    { calls: [{ id: "f1", name: "fk__confirm", input: { field: "city" } }] },
    { text: "done" },
  );
  const turn = req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "ask me" }] });
  const form = await asked(a, "elicitation/create", new Set());
  expect(form.params.mode).toBe("form");
  a.send({ jsonrpc: "2.0", id: form.id, result: { action: "accept", content: { city: "Oslo" } } });
  expect((await turn.answer).result.stopReason).toBe("end_turn");
  expect(results(a)).toEqual(["answered decline", 'answered accept {"city":"Oslo"}']);
  expect(a.out.filter((m) => m.method === "elicitation/create").length).toBe(1);
  await a.close();
});

test("session/cancel while a question is open withdraws it ($/cancel_request) and the prompt answers cancelled; the session goes on", async () => {
  const { a, sessionId } = await session({ form: {} });
  a.provider.push({ calls: [{ id: "f1", name: "fk__confirm", input: { field: "name" } }] });
  const turn = req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "ask me" }] });
  const form = await asked(a, "elicitation/create", new Set());
  a.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
  expect((await turn.answer).result.stopReason).toBe("cancelled");
  expect(a.out.some((m) => m.method === "$/cancel_request" && m.params.requestId === form.id)).toBe(true);
  // a late answer to the withdrawn question changes nothing
  a.send({ jsonrpc: "2.0", id: form.id, result: { action: "accept", content: { name: "late" } } });
  a.provider.push({ text: "still here" });
  expect((await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: "hello?" }] }).answer).result.stopReason).toBe("end_turn");
  await a.close();
});
