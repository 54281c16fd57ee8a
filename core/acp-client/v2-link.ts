// Owns `tendril prompt`'s ACP v2: the initialize that offers v2 and v1 at once (one message valid in
// both schemas: an agent that answers 1 is spoken to in v1 as before), and, when the agent answers 2,
// a link that lets the rest of the client keep v1's terms — requests translated on the way out
// (auth/login, typed MCP servers and config values), answers and updates on the way in (config option
// ids, tool call upserts as tool_call/tool_call_update, plan_update as plan), and a prompt that
// resolves with the stop reason of the `state_update` idle that ends its turn. Does no rendering.
import type * as acp from "@agentclientprotocol/sdk";
import { logFailure } from "../log.ts";
import { ACP_V1, ACP_V2, isObject } from "../wire/jsonrpc.ts";
import { RpcError, type RpcPeer } from "../wire/rpc-peer.ts";
import { turnEnd } from "../v2-turn-end.ts";


/** What the session-opening code needs of a link to the agent. */
export interface AgentRequests {
  request<T = unknown>(method: string, params: unknown): Promise<T>;
}

type Obj = Record<string, unknown>;

/** initialize params offering v2: v2's `info` and `capabilities` beside v1's `clientInfo` and
 *  `clientCapabilities` (each schema allows the other's fields). */
export function offerInitialize(clientVersion: string): Obj {
  const info = { name: "tendril-prompt", version: clientVersion };
  return {
    protocolVersion: ACP_V2,
    // auth.terminal: a `terminal` method is not run here, but its command is named for the user to run once.
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, auth: { terminal: true } },
    clientInfo: info,
    info,
    capabilities: { auth: { terminal: {} } },
  };
}

/** v2 config options in v1's terms (`configId` → `id`). */
function configOptionsV1(options: unknown): unknown {
  if (!Array.isArray(options)) return options;
  return options.map((o) => (isObject(o) && typeof o.configId === "string" ? (({ configId, ...rest }) => ({ id: configId, ...rest }))(o) : o));
}

function withConfigOptionsV1<T>(answer: T): T {
  return isObject(answer) && "configOptions" in answer ? ({ ...answer, configOptions: configOptionsV1(answer.configOptions) } as T) : answer;
}

/** The v2 initialize answer in v1's terms: v2's baseline session methods as v1 capabilities. */
export function initAnswerV1(answered: unknown): acp.InitializeResponse {
  const answer: Obj = isObject(answered) ? answered : {};
  const caps = isObject(answer.capabilities) ? answer.capabilities : {};
  const session = isObject(caps.session) ? caps.session : {};
  const methods = Array.isArray(answer.authMethods) ? answer.authMethods.filter(isObject) : [];
  return {
    protocolVersion: ACP_V2,
    agentCapabilities: {
      loadSession: false,
      sessionCapabilities: { list: {}, resume: {}, close: {}, ...(session.delete != null ? { delete: {} } : {}) },
    },
    authMethods: methods.map(({ methodId, type, env, ...m }) => ({
      ...m,
      id: methodId,
      ...(type === "agent" ? {} : { type }),
      ...(Array.isArray(env) ? { env: Object.fromEntries(env.filter(isObject).map((e) => [e.name, e.value])) } : {}),
    })) as acp.AuthMethod[],
    ...(isObject(answer.info) ? { agentInfo: answer.info as acp.Implementation } : {}),
  };
}

/** An agent that answered v2. */
export class V2Link implements AgentRequests {
  /** The turn in flight per session: resolved by its idle state_update. */
  readonly #turns = new Map<string, { resolve: (r: acp.PromptResponse) => void; reject: (e: Error) => void }>();
  /** Tool calls seen, per session (the first upsert of an id is shown as a `tool_call`). */
  readonly #seen = new Set<string>();

  constructor(private readonly peer: RpcPeer) {}

