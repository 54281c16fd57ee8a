// Owns the bridge between stdio bytes and the ACP SDK's message `Stream`: our bounded ND-JSON reader and
// JSON-RPC classifier feed well-formed messages to the SDK, malformed lines are answered here (-32700 /
// -32600), and every outgoing message goes through one LineWriter. Does not know any ACP method.
import type { AnyMessage, Stream } from "@agentclientprotocol/sdk";
import { type LineEvent, readLines } from "../wire/ndjson.ts";
import { classifyLine, errorResponse } from "../wire/jsonrpc.ts";
import { type ByteSink, LineWriter } from "../wire/writer.ts";
import { log, logFailure } from "../log.ts";

export type StreamEnd = { reason: "eof" } | { reason: "oversize"; bytes: number } | { reason: "error"; error: unknown };

export interface MessageStream {
  stream: Stream;
  writer: LineWriter;
  /** Resolves once input has ended: EOF, an over-long line (the connection must end), or a read error. */
  ended: Promise<StreamEnd>;
}

export interface MessageStreamOptions {
  input: AsyncIterable<Uint8Array>;
  sink: ByteSink;
  maxLineBytes: number;
}

export function createMessageStream(opts: MessageStreamOptions): MessageStream {
  const writer = new LineWriter(opts.sink);
  const lines = readLines(opts.input, opts.maxLineBytes);
  let settle!: (end: StreamEnd) => void;
  const ended = new Promise<StreamEnd>((resolve) => (settle = resolve));

  const readable = new ReadableStream<AnyMessage>({
    async pull(controller) {
      // Loop until one message is handed over, so malformed lines do not stall the SDK's reader.
      for (;;) {
        let next: IteratorResult<LineEvent, void>;
        try {
          next = await lines.next();
        } catch (error) {
          settle({ reason: "error", error });
          controller.close();
          return;
        }
        if (next.done || !next.value) {
          settle({ reason: "eof" });
          controller.close();
          return;
        }
        const event = next.value;
        if (event.type === "oversize") {
          log.error("input line over MAX_LINE_BYTES; closing the connection", { bytes: event.bytes, limit: opts.maxLineBytes });
          settle({ reason: "oversize", bytes: event.bytes });
          controller.close();
          return;
        }
        const c = classifyLine(event.text);
        if (c.kind === "malformed") {
          log.warn("malformed message", { code: c.error.code, message: c.error.message });
          writer.send(errorResponse(c.id, c.error)).catch(logFailure("answering a malformed line"));
          continue;
        }
        controller.enqueue(c.message as unknown as AnyMessage);
        return;
      }
    },
    cancel() {
      void lines.return(undefined);
    },
  });

  const writable = new WritableStream<AnyMessage>({
    write(message) {
      return writer.send(message);
    },
  });

  return { stream: { readable, writable }, writer, ended };
}
