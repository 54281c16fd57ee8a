// Owns the ACP test client: spawns `dist/tendril agent` (or any ACP agent command) and drives it with
// the SDK's `acp.client()`, recording every session/update synchronously in arrival order and answering
// permission requests from a script. Not a product module.
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import * as acp from "@agentclientprotocol/sdk";
import { agentProcess } from "./sdk-process.ts";
import { WaitList } from "./wait-list.ts";

/** How to answer one permission request: an option kind, or "hang" (answer only when withdrawn). */
export type PermissionScript = "allow_once" | "allow_always" | "reject_once" | "reject_always" | "hang";

export interface TestAgent {
  readonly child: ChildProcessWithoutNullStreams;
  readonly agent: acp.ClientContext;
  /** Every session/update, in arrival order. */
  readonly updates: acp.SessionNotification[];
  /** When each of `updates` arrived (Date.now()), index for index. */
  readonly arrivals: number[];
  /** Every permission request, in arrival order, with how it was answered. */
  readonly permissions: { request: acp.RequestPermissionRequest; answer: string; at: number }[];
  /** Answers used in order for the next permission requests; "allow_once" once the list is empty. */
  readonly script: PermissionScript[];
  initialize(): Promise<acp.InitializeResponse>;
  newSession(cwd: string, mcpServers?: acp.McpServer[]): Promise<acp.NewSessionResponse>;
  prompt(sessionId: string, text: string | acp.ContentBlock[]): Promise<acp.PromptResponse>;
  cancel(sessionId: string): Promise<void>;
  /** Resolves once `ok()` holds: checked now and at each session/update; rejects, naming `what`, after `ms`. */
  untilUpdate(ok: () => boolean, what: string, ms?: number): Promise<void>;
  /** Updates of one kind (e.g. "tool_call_update"). */
  ofKind<K extends acp.SessionUpdate["sessionUpdate"]>(kind: K): Extract<acp.SessionUpdate, { sessionUpdate: K }>[];
  /** Concatenated agent_message_chunk text. */
  text(): string;
  stderr(): string;
  /** Closes stdin and waits for the exit code (SIGKILL after `timeoutMs`). */
  close(timeoutMs?: number): Promise<number | string>;
}

export interface StartOptions {
  env?: Record<string, string>;
  args?: string[];
  command?: string;
  script?: PermissionScript[];
}

export function startAgent(opts: StartOptions = {}): TestAgent {
  const proc = agentProcess({ ...(opts.args ? { args: opts.args } : {}), ...(opts.command ? { command: opts.command } : {}), ...(opts.env ? { env: opts.env } : {}), keepStderr: true });
  const child = proc.child;
  let err = "";
  child.stderr.setEncoding("utf8").on("data", (c: string) => void (err = (err + c).slice(-40000)));
  const updates: acp.SessionNotification[] = [];
  const arrivals: number[] = [];
  const updateWaits = new WaitList();
  const permissions: TestAgent["permissions"] = [];
  const script = [...(opts.script ?? [])];

  const conn = acp
    .client({ name: "tendril-test-client" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params); // synchronous: arrival order is preserved
      arrivals.push(Date.now());
      updateWaits.changed();
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => {
      const answer = script.shift() ?? "allow_once";
      const record = { request: params, answer, at: Date.now() };
      permissions.push(record);
      if (answer === "hang") {
        return new Promise<acp.RequestPermissionResponse>((resolve) => {
          const done = () => resolve({ outcome: { outcome: "cancelled" } });
          if (signal.aborted) done();
          else signal.addEventListener("abort", done, { once: true });
        });
      }
      const option = params.options.find((o) => o.kind === answer);
      if (!option) throw new Error(`no ${answer} option offered`);
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    })
    .connect(proc.stream);
  const agent = conn.agent;

  return {
    child,
    agent,
    updates,
    arrivals,
    permissions,
    script,
    initialize: () =>
      agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: "tendril-test-client", version: "0" },
      }),
    newSession: (cwd, mcpServers = []) => agent.request(acp.methods.agent.session.new, { cwd, mcpServers }),
    prompt: (sessionId, text) =>
      agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: typeof text === "string" ? [{ type: "text", text }] : text,
      }),
    cancel: (sessionId) => agent.notify(acp.methods.agent.session.cancel, { sessionId }),
    untilUpdate: (ok, what, ms = 5000) => updateWaits.until(ok, () => `no ${what} within ${ms} ms`, ms),
    ofKind: (kind) => updates.map((n) => n.update).filter((u) => u.sessionUpdate === kind) as any,
    text: () =>
      updates
        .map((n) => n.update)
        .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""))
        .join(""),
    stderr: () => err,
    close(timeoutMs = 5000) {
      return proc.close(conn, timeoutMs);
    },
  };
}
