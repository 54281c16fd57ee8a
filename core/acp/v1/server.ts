// Owns the agent's ACP v1 method surface on one connection: initialize, authenticate, logout, session/
// new|load|resume|fork|list|close|delete, prompt, set_mode, set_config_option, set_model and steering,
// each a mapping of v1's params and answers onto the connection's session engine (connection-sessions.ts):
// updates go out as they are, permission is asked with the tool call at the top of the params. Does not
// own sessions, the wire or what a cancelled request undoes (agent-server.ts).
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { log } from "../../log.ts";
import { ACP_V1 } from "../../wire/jsonrpc.ts";
import type { RpcPeer } from "../../wire/rpc-peer.ts";
import { type ClientHello, initializeV1, silentHello } from "../initialize.ts";
import { MODEL_OPTION_ID } from "../model-choice.ts";
import { ParamReader, parseLoadSession, parseNewSession, parsePrompt } from "../params.ts";
import { type Handler, type MappingOptions, ConnectionSessions, type SessionMapping } from "../connection-sessions.ts";
import { STEERING_METHOD } from "../steering.ts";

/** The v1 method table of one connection; `hello`: what its client said in an initialize answered
 *  before the table was built (agent-server.ts answers the first one). */
export function v1Handlers(opts: MappingOptions, peer: RpcPeer, ended: AbortSignal, hello: ClientHello = silentHello(ACP_V1)): Record<string, Handler> {
  const { auth } = opts;
  const send = (sessionId: string, update: SessionUpdate) => peer.notify("session/update", { sessionId, update });
  const mapping: SessionMapping = {
    emit: send,
    permissionParams: (sessionId, toolCall, options) => ({ sessionId, toolCall, options }),
    // v1 has no turn states. A turn that steering started shows its message as steering into a
    // running turn does (the client sent it, but not as a prompt it waits on).
    turn: (sessionId, e) => {
      if (e.state !== "running" || !e.user?.steered) return;
      for (const content of e.user.prompt) send(sessionId, { sessionUpdate: "user_message_chunk", messageId: e.user.messageId, content });
    },
  };
  // What the client said it shows (initialize): `notice` and `compaction_update` are sent only then.
  const engine = new ConnectionSessions(opts.sessions, peer, mapping, auth, hello.caps);
  engine.terminalAuth = hello.terminalAuth;
  return { ...sessionMethods(opts, engine, send), ...turnMethods(engine, ended) };
}

/** The methods that open, describe and end sessions (and the connection's own: initialize, auth). */
function sessionMethods(opts: MappingOptions, engine: ConnectionSessions, send: (sessionId: string, update: SessionUpdate) => void): Record<string, Handler> {
  // Right after the answer that gave the client the session (its updates must not come first); not
  // for a request the client cancelled (that session is undone), and a session closed meanwhile has
  // nothing to announce.
  const announced = <T>(sessionId: string, answer: T, signal: AbortSignal): T => {
    setImmediate(() => {
      if (signal.aborted) return;
      try {
        send(sessionId, { sessionUpdate: "available_commands_update", availableCommands: opts.sessions.availableCommands(sessionId) });
      } catch (err) {
        log.debug("commands not announced", { session: sessionId, error: err });
      }
    });
    return answer;
  };
  return {
    // Not a gate: requests sent before its answer are served.
    initialize: (raw) => {
      const { answer, hello } = initializeV1(raw, opts);
      engine.hello(hello);
      return answer;
    },
    authenticate: (raw) => engine.authenticate(ParamReader.of("authenticate", raw).id("methodId")),
    logout: (raw) => {
      // Every field is optional; a wrong type is still named.
      ParamReader.of("logout", raw ?? {}).object("_meta", "nullable");
      return engine.logout();
    },
    "session/new": async (raw, signal) => {
      const answer = await engine.newSession(await parseNewSession(raw));
      return announced(answer.sessionId, answer, signal);
    },
    "session/load": async (raw, signal) => {
      const p = await parseLoadSession(raw, "session/load");
      const answer = await engine.loadSession(p, (update, sessionId = p.sessionId) => send(sessionId, update));
      return announced(p.sessionId, answer, signal);
    },
    "session/resume": async (raw, signal) => {
      const p = await parseLoadSession(raw, "session/resume");
      const answer = await engine.loadSession(p);
      return announced(p.sessionId, answer, signal);
    },
    "session/fork": async (raw, signal) => {
      const answer = await engine.forkSession(await parseLoadSession(raw, "session/fork"));
      return announced(answer.sessionId, answer, signal);
    },
    "session/list": (raw) => engine.list(raw),
    "session/delete": async (raw) => (await engine.delete(raw), {}),
    "session/close": async (raw) => (await engine.close(ParamReader.of("session/close", raw).id("sessionId")), {}),
    // Whichever path changes the mode or the model, the client hears it (before the answer).
    "session/set_mode": async (raw) => {
      const p = ParamReader.of("session/set_mode", raw);
      await engine.setMode(p.id("sessionId"), p.id("modeId"));
      return {};
    },
    "session/set_config_option": async (raw) => ({ configOptions: await engine.setConfigOption(ParamReader.of("session/set_config_option", raw), "optional") }),
    // The older (unstable) way some clients switch models; same effect as the `model` config option.
    "session/set_model": async (raw) => {
      const p = ParamReader.of("session/set_model", raw);
      const sessionId = p.id("sessionId");
      await engine.setOption(sessionId, MODEL_OPTION_ID, p.id("modelId"));
      return {};
    },
  };
}

/** The methods of a session's turns: the prompt and steering. */
function turnMethods(engine: ConnectionSessions, ended: AbortSignal): Record<string, Handler> {
  return {
    // usage is ACP's (still unstable) PromptResponse.usage: the turn's token totals.
    "session/prompt": async (raw, signal) => {
      const p = ParamReader.of("session/prompt", raw);
      const sessionId = p.id("sessionId");
      return (await engine.startTurn(sessionId, parsePrompt(p), signal)).done;
    },
    [STEERING_METHOD]: (raw) => engine.steer(raw, ended),
  };
}
