// Owns the bridge process's side (`tendril conductor mcp-bridge`): it names its server to the conductor
// over the socket, waits for the answer, then relays MCP lines both ways until either side closes. A
// refused server (an id the conductor does not know) is said on stderr, the MCP client's first request
// gets an error naming it, and the exit code is 1. The conductor's side is mcp-bridge.ts.
import { connect } from "node:net";
import { errorResponse, isObject } from "../wire/jsonrpc.ts";
import { chunksOf, Link } from "../wire/link.ts";
import { nodeSink } from "../wire/writer.ts";
import { BRIDGE_HELLO } from "./mcp-bridge.ts";

export interface BridgeClientIo {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** One line for the user (stderr). */
  say(line: string): void;
  maxLineBytes: number;
  /** How long a refused bridge waits for the client's first request (the client's own init timeout). */
  refusalWaitMs: number;
}

/** Relays for `server` through the conductor's `socket`; resolves with the exit code. */
export function runBridgeClient(socket: string, server: string, io: BridgeClientIo): Promise<number> {
  return new Promise<number>((resolve) => {
    const sock = connect(socket);
    let state: "waiting" | "relaying" | "refused" = "waiting";
    let buffered = Buffer.alloc(0);
    sock.once("error", (err) => {
      io.say(`${socket}: ${err.message}`);
      resolve(1);
    });
    sock.once("connect", () => sock.write(JSON.stringify({ jsonrpc: "2.0", method: BRIDGE_HELLO, params: { server } }) + "\n"));
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const nl = buffered.indexOf(10);
      if (nl < 0 && buffered.length <= io.maxLineBytes) return;
      sock.off("data", onData);
      const answer = helloResult(nl < 0 ? undefined : buffered.subarray(0, nl).toString("utf8"));
      if ("error" in answer) {
        state = "refused";
        io.say(answer.error);
        sock.destroy();
        return void refuseFirstRequest(answer.error, io).then(() => resolve(1));
      }
      state = "relaying";
      const rest = buffered.subarray(nl + 1);
      if (rest.length > 0) io.output.write(rest);
      sock.pipe(io.output);
      io.input.pipe(sock);
    };
    sock.on("data", onData);
    sock.once("close", () => {
      if (state === "relaying") return resolve(0);
      if (state === "refused") return;
      io.say("the conductor closed the bridge's connection without answering (is the conductor still running?)");
      resolve(1);
    });
  });
}

function helloResult(line: string | undefined): { ok: true } | { error: string } {
  let m: unknown;
  try {
    m = line === undefined ? undefined : JSON.parse(line);
  } catch {
    m = undefined;
  }
  if (!isObject(m) || m.method !== BRIDGE_HELLO || !isObject(m.params)) return { error: "the conductor's socket answered with something that is not a bridge answer" };
  if (m.params.ok === true) return { ok: true };
  return { error: typeof m.params.error === "string" ? m.params.error : "the conductor refused the bridge" };
}

/** Answers the client's first request with `message` (its `initialize`, usually); bounded by `refusalWaitMs`. */
async function refuseFirstRequest(message: string, io: BridgeClientIo): Promise<void> {
  let done!: () => void;
  const answered = new Promise<void>((r) => (done = r));
  const link: Link = new Link({
    input: chunksOf(io.input),
    sink: nodeSink(io.output),
    maxLineBytes: io.maxLineBytes,
    onMessage: (m) => {
      if (m.kind !== "request") return;
      link.send(errorResponse(m.id, { code: -32000, message }));
      done();
    },
    onMalformed: () => true,
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([answered, link.ended, new Promise<void>((r) => (timer = setTimeout(r, io.refusalWaitMs)))]);
  clearTimeout(timer);
  await link.flush();
}
