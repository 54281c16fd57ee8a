import { expect, test } from "bun:test";
import { bytePipe } from "./byte-pipe.ts";
import { ANSWER_LATER, Cancellation, RpcPeer, type RpcPeerOptions } from "./rpc-peer.ts";

/** Two peers joined by in-memory pipes; `b` answers with `onRequest`. */
function pair(onRequest: RpcPeerOptions["onRequest"], more: Partial<RpcPeerOptions> = {}) {
  const ab = bytePipe();
  const ba = bytePipe();
  const seen: [string, unknown][] = [];
  const a = new RpcPeer({ input: ba.input, sink: ab.sink, maxLineBytes: 1 << 20, onRequest: () => ({}), onNotification: () => {} });
  const b = new RpcPeer({ input: ab.input, sink: ba.sink, maxLineBytes: 1 << 20, onRequest, onNotification: (m, p) => void seen.push([m, p]), ...more });
  return { a, b, seen, toB: ab, fromB: ba };
}

/** A promise and its resolver. */
function signal<T = void>(): [Promise<T>, (v: T) => void] {
  let resolve!: (v: T) => void;
  return [new Promise<T>((r) => (resolve = r)), resolve];
}

test("send hears the answer synchronously as it is read; respond answers a request later by id; settled waits for it", async () => {
  const [asked, heardLater] = signal<number | string>();
  const { a, b } = pair((method, _params, _signal, id) => {
    if (method === "later") return heardLater(id), ANSWER_LATER;
    return { method };
  });
  const heard: unknown[] = [];
  a.send("now", {}, (answer) => heard.push(answer));
  const later = a.request("later", {});
  const id = await asked;
  await a.request("now", {});
  expect(heard).toEqual([{ result: { method: "now" } }]);
  let settled = false;
  const done = b.settled().then(() => (settled = true));
  await a.request("now", {});
  expect(settled).toBe(false); // "later" is still being answered
  expect(b.respond(id, { error: { code: -32000, message: "no" } })).toBe(true);
  expect(b.respond(id, { result: {} })).toBe(false); // answered once
  await expect(later).rejects.toThrow("no");
  await done;
});

test("cancel sends $/cancel_request for our request and still waits for its answer; the other end's handler sees its signal abort", async () => {
  const [started, start] = signal();
  const [aborted, abort] = signal();
  const { a } = pair((_m, _p, cancellation) => {
    start();
    cancellation.signal.addEventListener("abort", () => abort());
    return aborted.then(() => ({ stopped: true }));
  });
  const [outcome, settle] = signal<unknown>();
  const id = a.send("slow", {}, settle);
  await started;
  a.cancel(id);
  expect(await outcome).toEqual({ result: { stopped: true } });
});

test("batches: one batch of answers (malformed entries included) once every request is answered; an empty batch is one -32600", async () => {
  const [slowAsked, askSlow] = signal();
  const [release, releaseSlow] = signal();
  const { fromB, toB, seen } = pair((method) => (method === "slow" ? (askSlow(), release.then(() => ({ slow: true }))) : { method }), { batches: true, answerMalformed: true });
  const lines: unknown[] = [];
  let wake = () => {};
  void (async () => {
    for await (const c of fromB.input) {
      for (const l of new TextDecoder().decode(c).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
      wake();
    }
  })();
  const next = async () => {
    while (lines.length === 0) await new Promise<void>((r) => (wake = r));
    return lines.shift();
  };
  const write = (v: unknown) => void toB.sink.write(new TextEncoder().encode(JSON.stringify(v) + "\n"));
  write([{ jsonrpc: "2.0", id: 1, method: "slow" }, { jsonrpc: "2.0", method: "note", params: { n: 1 } }, 7, { jsonrpc: "2.0", id: 2, method: "fast" }]);
  await slowAsked;
  expect(lines).toEqual([]); // nothing until every request of the batch is answered
  releaseSlow();
  expect(await next()).toEqual([
    { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid request: a message must be a JSON object" } },
    { jsonrpc: "2.0", id: 2, result: { method: "fast" } },
    { jsonrpc: "2.0", id: 1, result: { slow: true } },
  ]);
  expect(seen).toEqual([["note", { n: 1 }]]);
  write([]);
  expect(await next()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid request: an empty batch" } });
});

test("without the batches option a batch is one malformed line, as for `tendril agent`", async () => {
  const { fromB, toB } = pair(() => ({}), { answerMalformed: true });
  void toB.sink.write(new TextEncoder().encode(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "x" }]) + "\n"));
  for await (const c of fromB.input) {
    expect(JSON.parse(new TextDecoder().decode(c))).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid request: batches are not supported" } });
    break;
  }
});

test("a request's cancellation: onCancel hears $/cancel_request once; a signal taken after it is already aborted", async () => {
  const seen: string[] = [];
  const [cancelledOnce, told] = signal();
  let late: AbortSignal | undefined;
  const { a } = pair((method, _p, cancellation) => {
    cancellation.onCancel(() => {
      seen.push(`cancelled ${method}`);
      late = cancellation.signal;
      told();
    });
    return new Promise(() => {}); // never answers by itself
  });
  const id = a.send("slow", {}, () => {});
  a.cancel(id);
  a.cancel(id);
  await cancelledOnce;
  expect(seen).toEqual(["cancelled slow"]);
  expect(late!.aborted).toBe(true);
});

test("Cancellation: listeners added after the cancel run at once; the signal made before it aborts with it", () => {
  const c = new Cancellation();
  const early = c.signal;
  const heard: number[] = [];
  c.onCancel(() => heard.push(1));
  c.cancel();
  c.cancel();
  c.onCancel(() => heard.push(2));
  expect(heard).toEqual([1, 2]);
  expect(early.aborted).toBe(true);
});
