// Owns the agent's ACP surface: the SDK app, its handlers (initialize, session/new, prompt, cancel,
// set_mode), permission requests, and the mapping of our errors to JSON-RPC errors. The only runtime
// importer of the ACP SDK in the agent. Does not own sessions (session.ts) or bytes (stream.ts).
import * as acp from "@agentclientprotocol/sdk";
import { log, logFailure } from "../log.ts";
import type { PermissionAnswer, PermissionAsk } from "../agent/tool-calls.ts";
import { AcpError, INTERNAL_ERROR, INVALID_PARAMS, parseLoadSession, parseNewSession } from "./convert.ts";
import type { PromptIo, SessionManager } from "./session.ts";
import { MODEL_OPTION_ID } from "./model-choice.ts";

export interface AgentServerOptions {
  version: string;
  sessions: SessionManager;
  /** MCP transports the pool supports besides stdio. */
  mcpCapabilities: { http: boolean; sse: boolean };
  /** Sessions are saved (session/load, list, resume are served). */
  persistent: boolean;
}

const PERMISSION_OPTIONS: acp.PermissionOption[] = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
  { optionId: "reject_always", name: "Always reject", kind: "reject_always" },
];

interface InitializeParams {
  protocolVersion: number;
}

/** Our own parser for initialize: the SDK's typed handler would gate (and reject) pipelined requests. */
function parseInitialize(raw: unknown): InitializeParams {
  const v = (raw as { protocolVersion?: unknown } | null)?.protocolVersion;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) {
    throw acp.RequestError.invalidParams(undefined, "initialize needs params.protocolVersion, a non-negative integer");
  }
  return { protocolVersion: v };
}

function parseSetModel(raw: unknown): { sessionId: string; modelId: string } {
  const p = (raw ?? {}) as { sessionId?: unknown; modelId?: unknown };
  if (typeof p.sessionId !== "string") throw new AcpError(INVALID_PARAMS, "sessionId must be a string");
  if (typeof p.modelId !== "string") throw new AcpError(INVALID_PARAMS, "modelId must be a string");
  return { sessionId: p.sessionId, modelId: p.modelId };
}

/** Runs a params parser; our AcpErrors become RequestErrors with their code. */
function withCode<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof AcpError) throw new acp.RequestError(err.code, err.message, err.data);
    throw err;
  }
}

/** Runs a handler body; our AcpErrors keep their code, anything else becomes -32603 with its message. */
async function guard<T>(what: string, body: () => Promise<T> | T): Promise<T> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof AcpError) throw new acp.RequestError(err.code, err.message, err.data);
    if (err instanceof acp.RequestError) throw err;
    log.error(`${what} failed`, { error: err });
    throw new acp.RequestError(INTERNAL_ERROR, `${what} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function answerOf(res: acp.RequestPermissionResponse): PermissionAnswer {
  const outcome = res.outcome;
  if (outcome.outcome !== "selected") return "cancelled";
  const option = PERMISSION_OPTIONS.find((o) => o.optionId === outcome.optionId);
  // An unknown option id is a client bug; treat it as the safest answer.
  return (option?.kind as PermissionAnswer | undefined) ?? "reject_once";
}

function promptIo(client: acp.AgentContext, sessionId: string, signal: AbortSignal): PromptIo {
  return {
    signal,
    emit(update) {
      client.notify(acp.methods.client.session.update, { sessionId, update }).catch(logFailure("session/update notify"));
    },
    async askPermission(ask: PermissionAsk, cancel: AbortSignal) {
      if (cancel.aborted) return "cancelled";
      try {
        const res = await client.request(
          acp.methods.client.session.requestPermission,
          { sessionId, toolCall: { ...ask, status: "pending" }, options: PERMISSION_OPTIONS },
          { cancellationSignal: cancel, stopWaitingOnCancel: true },
        );
        return cancel.aborted ? "cancelled" : answerOf(res);
      } catch (err) {
        if (!cancel.aborted) log.warn("permission request failed; treating as cancelled", { error: err });
        return "cancelled";
      }
    },
  };
}

export function createAgentApp(opts: AgentServerOptions): acp.AgentApp {
  const { sessions } = opts;
  return acp
    .agent({ name: "tendril" })
    .onRequest("initialize", parseInitialize, ({ params }) => ({
      protocolVersion: Math.min(params.protocolVersion, acp.PROTOCOL_VERSION),
      agentInfo: { name: "tendril", version: opts.version },
      agentCapabilities: {
        loadSession: opts.persistent,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        mcpCapabilities: opts.mcpCapabilities,
        // Listing and resuming need saved sessions; closing works either way.
        sessionCapabilities: opts.persistent ? { list: {}, resume: {}, close: {} } : { close: {} },
      },
      authMethods: [],
    }))
    .onRequest(acp.methods.agent.session.new, (raw) => withCode(() => parseNewSession(raw)), ({ params }) =>
      guard("session/new", () => sessions.newSession(params.cwd, params.mcpServers, params._meta)),
    )
    .onRequest(acp.methods.agent.session.load, (raw) => withCode(() => parseLoadSession(raw)), ({ params, client }) =>
      guard("session/load", () =>
        sessions.loadSession(params.sessionId, params.cwd, params.mcpServers, params._meta, (update) =>
          client.notify(acp.methods.client.session.update, { sessionId: params.sessionId, update }).catch(logFailure("session/load replay")),
        ),
      ),
    )
    .onRequest(acp.methods.agent.session.resume, (raw) => withCode(() => parseLoadSession(raw)), ({ params }) =>
      guard("session/resume", () => sessions.loadSession(params.sessionId, params.cwd, params.mcpServers, params._meta)),
    )
    .onRequest(acp.methods.agent.session.list, ({ params }) => guard("session/list", () => sessions.listSessions(params.cwd, params.cursor)))
    .onRequest(acp.methods.agent.session.close, ({ params }) =>
      guard("session/close", async () => {
        await sessions.closeSession(params.sessionId);
        return {};
      }),
    )
    .onRequest(acp.methods.agent.session.prompt, ({ params, client, signal }) =>
      guard("session/prompt", async () => {
        // usage is ACP's (still unstable) PromptResponse.usage: the turn's token totals.
        return sessions.prompt(params.sessionId, params.prompt, promptIo(client, params.sessionId, signal));
      }),
    )
    .onRequest(acp.methods.agent.session.setMode, ({ params }) =>
      guard("session/set_mode", () => {
        sessions.setMode(params.sessionId, params.modeId);
        return {};
      }),
    )
    .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) =>
      guard("session/set_config_option", () => sessions.setConfigOption(params.sessionId, params.configId, params.value)),
    )
    // The older (unstable) way some clients switch models; same effect as the `model` config option.
    .onRequest("session/set_model", (raw) => withCode(() => parseSetModel(raw)), ({ params }) =>
      guard("session/set_model", async () => {
        await sessions.setConfigOption(params.sessionId, MODEL_OPTION_ID, params.modelId);
        return {};
      }),
    )
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      sessions.cancel(params.sessionId);
    });
}

/** Serves the agent on a message stream until the peer goes away. */
export function serveAgent(stream: acp.Stream, opts: AgentServerOptions): acp.AgentConnection {
  return createAgentApp(opts).connect(stream);
}

export { AcpError, INVALID_PARAMS };
