import { expect, test } from "bun:test";
import { TurnCounter, type SessionUpdate } from "./client-runner.ts";
import { SettingError, settingRequests } from "./session-open.ts";

const tendrilLike = {
  sessionId: "s1",
  modes: { currentModeId: "default", availableModes: [{ id: "default", name: "Default" }, { id: "plan", name: "Plan" }] },
  configOptions: [
    { id: "mode", name: "Mode", category: "mode", type: "select", currentValue: "default", options: [{ value: "default", name: "Default" }, { value: "plan", name: "Plan" }] },
    { id: "model", name: "Model", category: "model", type: "select", currentValue: "a", options: [{ group: "g", name: "G", options: [{ value: "a", name: "A" }, { value: "b", name: "B" }] }] },
  ],
};

test("--mode/--model use the config option of that category when the agent lists one", () => {
  expect(settingRequests("s1", tendrilLike, { mode: "plan", model: "b" })).toEqual([
    { method: "session/set_config_option", params: { sessionId: "s1", configId: "mode", value: "plan" } },
    { method: "session/set_config_option", params: { sessionId: "s1", configId: "model", value: "b" } },
  ]);
  expect(settingRequests("s1", tendrilLike, {})).toEqual([]);
});

test("without config options: session/set_mode and the older session/set_model", () => {
  const old = { modes: tendrilLike.modes, models: { currentModelId: "x", availableModels: [{ modelId: "x", name: "X" }, { modelId: "y", name: "Y" }] } };
  expect(settingRequests("s1", old, { mode: "plan", model: "y" })).toEqual([
    { method: "session/set_mode", params: { sessionId: "s1", modeId: "plan" } },
    { method: "session/set_model", params: { sessionId: "s1", modelId: "y" } },
  ]);
});

test("an id the agent does not list names the choices; no such setting says so", () => {
  expect(() => settingRequests("s1", tendrilLike, { model: "c" })).toThrow(new SettingError('--model "c" is not offered by the agent; it offers: a, b'));
  expect(() => settingRequests("s1", { sessionId: "s1" }, { mode: "plan" })).toThrow("--mode: the agent offers no session modes");
  expect(() => settingRequests("s1", { sessionId: "s1" }, { model: "m" })).toThrow("--model: the agent offers no model choice");
});

const text = (t: string, messageId?: string): SessionUpdate => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: t }, ...(messageId ? { messageId } : {}) });

test("turns: a new turn after a finished tool call, or a new messageId; chunks of one message are one turn", () => {
  const c = new TurnCounter();
  c.see({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hm" } });
  c.see(text("Let me"));
  c.see(text(" look."));
  c.see({ sessionUpdate: "tool_call", toolCallId: "t1", title: "ls" });
  expect(c.turns).toBe(1);
  c.see({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed" });
  expect(c.turns).toBe(1);
  c.see(text("Done"));
  expect(c.turns).toBe(2);
  c.see(text("a", "m1"));
  c.see(text("b", "m1"));
  expect(c.turns).toBe(2);
  c.see(text("c", "m2"));
  expect(c.turns).toBe(3);
});

test("turns: the first update after another prompt (an --output-schema retry) begins a turn", () => {
  const c = new TurnCounter();
  c.nextPrompt();
  c.see(text("{}"));
  expect(c.turns).toBe(1);
  c.nextPrompt();
  c.see(text("{\"a\": 1}"));
  c.see(text(" "));
  expect(c.turns).toBe(2);
});