  async request<T = unknown>(method: string, params: unknown): Promise<T> {
    const p = isObject(params) ? params : {};
    if (method === "authenticate") return this.peer.request<T>("auth/login", p);
    if (method === "session/new" || method === "session/resume") {
      const servers = Array.isArray(p.mcpServers) ? p.mcpServers.map((s) => (isObject(s) && s.type === undefined ? { type: "stdio", ...s } : s)) : p.mcpServers;
      return withConfigOptionsV1(await this.peer.request<T>(method, { ...p, mcpServers: servers }));
    }
    if (method === "session/set_config_option") {
      const type = typeof p.value === "boolean" ? "boolean" : "id";
      return withConfigOptionsV1(await this.peer.request<T>(method, { type, ...p }));
    }
    if (method === "session/prompt") return (await this.#prompt(String(p.sessionId), p)) as T;
    return this.peer.request<T>(method, params);
  }

  /** The prompt is acknowledged at once; the turn ends with the session's idle state_update. */
  #prompt(sessionId: string, params: Obj): Promise<acp.PromptResponse> {
    const ended = new Promise<acp.PromptResponse>((resolve, reject) => this.#turns.set(sessionId, { resolve, reject }));
    ended.catch(logFailure("a v2 turn")); // read below, unless the prompt itself was refused
    const acked = this.peer.request<{ messageId?: unknown }>("session/prompt", params);
    acked.catch((err: unknown) => this.#turns.get(sessionId)?.reject(err as Error));
    return acked.then(() => ended).finally(() => this.#turns.delete(sessionId));
  }

  /** A v2 update in v1's terms, in order; none for what only v2 has (the user's own message, states). */
  updates(sessionId: string, u: Obj): acp.SessionUpdate[] {
    switch (u.sessionUpdate) {
      case "state_update": {
        const end = turnEnd(u);
        if (end) this.#idle(sessionId, end);
        return [];
      }
      case "user_message":
        return [];
      case "agent_message":
        return (Array.isArray(u.content) ? u.content : []).map((content) => ({ sessionUpdate: "agent_message_chunk", messageId: u.messageId, content }) as acp.SessionUpdate);
      case "tool_call_update":
        return [this.#toolCall(sessionId, u)];
      case "tool_call_content_chunk":
        return [this.#toolCall(sessionId, { toolCallId: u.toolCallId, content: [u.content] })];
      case "plan_update": {
        const plan = isObject(u.plan) ? u.plan : {};
        return plan.type === "items" ? [{ sessionUpdate: "plan", entries: plan.entries } as acp.SessionUpdate] : [];
      }
      case "config_option_update":
        return [{ ...u, configOptions: configOptionsV1(u.configOptions) } as acp.SessionUpdate];
      case "available_commands_update": {
        const list = Array.isArray(u.availableCommands) ? u.availableCommands.filter(isObject) : [];
        const availableCommands = list.map(({ type: _t, input, ...c }) => ({ ...c, ...(isObject(input) && typeof input.hint === "string" ? { input: { hint: input.hint } } : {}) }));
        return [{ sessionUpdate: "available_commands_update", availableCommands } as acp.SessionUpdate];
      }
      default:
        return [u as acp.SessionUpdate];
    }
  }

  /** A v2 permission question in v1's terms (the tool call it is about, with the question's title). */
  permission(params: Obj): acp.RequestPermissionRequest {
    const subject = isObject(params.subject) ? params.subject : {};
    const call = isObject(subject.toolCall) ? subject.toolCall : { toolCallId: "permission" };
    return { ...params, toolCall: { ...call, title: call.title ?? params.title }, options: params.options } as acp.RequestPermissionRequest;
  }

  #idle(sessionId: string, u: Obj): void {
    const turn = this.#turns.get(sessionId);
    if (!turn) return;
    if (u.stopReason === "error") {
      const e = isObject(u.error) ? u.error : {};
      turn.reject(new RpcError(typeof e.code === "number" ? e.code : -32603, typeof e.message === "string" ? e.message : "the turn failed"));
    } else {
      // v2's (unstable) usage of the work that just ended: v1's (unstable) PromptResponse.usage.
      const usage = isObject(u.usage) ? { usage: u.usage } : {};
      turn.resolve({ stopReason: (typeof u.stopReason === "string" ? u.stopReason : "end_turn") as acp.StopReason, ...usage });
    }
  }

  #toolCall(sessionId: string, u: Obj): acp.SessionUpdate {
    const key = `${sessionId}\n${String(u.toolCallId)}`;
    const first = !this.#seen.has(key);
    this.#seen.add(key);
    const { sessionUpdate: _s, capabilities: _c, content, status, ...fields } = u;
    const out: Obj = { ...fields, sessionUpdate: first ? "tool_call" : "tool_call_update" };
    if (first) out.title = typeof u.title === "string" ? u.title : "";
    // v1 has no `cancelled` call: it failed, as far as a v1 reader goes.
    if (status !== undefined) out.status = status === "cancelled" ? "failed" : status;
    // Only plain content is v1's; v2's diffs are file changes without the text.
    if (Array.isArray(content)) out.content = content.filter((c) => isObject(c) && c.type === "content");
    return out as acp.SessionUpdate;
  }
}
