import { expect, test } from "bun:test";
import { turnEnd } from "./v2-turn-end.ts";

test("a v2 turn ends with its session's state_update to idle, and with nothing else", () => {
  const idle = { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" };
  expect(turnEnd(idle)).toBe(idle);
  expect(turnEnd({ sessionUpdate: "state_update", state: "running" })).toBeUndefined();
  expect(turnEnd({ sessionUpdate: "agent_message", state: "idle" })).toBeUndefined();
  expect(turnEnd(null)).toBeUndefined();
  expect(turnEnd("idle")).toBeUndefined();
});
