// Owns the MCP server's stdio transport: our bounded ND-JSON reader and JSON-RPC classifier feed
// well-formed messages to the SDK, malformed lines are answered here (-32700 / -32600, as the agent
// answers them), an over-long line ends the connection, and every outgoing message goes through one
// LineWriter. Does not know any MCP method.
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Readable, Writable } from "node:stream";
import { log } from "../log.ts";
import { classifyLine, errorResponse } from "../wire/jsonrpc.ts";
import { readLines } from "../wire/ndjson.ts";
import { LineWriter, nodeSink } from "../wire/writer.ts";

/** Why the input ended; only `eof` is a clean end. */
export type InputEnd = { reason: "eof" } | { reason: "oversize"; bytes: number } | { reason: "error"; error: unknown };

export class LineServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Settles once input has ended: EOF, an over-long line, or a read error. */
  readonly ended: Promise<InputEnd>;
  private settle!: (end: InputEnd) => void;
  private readonly writer: LineWriter;
  private closed = false;

  constructor(
    private readonly input: Readable,
    output: Writable,
    private readonly maxLineBytes: number,
  ) {
    this.writer = new LineWriter(nodeSink(output));
    this.ended = new Promise((resolve) => (this.settle = resolve));
  }

  async start(): Promise<void> {
    void this.pump().then(
      () => this.settle({ reason: "eof" }),
      (error: unknown) => this.settle({ reason: "error", error }),
    );
  }

  private async pump(): Promise<void> {
    for await (const event of readLines(this.input, this.maxLineBytes)) {
      if (this.closed) return;
      if (event.type === "oversize") {
        log.error("input line over MAX_LINE_BYTES; closing the connection", { bytes: event.bytes, limit: this.maxLineBytes });
        this.settle({ reason: "oversize", bytes: event.bytes });
        return;
      }
      const c = classifyLine(event.text);
      if (c.kind === "malformed") {
        log.warn("malformed message", { code: c.error.code, message: c.error.message });
        this.writer.send(errorResponse(c.id, c.error)).catch((err: unknown) => log.debug("reply to a malformed line failed", { error: err }));
        continue;
      }
      // Classified already (a request, notification or response); the SDK sorts it with its own guards.
      this.onmessage?.(c.message as unknown as JSONRPCMessage);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.writer.send(message);
  }

  /** Resolves when everything queued so far is written. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.pause();
    this.onclose?.();
  }
}
