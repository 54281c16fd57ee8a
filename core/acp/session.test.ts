// Sessions and the turn in memory: the real ACP surface over a stream, a scripted provider and
// stand-in tools (tests/memory-agent.ts). Milliseconds, no processes.
import { expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { memoryAgent } from "../../tests/memory-agent.ts";

const newSession = (id: number) => ({ jsonrpc: "2.0", id, method: "session/new", params: { cwd: tmpdir(), mcpServers: [] } });
const prompt = (id: number, sessionId: string, text: string) => ({
  jsonrpc: "2.0",
  id,
  method: "session/prompt",
  params: { sessionId, prompt: [{ type: "text", text }] },
});

async function started(a: ReturnType<typeof memoryAgent>): Promise<string> {
  a.send(newSession(1));
  return (await a.response(1)).result.sessionId;
}

test("a second prompt on a busy session is refused with -32602 naming the way out", async () => {
  const a = memoryAgent();
  a.provider.push({ hang: true });
  const id = await started(a);
  a.send(prompt(2, id, "one"));
  a.send(prompt(3, id, "two"));
  const second = await a.response(3);
  expect(second.error.code).toBe(-32602);
  expect(second.error.message).toContain("busy");
  a.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: id } });
  expect((await a.response(2)).result.stopReason).toBe("cancelled");
  await a.close();
});

test("cancel mid-tool: the prompt answers cancelled, the call is failed, and the next prompt continues cleanly", async () => {
  const a = memoryAgent();
  a.provider.push({ calls: [{ id: "s1", name: "t__sleep", input: { ms: 10_000 } }] }, { text: "next" });
  const id = await started(a);
  a.send(prompt(2, id, "sleep"));
  const t0 = Date.now();
  await a.until(() => a.out.some((m) => m.params?.update?.status === "in_progress"), "in_progress tool call", 2000);
  a.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: id } });
  expect((await a.response(2)).result.stopReason).toBe("cancelled");
  expect(Date.now() - t0).toBeLessThan(2500);
  const finals = a.out.filter((m) => m.params?.update?.toolCallId === "s1" && m.params.update.status === "failed");
  expect(finals.length).toBe(1);
  a.send(prompt(3, id, "again"));
  expect((await a.response(3)).result.stopReason).toBe("end_turn");
  // History stayed valid: the cancelled call has its result before the next user message.
  const history = a.provider.requests[1]!;
  expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"]);
  await a.close();
});

test("every update of a turn is on the wire before the turn's response", async () => {
  const a = memoryAgent();
  a.provider.push({ text: "a", calls: [{ id: "e1", name: "t__echo", input: { text: "x" } }] }, { text: "done" });
  const id = await started(a);
  a.send(prompt(2, id, "go"));
  await a.response(2);
  const at = a.out.findIndex((m) => m.id === 2);
  const updates = a.out.map((m, i) => [m.method, i] as const).filter(([m]) => m === "session/update");
  expect(updates.length).toBeGreaterThan(3);
  expect(updates.every(([, i]) => i < at)).toBe(true);
  await a.close();
});

test("the prompt answer carries the turn's token totals; usage_update follows each LLM response", async () => {
  const a = memoryAgent();
  a.provider.push({ calls: [{ id: "e1", name: "t__echo", input: { text: "x" } }] }, { text: "done" });
  const id = await started(a);
  a.send(prompt(2, id, "go"));
  const r = await a.response(2);
  // The scripted provider reports 10 in + 5 out per response; two responses.
  expect(r.result.usage).toEqual({ totalTokens: 30, inputTokens: 20, outputTokens: 10, cachedReadTokens: 0, cachedWriteTokens: 0 });
  const usage = a.out.filter((m) => m.params?.update?.sessionUpdate === "usage_update").map((m) => m.params.update);
  expect(usage).toEqual([
    { sessionUpdate: "usage_update", used: 15, size: 100_000 },
    { sessionUpdate: "usage_update", used: 15, size: 100_000 },
  ]);
  await a.close();
});

