// Owns the ACP SDK's experimental v2 client app on a spawned process's stdio, for the tests that drive
// the binary with it (`tendril agent`, `tendril conductor`): every session update collected, each
// permission question answered allow_once, and a close that ends stdin and waits (then SIGKILLs); untilStop reads a session to its next stop.
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

export interface SdkV2Client {
  conn: acp.ClientConnection;
  updates: acp.UpdateSessionNotification[];
  /** `initialize` asking for v2, with this client's name. */
  initialize(): ReturnType<typeof initializeV2>;
  /** Ends the child's stdin and waits for it to exit, SIGKILLing it after `graceMs`. */
  close(): Promise<void>;
}

function initializeV2(conn: acp.ClientConnection, name: string) {
  return conn.agent.request(acp.methods.agent.initialize, { protocolVersion: 2, info: { name, version: "1" }, capabilities: {} });
}

export function sdkV2Client(child: ChildProcessWithoutNullStreams, name: string, graceMs: number): SdkV2Client {
  child.stderr.resume();
  child.stdin.on("error", () => {});
  const updates: acp.UpdateSessionNotification[] = [];
  const conn = acp
    .client({ name })
    .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params))
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => ({
      outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind === "allow_once")!.optionId },
    }))
    .connect(acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    conn,
    updates,
    initialize: () => initializeV2(conn, name),
    async close() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
      conn.close();
    },
  };
}

/** The session's messages up to its next idle state: the updates, then the stop reason. */
export async function untilStop(session: acp.ActiveSession): Promise<{ updates: acp.SessionUpdate[]; stopReason: unknown }> {
  const updates: acp.SessionUpdate[] = [];
  for (;;) {
    const m = await session.nextUpdate(AbortSignal.timeout(30_000));
    if (m.kind === "stop") return { updates, stopReason: m.stopReason };
    updates.push(m.update);
  }
}

/** What the client shows of tool call `toolCallId`'s terminal (v2 gives every shell call one): the
 *  output its `terminal_output_chunk`s carry, decoded; "" when the call names no terminal. */
export function terminalText(updates: acp.SessionUpdate[], toolCallId: string): string {
  const named = updates
    .filter((u) => u.sessionUpdate === "tool_call_update" && (u as { toolCallId?: string }).toolCallId === toolCallId)
    .flatMap((u) => ((u as { content?: { type: string; terminalId?: string }[] | null }).content ?? []).filter((c) => c.type === "terminal"))
    .map((c) => c.terminalId);
  const id = named[0];
  if (id === undefined) return "";
  return updates
    .filter((u) => u.sessionUpdate === "terminal_output_chunk" && (u as { terminalId?: string }).terminalId === id)
    .map((u) => Buffer.from((u as { data: string }).data, "base64").toString("utf8"))
    .join("");
}
