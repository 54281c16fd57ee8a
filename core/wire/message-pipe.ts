// Owns the in-memory message pipe: JSON-RPC messages handed from one end to the other as objects, for
// two ends in one process (a component run inside the conductor), so nothing is serialized, encoded,
// decoded or parsed on the way. Delivery keeps order and happens in a later microtask, never inside
// the sender's call. Messages are shared, not copied: neither end changes a message it sent or got.
// Bounds nothing itself; a sender learns whether the other end listens (see Link's hop bound).

/** One message, or one JSON-RPC batch (its entries in order). */
export type Posted = Record<string, unknown> | Record<string, unknown>[];

export interface MessageEnd {
  /** Queues `item` for the other end. False while the other end has not started listening (the item
   *  waits for it); after close() the item is dropped, as a write to a closed pipe is. */
  post(item: Posted): boolean;
  /** Starts delivery of what the other end posted (once per end): `onItem` per item in order, then
   *  `onEnd` once the other end closed and everything it posted before was delivered. */
  listen(onItem: (item: Posted) => void, onEnd: () => void): void;
  /** No more from this end: the other end hears its end after what was posted already. */
  close(): void;
}

interface Direction {
  queue: Posted[];
  onItem?: (item: Posted) => void;
  onEnd?: () => void;
  closed: boolean;
  ended: boolean;
  scheduled: boolean;
}

/** Two connected ends: what one posts, the other's listener gets. */
export function messagePipe(): [MessageEnd, MessageEnd] {
  const ab = direction();
  const ba = direction();
  return [end(ab, ba), end(ba, ab)];
}

function direction(): Direction {
  return { queue: [], closed: false, ended: false, scheduled: false };
}

function end(out: Direction, into: Direction): MessageEnd {
  return {
    post(item) {
      if (out.closed) return false;
      out.queue.push(item);
      schedule(out);
      return out.onItem !== undefined;
    },
    listen(onItem, onEnd) {
      if (into.onItem) throw new Error("a message pipe end is listened to once");
      into.onItem = onItem;
      into.onEnd = onEnd;
      schedule(into);
    },
    close() {
      if (out.closed) return;
      out.closed = true;
      schedule(out);
    },
  };
}

function schedule(d: Direction): void {
  if (d.scheduled || !d.onItem) return;
  d.scheduled = true;
  queueMicrotask(() => deliver(d));
}

function deliver(d: Direction): void {
  d.scheduled = false;
  // Items posted while these are delivered wait for the next microtask, as a reply written to a pipe
  // waits for the next read.
  const items = d.queue;
  d.queue = [];
  for (const item of items) d.onItem!(item);
  if (d.closed && d.queue.length === 0 && !d.ended) {
    d.ended = true;
    d.onEnd!();
  }
}
