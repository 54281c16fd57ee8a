// Tests of reopening a session file: the torn last line is cut, wherever it starts, reading only the tail;
// and of loading one with odd lines: what is not an event is skipped, each damaged line reported by number.
import { expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setLogSink } from "../log.ts";
import { SessionStore } from "./session-store.ts";

function withStore(fn: (store: SessionStore) => void): void {
  const dir = mkdtempSync(join(tmpdir(), "tendril-store-reopen-"));
  try {
    fn(new SessionStore(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const header = { id: "s1", cwd: "/w", created: new Date(0).toISOString(), title: null, model: "m", mode: "ask" };

test("reopen leaves a file of whole lines as it is", () => {
  withStore((store) => {
    const file = store.create(header);
    file.append([{ type: "mode", mode: "yolo" }]);
    file.close();
    const before = readFileSync(store.path("s1"), "utf8");
    store.reopen("s1").close();
    expect(readFileSync(store.path("s1"), "utf8")).toBe(before);
  });
});

test("reopen cuts a torn last line longer than the tail it reads at once, and keeps every whole line", () => {
  withStore((store) => {
    const file = store.create(header);
    file.append([{ type: "title", title: "é".repeat(40_000) }]);
    file.close();
    const whole = statSync(store.path("s1")).size;
    // a torn line of ~200 KB: the newline before it is several reads back from the end
    appendFileSync(store.path("s1"), `{"type":"title","title":"${"x".repeat(200_000)}`);
    const again = store.reopen("s1");
    expect(statSync(store.path("s1")).size).toBe(whole);
    again.append([{ type: "mode", mode: "yolo" }]);
    again.close();
    const lines = readFileSync(store.path("s1"), "utf8").trimEnd().split("\n");
    expect(lines.map((l) => JSON.parse(l).type)).toEqual(["header", "title", "mode"]);
  });
});

test("reopen of a file with no whole line empties it", () => {
  withStore((store) => {
    const path = store.path("s1");
    store.create(header).close();
    rmSync(path);
    appendFileSync(path, '{"type":"head');
    store.reopen("s1").close();
    expect(statSync(path).size).toBe(0);
  });
});

test("load of a file with odd lines: blank lines skipped quietly, each damaged line reported by its number, the torn last one as such", () => {
  withStore((store) => {
    store.create(header).close();
    const chunk = (t: string) => ({ sessionUpdate: "agent_message_chunk" as const, content: { type: "text" as const, text: t } });
    const lines = [
      readFileSync(store.path("s1"), "utf8").trimEnd(), // 1: the header
      JSON.stringify({ type: "update", update: chunk("one") }),
      "", // 3: blank
      "   \t", // 4: blank
      "42", // 5: not an object
      '{"no":"type"}', // 6: no type
      '{"type":"update","update":{"sessionUpdate":"agent_mess', // 7: torn, mid-file
      '{ "type": "update", "update": {"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"two"}} }',
      '{"type":"update","update":null}', // an update that is none: skipped by the fold
      JSON.stringify({ type: "history", message: { role: "user", content: [{ type: "text", text: "hi" }] } }),
      JSON.stringify({ type: "turn" }),
      JSON.stringify({ type: "update", update: chunk("retracted") }),
      JSON.stringify({ type: "retract" }),
      JSON.stringify({ type: "update", update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "ls", status: "pending" } }),
      '{"type":"history","message":{"role":"assis', // 15: torn, last
    ];
    writeFileSync(store.path("s1"), lines.join("\n"));
    const warned: string[] = [];
    const prev = setLogSink((line) => void warned.push(line.trim()));
    let loaded;
    try {
      loaded = store.load("s1");
    } finally {
      setLogSink(prev);
    }
    expect(loaded?.updates).toEqual([
      chunk("one"),
      chunk("two"),
      { sessionUpdate: "tool_call", toolCallId: "t1", title: "ls", status: "pending" },
      { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "failed", content: [{ type: "content", content: { type: "text", text: "interrupted: the agent stopped before this tool call finished" } }] },
    ]);
    expect(loaded?.history).toEqual([{ role: "user", content: [{ type: "text", text: "hi" }] }]);
    const warning = (n: number, why = "") => `tendril: warn: skipping a damaged line of a session file${why} file=${store.path("s1")} line=${n}`;
    expect(warned).toEqual([warning(5), warning(6), warning(7), warning(15, " (a half-written last line: the agent stopped mid-write)")]);
  });
});
