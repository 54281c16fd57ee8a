// Owns asking the client a tool server's question (MCP elicitation) as ACP `elicitation/create`, in
// the modes the client advertised (`clientCapabilities.elicitation.form` / `.url`), tied to the
// session and the tool call, and reading its answer back for the server; an accepted URL question's
// completion (the server's word) goes to the client as `elicitation/complete`. Which path a question
// takes (this one or the permission fallback) is the turn's (agent/tool-calls.ts).
import type { CreateElicitationResponse } from "@agentclientprotocol/sdk";
import type { Elicitor } from "../agent/tool-calls.ts";
import { randomId } from "../ids.ts";
import { log } from "../log.ts";
import type { McpElicitAnswer, McpElicitation } from "../mcp/types.ts";
import { isObject } from "../wire/jsonrpc.ts";

export type ElicitationMode = "form" | "url";

/** The connection to the client. */
export interface ElicitationPeer {
  request(method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
  notify(method: string, params: unknown): void;
}

/** The client's elicitation for one session; undefined when it advertised no mode. */
export function clientElicitor(peer: ElicitationPeer, sessionId: string, modes: readonly ElicitationMode[]): Elicitor | undefined {
  if (modes.length === 0) return undefined;
  return {
    modes,
    async ask(toolCallId: string, e: McpElicitation, signal: AbortSignal): Promise<McpElicitAnswer> {
      if (signal.aborted) return { action: "cancel" };
      // Our own id: two servers may both number their questions from 1.
      const elicitationId = randomId();
      const params =
        e.mode === "form"
          ? { sessionId, toolCallId, mode: "form", message: e.message, requestedSchema: e.requestedSchema }
          : { sessionId, toolCallId, mode: "url", message: e.message, url: e.url, elicitationId };
      try {
        const res = (await peer.request("elicitation/create", params, signal)) as CreateElicitationResponse | undefined;
        if (signal.aborted) return { action: "cancel" };
        const answer = answerOf(res);
        if (e.mode === "url" && answer.action === "accept") answer.onComplete = () => peer.notify("elicitation/complete", { elicitationId });
        return answer;
      } catch (err) {
        if (!signal.aborted) log.warn("elicitation request failed; treating it as cancelled", { error: err });
        return { action: "cancel" };
      }
    },
  };
}

/** The client's answer as the server takes it; an action this agent does not know declines. */
function answerOf(res: CreateElicitationResponse | undefined): McpElicitAnswer {
  const action = (res as { action?: unknown } | undefined)?.action;
  if (action === "accept") {
    const content = (res as { content?: unknown }).content;
    return { action, content: isObject(content) ? content : {} };
  }
  if (action === "decline" || action === "cancel") return { action };
  log.warn("the client answered an elicitation with an unknown action; declined", { action });
  return { action: "decline" };
}
