import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { classifyLine, INVALID_REQUEST, isJsonRpcError, isObject, paramsTextOf, PARSE_ERROR } from "./jsonrpc.ts";

test("requests, notifications and responses are told apart", () => {
  expect(classifyLine('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}')).toMatchObject({
    kind: "request",
    id: 1,
    method: "initialize",
  });
  expect(classifyLine('{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}')).toMatchObject({
    kind: "notification",
    method: "session/cancel",
  });
  expect(classifyLine('{"jsonrpc":"2.0","id":"a","result":{}}')).toMatchObject({ kind: "response", id: "a" });
  expect(classifyLine('{"jsonrpc":"2.0","id":0,"error":{"code":-1,"message":"x"}}')).toMatchObject({
    kind: "response",
    id: 0,
  });
});

test("unparseable JSON is a parse error with a null id", () => {
  const c = classifyLine('{"jsonrpc":"2.0","id":1,"method":');
  expect(c).toMatchObject({ kind: "malformed", id: null, error: { code: PARSE_ERROR } });
});

test("wrong jsonrpc version is an invalid request that keeps the id", () => {
  const c = classifyLine('{"jsonrpc":"1.0","id":7,"method":"initialize"}');
  expect(c).toMatchObject({ kind: "malformed", id: 7, error: { code: INVALID_REQUEST } });
  if (c.kind === "malformed") expect(c.error.message).toContain("jsonrpc");
});

test("neither method nor id, batches, scalars and bad ids are invalid requests", () => {
  for (const line of ['{"jsonrpc":"2.0"}', "[]", '[{"jsonrpc":"2.0","id":1,"method":"x"}]', "42", '"s"', "null",
    '{"jsonrpc":"2.0","id":{},"method":"x"}', '{"jsonrpc":"2.0","id":1,"method":5}',
    '{"jsonrpc":"2.0","id":1,"method":"x","params":3}', '{"jsonrpc":"2.0","id":1}']) {
    const c = classifyLine(line);
    expect(c.kind).toBe("malformed");
    if (c.kind === "malformed") expect(c.error.code).toBe(INVALID_REQUEST);
  }
});

test("paramsTextOf: a notification spelled as JSON.stringify spells it gives its params' text; any other spelling, none", () => {
  const m = { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { text: 'a "quoted" }' } } };
  const line = JSON.stringify(m);
  expect(paramsTextOf(line, m)).toBe(JSON.stringify(m.params));
  expect(JSON.parse(paramsTextOf(line, m)!)).toEqual(m.params);
  const spaced = '{ "jsonrpc": "2.0", "method": "session/update", "params": {} }';
  expect(paramsTextOf(spaced, JSON.parse(spaced))).toBeUndefined();
  const reordered = '{"method":"x","jsonrpc":"2.0","params":{}}';
  expect(paramsTextOf(reordered, JSON.parse(reordered))).toBeUndefined();
  const extra = '{"jsonrpc":"2.0","method":"x","params":{},"extra":1}';
  expect(paramsTextOf(extra, JSON.parse(extra))).toBeUndefined();
  const trailing = '{"jsonrpc":"2.0","method":"x","params":{}} ';
  expect(paramsTextOf(trailing, JSON.parse(trailing))).toBeUndefined();
  const noParams = '{"jsonrpc":"2.0","method":"x"}';
  expect(paramsTextOf(noParams, JSON.parse(noParams))).toBeUndefined();
  // a duplicate key after the params stays in the text, and parses to the same last-wins value
  const dup = '{"jsonrpc":"2.0","method":"x","params":{"a":1},"params":{"a":2}}';
  const parsed = JSON.parse(dup);
  const text = paramsTextOf(dup, parsed)!;
  expect(JSON.parse(`{"params":${text}}`).params).toEqual(parsed.params);
});

test("the one object guard: a JSON object is not null and not an array; an error object has a numeric code and a message", () => {
  expect([{}, { a: 1 }, [], null, "x", 1, undefined].map(isObject)).toEqual([true, true, false, false, false, false, false]);
  expect([{ code: 1, message: "m" }, { code: 1, message: "m", data: [1] }, { code: "1", message: "m" }, { code: 1 }, null].map(isJsonRpcError)).toEqual([true, true, false, false, false]);
});

test("one owner of the object guard and the ACP versions: no other module of cli/ or core/ writes its own", () => {
  const root = join(import.meta.dir, "..", "..");
  const own: string[] = [];
  for (const dir of ["cli", "core"]) {
    for (const e of readdirSync(join(root, dir), { recursive: true, withFileTypes: true })) {
      const rel = join(e.parentPath, e.name).slice(root.length + 1);
      if (!e.isFile() || !e.name.endsWith(".ts") || e.name.endsWith(".test.ts") || rel === join("core", "wire", "jsonrpc.ts")) continue;
      const text = readFileSync(join(root, rel), "utf8");
      if (/typeof (\w+(?:\.\w+)*) === "object" && \1 !== null/.test(text)) own.push(`${rel}: an object guard`);
      if (/export const ACP_V\w* =|protocolVersion === [12]\b|Version === [12]\b/.test(text)) own.push(`${rel}: an ACP version`);
    }
  }
  expect(own).toEqual([]);
});
