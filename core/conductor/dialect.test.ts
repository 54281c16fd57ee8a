import { expect, test } from "bun:test";
import { dialectOfInitialize, initializeAnswerFor, initializeFor, unwrapSuccessor, wrappedNotificationLine, wrapSuccessor } from "./dialect.ts";

test("each dialect's successor wrapper unwraps to what was wrapped, _meta as each spells it", () => {
  const inner = { method: "session/prompt", params: { sessionId: "s" }, meta: { trace: 1 } };
  for (const d of ["proxy", "underscore"] as const) {
    const w = wrapSuccessor(d, inner, true);
    expect(unwrapSuccessor(w.method, w.params)).toEqual({ dialect: d, inner });
  }
  expect(wrapSuccessor("underscore", inner, true).params.meta).toEqual({ trace: 1 });
  expect(wrapSuccessor("sacp", inner, true).method).toBe("_proxy/successor/request");
  expect(wrapSuccessor("sacp", inner, false).method).toBe("_proxy/successor/notification");
  expect(unwrapSuccessor("_proxy/successor/notification", { method: "x" })?.dialect).toBe("sacp");
  expect(unwrapSuccessor("session/update", { method: "x" })).toBeUndefined();
  expect(unwrapSuccessor("proxy/successor", { params: {} })).toBeUndefined();
});

test("initialize in each dialect, and the hop-local sacp marker", () => {
  expect(initializeFor("proxy", { protocolVersion: 1 })).toEqual({ method: "proxy/initialize", params: { protocolVersion: 1 } });
  expect(initializeFor("underscore", { protocolVersion: 1 }).method).toBe("_proxy/initialize");
  const sacp = initializeFor("sacp", { protocolVersion: 1, _meta: { a: 1 } });
  expect(sacp).toEqual({ method: "initialize", params: { protocolVersion: 1, _meta: { a: 1, proxy: true } } });
  expect(dialectOfInitialize(sacp.method, sacp.params)).toBe("sacp");
  expect(initializeFor(undefined, sacp.params)).toEqual({ method: "initialize", params: { protocolVersion: 1, _meta: { a: 1 } } });
  expect(initializeFor(undefined, { _meta: { proxy: true } }).params).toEqual({});
  expect(initializeAnswerFor("sacp", { protocolVersion: 1 })).toEqual({ protocolVersion: 1, _meta: { proxy: true } });
  expect(initializeAnswerFor("proxy", { protocolVersion: 1, _meta: { proxy: true } })).toEqual({ protocolVersion: 1 });
});

test("a notification's wrapper line built around its params' text is exactly the wrapper serialized, in each dialect", () => {
  const inner = { method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "é \" }" } } } };
  for (const dialect of ["proxy", "underscore", "sacp"] as const) {
    const w = wrapSuccessor(dialect, inner, false);
    expect(wrappedNotificationLine(dialect, inner, JSON.stringify(inner.params))).toBe(JSON.stringify({ jsonrpc: "2.0", method: w.method, params: w.params }));
  }
  // hop-local metadata is serialized with the wrapper, not spliced
  expect(wrappedNotificationLine("proxy", { ...inner, meta: { a: 1 } }, "{}")).toBeUndefined();
});
