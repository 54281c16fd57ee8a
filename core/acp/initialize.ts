// Owns the agent's answer to `initialize` in both ACP versions and what the client declares there (the
// session capabilities it shows, whether it runs a terminal auth method). Light on purpose: the first
// initialize is answered from here before the session layer behind the method tables is loaded
// (agent-server.ts). Does not own the method tables (v1/server.ts, v2/server.ts) or sessions.
import { ACP_V1, ACP_V2 } from "../wire/jsonrpc.ts";
import type { AgentAuth } from "./auth.ts";
import { type ClientSessionCaps, ParamReader, parseInitialize } from "./params.ts";
import { STEERING_CAPABILITY } from "./steering.ts";

/** What one connection's client said in its initialize. */
export interface ClientHello {
  caps: ClientSessionCaps;
  /** It can run a `terminal` auth method; never assumed. */
  terminalAuth: boolean;
}

/** What the answer says of this agent. */
export interface AgentTraits {
  version: string;
  /** Sessions are saved (session/load, list, resume are served). */
  persistent: boolean;
  /** MCP transports the pool supports besides stdio (`acp`: MCP-over-ACP). */
  mcpCapabilities: { http: boolean; sse: boolean; acp?: boolean };
  auth?: AgentAuth;
}

/** v2 shows notices, compaction, subagents and live terminals to every client: they are its baseline. */
export function v2BaselineCaps(): ClientSessionCaps {
  return { notices: true, compaction: true, elicitation: [], subagents: true, terminalOutput: "terminal_output_delta" };
}

/** A client that sent no initialize (requests before it are served): it declared nothing. */
export function silentHello(version: typeof ACP_V1 | typeof ACP_V2): ClientHello {
  return { caps: version === ACP_V2 ? v2BaselineCaps() : { notices: false, compaction: false, elicitation: [] }, terminalAuth: false };
}

/** v1's initialize: the answer, and what the client declared. */
export function initializeV1(raw: unknown, a: AgentTraits): { answer: Record<string, unknown>; hello: ClientHello } {
  const p = parseInitialize(raw);
  const hello = { caps: p.session, terminalAuth: p.terminalAuth };
  const answer = {
    protocolVersion: Math.min(p.protocolVersion, ACP_V1),
    agentInfo: { name: "tendril", version: a.version },
    agentCapabilities: {
      loadSession: a.persistent,
      promptCapabilities: { image: true, audio: false, embeddedContext: true },
      mcpCapabilities: a.mcpCapabilities,
      // Listing, resuming and deleting need saved sessions; closing and forking work either way.
      // additionalDirectories: more workspace roots on new, load, resume and fork.
      sessionCapabilities: a.persistent
        ? { list: {}, resume: {}, close: {}, delete: {}, fork: {}, additionalDirectories: {} }
        : { close: {}, fork: {}, additionalDirectories: {} },
      ...(a.auth ? { auth: { logout: {} } } : {}),
      // Kept here too: where this agent first advertised it.
      _meta: STEERING_CAPABILITY,
    },
    authMethods: a.auth?.methods(hello.terminalAuth) ?? [],
    // Where clients that steer look (as the adapters that ship it advertise it).
    _meta: STEERING_CAPABILITY,
  };
  return { answer, hello };
}

/** v2's initialize: the answer, and what the client declared (elicitation in the modes it names). */
export function initializeV2(raw: unknown, a: AgentTraits): { answer: Record<string, unknown>; hello: ClientHello } {
  const p = ParamReader.of("initialize", raw);
  p.integer("protocolVersion", 0, 65535);
  const info = p.object("info", "nullable");
  info?.string("name");
  info?.string("version");
  const caps = p.object("capabilities", "nullable");
  const terminalAuth = caps?.object("auth", "nullable")?.object("terminal", "nullable") !== undefined;
  const elicitation = caps?.object("elicitation", "nullable");
  const hello = { caps: { ...v2BaselineCaps(), elicitation: (["form", "url"] as const).filter((mode) => elicitation?.object(mode, "nullable") !== undefined) }, terminalAuth };
  const mcp = { stdio: {}, ...(a.mcpCapabilities.http ? { http: {} } : {}), ...(a.mcpCapabilities.acp ? { acp: {} } : {}) };
  const answer = {
    protocolVersion: ACP_V2,
    info: { name: "tendril", version: a.version },
    capabilities: {
      // `{}`: the baseline (new, list, resume, close, prompt, cancel); list and resume find saved
      // sessions only when the agent keeps them.
      session: {
        prompt: { image: {}, embeddedContext: {} },
        mcp,
        ...(a.persistent ? { delete: {} } : {}),
        additionalDirectories: {},
      },
      ...(a.auth ? { auth: {} } : {}),
      _meta: STEERING_CAPABILITY,
    },
    authMethods: (a.auth?.methods(terminalAuth) ?? []).map(({ id, ...m }) => ({ type: "type" in m ? m.type : "agent", methodId: id, ...m })),
    _meta: STEERING_CAPABILITY,
  };
  return { answer, hello };
}