test("model choice: advertised as a config option and the older models state; both set methods switch the next request's model", async () => {
  const a = memoryAgent({ models: ["m", "m-large"] });
  a.send(newSession(1));
  const created = (await a.response(1)).result;
  const modelOption = (r: any) => r.configOptions.find((o: any) => o.id === "model");
  expect(modelOption(created)).toMatchObject({ id: "model", category: "model", type: "select", currentValue: "m" });
  expect(modelOption(created).options.map((o: any) => o.value)).toEqual(["m", "m-large"]);
  expect(created.models).toEqual({ currentModelId: "m", availableModels: [{ modelId: "m", name: "m" }, { modelId: "m-large", name: "m-large" }] });
  const id = created.sessionId;
  a.send({ jsonrpc: "2.0", id: 2, method: "session/set_config_option", params: { sessionId: id, configId: "model", value: "m-large" } });
  expect(modelOption((await a.response(2)).result).currentValue).toBe("m-large");
  a.send({ jsonrpc: "2.0", id: 3, method: "session/set_config_option", params: { sessionId: id, configId: "model", value: "gpt-9" } });
  const bad = await a.response(3);
  expect(bad.error.code).toBe(-32602);
  expect(bad.error.message).toContain("choose one of: m, m-large");
  const seen: string[] = [];
  const provider = a.provider;
  const inner = provider.stream.bind(provider);
  provider.stream = (req) => (seen.push(req.model), inner(req));
  provider.push({ text: "big" }, { text: "small" });
  a.send(prompt(4, id, "one"));
  await a.response(4);
  a.send({ jsonrpc: "2.0", id: 5, method: "session/set_model", params: { sessionId: id, modelId: "m" } });
  expect((await a.response(5)).result).toEqual({});
  a.send(prompt(6, id, "two"));
  await a.response(6);
  expect(seen).toEqual(["m-large", "m"]);
  await a.close();
});

test("the mode is a config option too; whichever path changes the mode or the model, current_mode_update and config_option_update tell the client before the answer", async () => {
  const a = memoryAgent({ models: ["m", "m-large"] });
  a.send(newSession(1));
  const created = (await a.response(1)).result;
  expect(created.configOptions.map((o: any) => [o.id, o.category, o.currentValue])).toEqual([["mode", "mode", "yolo"], ["model", "model", "m"]]);
  expect(created.configOptions[0].options.map((o: any) => o.value)).toEqual(created.modes.availableModes.map((m: any) => m.id));
  const id = created.sessionId;
  const pushedBefore = (answerId: number) => {
    const at = a.out.findIndex((m) => m.id === answerId);
    return a.out.slice(0, at).filter((m) => m.method === "session/update" && m.params.update.sessionUpdate !== "available_commands_update").map((m) => m.params.update);
  };
  a.send({ jsonrpc: "2.0", id: 2, method: "session/set_config_option", params: { sessionId: id, configId: "mode", value: "read-only" } });
  expect((await a.response(2)).result.configOptions[0].currentValue).toBe("read-only");
  expect(pushedBefore(2).map((u: any) => u.sessionUpdate)).toEqual(["current_mode_update", "config_option_update"]);
  expect(pushedBefore(2)[0].currentModeId).toBe("read-only");
  a.send({ jsonrpc: "2.0", id: 3, method: "session/set_mode", params: { sessionId: id, modeId: "ask" } });
  await a.response(3);
  const viaSetMode = pushedBefore(3).slice(2);
  expect(viaSetMode[0]).toEqual({ sessionUpdate: "current_mode_update", currentModeId: "ask" });
  expect(viaSetMode[1].configOptions[0].currentValue).toBe("ask");
  a.send({ jsonrpc: "2.0", id: 4, method: "session/set_config_option", params: { sessionId: id, configId: "model", value: "m-large" } });
  await a.response(4);
  const viaModel = pushedBefore(4).slice(4);
  expect(viaModel.map((u: any) => u.sessionUpdate)).toEqual(["config_option_update"]);
  expect(viaModel[0].configOptions[1].currentValue).toBe("m-large");
  // bad values are refused and nothing is pushed
  const before = a.out.length;
  a.send({ jsonrpc: "2.0", id: 5, method: "session/set_config_option", params: { sessionId: id, configId: "mode", value: true } });
  expect((await a.response(5)).error.code).toBe(-32602);
  a.send({ jsonrpc: "2.0", id: 6, method: "session/set_config_option", params: { sessionId: id, configId: "colour", value: "red" } });
  const unknown = await a.response(6);
  expect(unknown.error.message).toContain("options: mode, model");
  expect(a.out.slice(before).filter((m) => m.method === "session/update")).toEqual([]);
  await a.close();
});

test("v1 session/close during a turn: the turn is cancelled and its answer (cancelled) comes before the close's, as on v2", async () => {
  const a = memoryAgent();
  // A request that takes a moment to wind down once cancelled (a provider's stream closing).
  let requested = 0;
  a.provider.stream = async function* (r) {
    requested++;
    await new Promise<void>((resolve) => r.signal.addEventListener("abort", () => setTimeout(resolve, 200), { once: true }));
    yield { type: "error", error: { kind: "aborted", message: "aborted" } };
  };
  const id = await started(a);
  a.send(prompt(2, id, "one"));
  await a.until(() => requested === 1, "the request");
  a.send({ jsonrpc: "2.0", id: 3, method: "session/close", params: { sessionId: id } });
  expect((await a.response(3)).result).toEqual({});
  const answered = (n: number) => a.out.findIndex((m) => m.id === n && ("result" in m || "error" in m));
  expect(answered(2)).toBeGreaterThanOrEqual(0);
  expect(a.out[answered(2)]!.result.stopReason).toBe("cancelled");
  expect(answered(2)).toBeLessThan(answered(3));
  await a.close();
});
