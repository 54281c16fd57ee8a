// Owns in-memory hops for routing tests: a byte pipe pair standing in for a
// component's stdio, with a line-level peer on the far end (send a message, await the next one).
// Not used by the product at run time.
import { bytePipe } from "../core/wire/byte-pipe.ts";
import type { ByteIo } from "../core/wire/link.ts";

export interface MemoryPeer {
  /** The conductor's side of this hop. */
  readonly io: ByteIo;
  send(message: Record<string, unknown>): void;
  /** The next message the conductor wrote to this peer; rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<any>;
  /** Messages already received and not yet taken by next(). */
  readonly inbox: any[];
  /** Ends the peer's output (the conductor sees EOF on this hop). */
  close(): void;
  /** Writes raw bytes, e.g. a malformed line. */
  raw(text: string): void;
}

export function memoryPeer(): MemoryPeer {
  const toConductor = bytePipe();
  const toPeer = bytePipe();
  const inbox: any[] = [];
  const waiters: (() => void)[] = [];
  const enc = new TextEncoder();
  void (async () => {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of toPeer.input) {
      buf += dec.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        inbox.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
      }
      waiters.splice(0).forEach((w) => w());
    }
  })();
  return {
    io: { input: toConductor.input, sink: toPeer.sink },
    inbox,
    send: (m) => void toConductor.sink.write(enc.encode(JSON.stringify(m) + "\n")),
    raw: (text) => void toConductor.sink.write(enc.encode(text)),
    close: () => toConductor.close(),
    async next(timeoutMs = 2000) {
      const deadline = Date.now() + timeoutMs;
      while (inbox.length === 0) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no message within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          waiters.push(() => (clearTimeout(t), resolve()));
        });
      }
      return inbox.shift();
    },
  };
}
