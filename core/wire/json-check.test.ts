import { expect, test } from "bun:test";
import { jsonValueEnd } from "./json-check.ts";
import { classifyLine, classifyRelayedNotification } from "./jsonrpc.ts";
import { bytePipe } from "./byte-pipe.ts";
import { Link, type LinkEnd, type WellFormed } from "./link.ts";

const parses = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

const VALID = [
  '{"a":[1,-2.5e+3,0,true,false,null,"x\\"y\\\\\\u00e9\\n"],"b":{}, "c" : [ ] }',
  '[{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"0 "}}}]',
  '"\\ud800 lone"',
  "-0.0E-0",
  " 12 ",
];

test("relay check: jsonValueEnd accepts JSON, and nothing JSON.parse refuses (mutations of valid texts)", () => {
  for (const text of VALID) expect(jsonValueEnd(text, 0)).toBe(text.trimEnd().length);
  const bad = ['{"a":tru}', '{"a":01}', '{"a":1.}', '{"a":-}', '{"a":"\t"}', '{"a":"\\x"}', '{"a":"\\u12g4"}', '{"a" 1}', '{"a":1,}', "[1,]", '{"a":"x', "[", "{,}", "1e", "+1"];
  for (const text of bad) expect({ text, parses: parses(text), end: jsonValueEnd(text, 0) }).toEqual({ text, parses: false, end: -1 });
  // every one-character deletion, duplication and replacement of the valid texts: the check takes the
  // whole text as one value exactly when JSON.parse takes it (bounded: a few thousand texts)
  const alphabet = ['"', "\\", "{", "}", "[", "]", ",", ":", "0", "1", "-", ".", "e", "t", "n", " ", "\u0001", "u"];
  let checked = 0;
  for (const text of VALID) {
    for (let i = 0; i < text.length; i++) {
      const variants = [text.slice(0, i) + text.slice(i + 1), text.slice(0, i) + text[i] + text.slice(i), ...alphabet.map((c) => text.slice(0, i) + c + text.slice(i + 1))];
      for (const v of variants) {
        const end = jsonValueEnd(v, 0);
        const whole = end >= 0 && v.slice(end).trim() === "";
        expect({ v, whole }).toEqual({ v, whole: parses(v) });
        checked++;
      }
    }
  }
  expect(checked).toBeGreaterThan(2000);
  // nesting deeper than the check goes is left to JSON.parse
  expect(jsonValueEnd("[".repeat(100) + "]".repeat(100), 0)).toBe(-1);
});

test("relay check: a notification spelled as JSON.stringify spells one is classified as classifyLine does, params parsed on first read", () => {
  const m = { jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: 'a "quoted" é' } } } };
  const line = JSON.stringify(m);
  const c = classifyRelayedNotification(line)!;
  const full = classifyLine(line);
  expect(c.kind).toBe("notification");
  if (c.kind !== "notification" || full.kind !== "notification") throw new Error("not a notification");
  expect(c.method).toBe(full.method);
  expect(c.params).toEqual(full.params);
  expect(c.message.params).toBe(c.params); // parsed once, shared
  expect(JSON.stringify(c.message)).toBe(line);
  expect(c.paramsText).toBe(JSON.stringify(m.params));
  expect(classifyRelayedNotification('{"jsonrpc":"2.0","method":"x","params":[1,2]}')).toMatchObject({ method: "x", params: [1, 2] });
  // any other spelling is left to classifyLine: escapes in the method, other keys, a request, scalar
  // params, trailing text, broken params, an empty method
  for (const other of [
    '{"jsonrpc":"2.0","method":"a\\u0062","params":{}}',
    '{"jsonrpc":"2.0","method":"a","params":{},"id":1}',
    '{"jsonrpc":"2.0","method":"a","params":{},"method":"b"}',
    '{"jsonrpc":"2.0","method":"a","params":1}',
    '{"jsonrpc":"2.0","method":"a","params":{}} ',
    '{"jsonrpc":"2.0","method":"a","params":{"x":tru}}',
    '{"jsonrpc":"2.0","method":"a","params":{"x":1}',
    '{"jsonrpc":"2.0","method":"","params":{}}',
    '{"jsonrpc":"1.0","method":"a","params":{}}',
  ]) {
    expect(classifyRelayedNotification(other)).toBeUndefined();
  }
});

test("relay check: a relay link still ends on a notification line whose params are not JSON, and passes good ones in order", async () => {
  const input = bytePipe();
  const got: WellFormed[] = [];
  const link = new Link({ input: input.input, sink: { write: async () => {} }, maxLineBytes: 1 << 20, relay: true, onMessage: (m) => void got.push(m) });
  const good = '{"jsonrpc":"2.0","method":"session/update","params":{"n":1}}';
  const broken = '{"jsonrpc":"2.0","method":"session/update","params":{"n":1,}}';
  void input.sink.write(new TextEncoder().encode(`${good}\n${broken}\n${good}\n`));
  input.close();
  const end: LinkEnd = await link.ended;
  expect(end.reason).toBe("garbage");
  if (end.reason === "garbage") expect(end.error.message).toStartWith("Parse error");
  expect(got.map((m) => (m.kind === "notification" ? m.params : undefined))).toEqual([{ n: 1 }]);
});
