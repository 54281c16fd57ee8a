import { expect, test } from "bun:test";
import { messagePipe, type Posted } from "./message-pipe.ts";
import { Link, type WellFormed } from "./link.ts";
import type { Classified } from "./jsonrpc.ts";

test("messages arrive in order, after the sender's call returns, and the end follows what was posted", async () => {
  const [a, b] = messagePipe();
  const got: Posted[] = [];
  let ended = false;
  const done = new Promise<void>((r) => b.listen((item) => got.push(item), () => ((ended = true), r())));
  expect(a.post({ n: 1 })).toBe(true);
  a.post([{ n: 2 }, { n: 3 }]);
  a.close();
  expect(got).toEqual([]); // never inside post()
  await done;
  expect(got).toEqual([{ n: 1 }, [{ n: 2 }, { n: 3 }]]);
  expect(ended).toBe(true);
  expect(a.post({ n: 4 })).toBe(false); // after close: dropped, as a write to a closed pipe
});

test("what is posted before the other end listens waits for it (post says so), in order", async () => {
  const [a, b] = messagePipe();
  expect(a.post({ n: 1 })).toBe(false);
  expect(a.post({ n: 2 })).toBe(false);
  const got: Posted[] = [];
  await new Promise<void>((r) => {
    b.listen((item) => (got.push(item), got.length === 2 && r()), () => {});
  });
  expect(got).toEqual([{ n: 1 }, { n: 2 }]);
  expect(() => b.listen(() => {}, () => {})).toThrow("listened to once");
});

test("both directions are independent: a reply posted while a message is delivered comes back", async () => {
  const [a, b] = messagePipe();
  b.listen((item) => void b.post({ echo: item }), () => {});
  const back = new Promise<Posted>((r) => a.listen(r, () => {}));
  a.post({ n: 7 });
  expect(await back).toEqual({ echo: { n: 7 } });
});

test("a Link over a message pipe: requests, batches with a garbage entry, the trace, and the end", async () => {
  const [near, far] = messagePipe();
  const seen: WellFormed[] = [];
  const batches: Classified[][] = [];
  const traced: string[] = [];
  const link = new Link({
    port: near,
    maxLineBytes: 1 << 20,
    onMessage: (m, line) => (seen.push(m), expect(line).toBeUndefined()),
    onBatch: (entries) => void batches.push(entries),
    trace: (dir) => void traced.push(dir),
  });
  const fromLink: Posted[] = [];
  far.listen((item) => void fromLink.push(item), () => {});
  far.post({ jsonrpc: "2.0", id: 1, method: "ping", params: {} });
  far.post([{ jsonrpc: "2.0", method: "note" }, { bad: true }]);
  link.send({ jsonrpc: "2.0", id: 1, result: {} });
  link.cork();
  link.send({ jsonrpc: "2.0", method: "a" });
  link.send({ jsonrpc: "2.0", method: "b" });
  link.uncork();
  far.close();
  expect(await link.ended).toEqual({ reason: "eof" });
  expect(seen.map((m) => m.kind)).toEqual(["request"]);
  expect(batches).toHaveLength(1);
  expect(batches[0]!.map((e) => e.kind)).toEqual(["notification", "malformed"]);
  expect(fromLink).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }, [{ jsonrpc: "2.0", method: "a" }, { jsonrpc: "2.0", method: "b" }]]);
  // what the link sent is traced as it is sent; what it got, as it is delivered (a microtask later)
  expect(traced).toEqual(["out", "out", "in", "in"]);
});

test("a Link over a message pipe: a malformed message ends it as garbage unless answered; a handler that throws ends it with the error", async () => {
  {
    const [near, far] = messagePipe();
    const link = new Link({ port: near, maxLineBytes: 1 << 20, onMessage: () => {} });
    far.post({ jsonrpc: "1.0", id: 3, method: "x" });
    const end = await link.ended;
    expect(end.reason).toBe("garbage");
    if (end.reason === "garbage") expect(end.line).toBe('{"jsonrpc":"1.0","id":3,"method":"x"}');
  }
  {
    const [near, far] = messagePipe();
    const link = new Link({
      port: near,
      maxLineBytes: 1 << 20,
      onMessage: () => {
        throw new Error("handler broke");
      },
    });
    far.post({ jsonrpc: "2.0", method: "x" });
    const end = await link.ended;
    expect(end.reason).toBe("error");
    if (end.reason === "error") expect((end.error as Error).message).toBe("handler broke");
  }
});

test("a Link whose other end never listens ends as stalled once more than maxQueuedBytes wait", async () => {
  const [near] = messagePipe();
  const link = new Link({ port: near, maxLineBytes: 1 << 20, maxQueuedBytes: 100, onMessage: () => {} });
  link.send({ jsonrpc: "2.0", method: "x", params: { pad: "y".repeat(40) } });
  link.send({ jsonrpc: "2.0", method: "x", params: { pad: "y".repeat(40) } });
  const end = await link.ended;
  expect(end.reason).toBe("stalled");
  if (end.reason === "stalled") expect(end.bytes).toBeGreaterThan(100);
});
