// Tests of reopening a session file: the torn last line is cut, wherever it starts, reading only the tail.
import { expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
