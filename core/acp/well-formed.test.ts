// Well-formed text where it enters (SPEC §3.10): a lone surrogate in a prompt, a steering message, an
// MCP tool result or a saved session reaches the provider as U+FFFD, and every cut is made at a code
// point. A provider's JSON parser refuses a lone surrogate ("no low surrogate in string"), and since
// history is saved, every later request of the session would fail too.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionStore } from "../agent/session-store.ts";
import { toCallResult } from "../mcp/call-result.ts";
import { cutChars, wellFormed, wellFormedDeep } from "../text-bounds.ts";
import { titleOf } from "./session-recorder.ts";
import { childAskTitle } from "./subagents.ts";
import { memoryAgent, type MemoryAgent } from "../../tests/memory-agent.ts";

const state = mkdtempSync(join(tmpdir(), "tendril-wf-"));
afterAll(() => rmSync(state, { recursive: true, force: true }));

const LONE_HIGH = "\uD83D";
const LONE_LOW = "\uDE00";
const lone = (s: string) => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

let nextId = 1;
const req = (a: MemoryAgent, method: string, params: Record<string, unknown>) => {
  const id = nextId++;
  a.send({ jsonrpc: "2.0", id, method, params });
  return a.response(id);
};

test("wellFormed, wellFormedDeep and cutChars: lone halves become U+FFFD, pairs stay, untouched values are the same objects", () => {
  expect(wellFormed(`a${LONE_HIGH}b${LONE_LOW}c😀`)).toBe("a\uFFFDb\uFFFDc😀");
  const clean = { a: ["x", { b: "😀" }] };
  expect(wellFormedDeep(clean)).toBe(clean);
  expect(wellFormedDeep<unknown>({ a: [1, { b: `x${LONE_LOW}` }], [`k${LONE_HIGH}`]: true })).toEqual({ a: [1, { b: "x\uFFFD" }], "k\uFFFD": true });
  // a cut never leaves half a character, whatever it is given
  expect(cutChars("😀😀😀", 2)).toBe("😀…");
  expect(lone(cutChars(`ab${LONE_HIGH}`, 10))).toBe(false);
  expect(titleOf([{ type: "text", text: `${"😀".repeat(100)}` }])!.endsWith("😀…")).toBe(true);
  expect(lone(titleOf([{ type: "text", text: `go ${LONE_HIGH}` }])!)).toBe(false);
  expect(lone(childAskTitle(`run ${LONE_LOW}`, `task ${LONE_HIGH}`))).toBe(true); // the tool's own title is the tool's
  expect(lone(childAskTitle("run", `task ${LONE_HIGH}${"\n".repeat(40)}`))).toBe(false);
});

test("a lone surrogate in an MCP tool result under its byte bound reaches the model as U+FFFD", () => {
  const r = toCallResult({ content: [{ type: "text", text: `out${LONE_HIGH}` }, { type: "resource", resource: { uri: "f", text: `r${LONE_LOW}` } }], structuredContent: { v: LONE_LOW } });
  expect(r.text).toBe("out\uFFFD\n<resource uri=\"f\">\nr\uFFFD\n</resource>");
  expect(r.structured).toEqual({ v: "\uFFFD" });
});

test("a lone surrogate in a prompt and in a steering message reaches the provider as U+FFFD; a saved session that holds one is repaired when loaded", async () => {
  const store = new SessionStore(state);
  const a = memoryAgent({ store });
  await req(a, "initialize", { protocolVersion: 1 });
  const { sessionId } = (await req(a, "session/new", { cwd: tmpdir(), mcpServers: [] })).result;
  a.provider.push({ text: "ok" });
  expect((await req(a, "session/prompt", { sessionId, prompt: [{ type: "text", text: `fix ${LONE_HIGH}this` }] })).result.stopReason).toBe("end_turn");
  expect(JSON.stringify(a.provider.requests[0])).toContain("fix \uFFFDthis");
  expect(lone(JSON.stringify(a.provider.requests[0]))).toBe(false);
  // steering with no turn running starts one with it
  a.provider.push({ text: "ok again" });
  expect((await req(a, "_session/steering", { sessionId, prompt: [{ type: "text", text: `then ${LONE_LOW}that` }] })).result).toEqual({ outcome: "startedNewTurn" });
  await a.provider.requested(2);
  expect(JSON.stringify(a.provider.requests[1])).toContain("then \uFFFDthat");
  await a.close();

  // A file from before: the same session with a lone surrogate written (as JSON writes one) into its history.
  const file = store.path(sessionId);
  writeFileSync(file, readFileSync(file, "utf8").replaceAll("fix \uFFFDthis", "fix \\ud83dthis"));
  expect(readFileSync(file, "utf8")).toContain("\\ud83d");
  const b = memoryAgent({ store });
  await req(b, "initialize", { protocolVersion: 1 });
  expect((await req(b, "session/load", { sessionId, cwd: tmpdir(), mcpServers: [] })).error).toBeUndefined();
  b.provider.push({ text: "fine" });
  expect((await req(b, "session/prompt", { sessionId, prompt: [{ type: "text", text: "more" }] })).result.stopReason).toBe("end_turn");
  const sent = JSON.stringify(b.provider.requests[0]);
  expect(sent).toContain("fix \uFFFDthis");
  expect(lone(sent)).toBe(false);
  await b.close();
});
