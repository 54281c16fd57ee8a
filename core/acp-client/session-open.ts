// Owns how `tendril prompt` gets its session from an ACP agent: session/new, or for `--resume ID` /
// `--continue` session/resume (else session/load, its replay kept off the output) of that id or of the
// newest one session/list gives for the cwd; authentication when the agent answers auth_required; and
// how `--model`/`--mode` map onto what the agent offers in its answer (settingRequests).
// Does not prompt, render or choose exit codes: it throws SettingError (the agent cannot do what a
// flag asks: exit 2) or SessionError (the agent does not have the session: exit 1).
import type * as acp from "@agentclientprotocol/sdk";
import { AUTH_REQUIRED, isObject } from "../wire/jsonrpc.ts";
import { RpcError } from "../wire/rpc-peer.ts";
import type { AgentRequests } from "./v2-link.ts";
import type { AgentSpawn } from "./agent-process.ts";

/** `--resume ID` (kind `id`) or `--continue` (kind `newest`). */
export type ResumeWanted = { kind: "id"; id: string } | { kind: "newest" };

/** The agent has no such session (or none to continue): an agent-side failure, exit 1. */
export class SessionError extends Error {}

export interface OpenContext {
  peer: AgentRequests;
  init: acp.InitializeResponse;
  agent: AgentSpawn;
  cwd: string;
  mcpServers: acp.McpServer[];
  meta?: Record<string, unknown>;
  resume?: ResumeWanted;
  /** The request in flight, for error messages. */
  setStep(step: string): void;
  /** Called with the session id before session/load replays it, and with undefined once it answered. */
  replaying(sessionId: string | undefined): void;
}

/** What the opening request answers: the session's id and its modes and config options. */
export type OpenedSession = acp.NewSessionResponse;

/** Pages of session/list read for `--continue` (the newest may be on a later page for some agents). */
const MAX_LIST_PAGES = 20;
/** ACP's "resource not found" (an unknown session id). */
const RESOURCE_NOT_FOUND = -32002;

export async function openSession(cx: OpenContext): Promise<OpenedSession> {
  if (cx.resume === undefined) {
    const base = { cwd: cx.cwd, mcpServers: cx.mcpServers, ...(cx.meta ? { _meta: cx.meta } : {}) };
    return withAuth(cx, "session/new", () => cx.peer.request<acp.NewSessionResponse>("session/new", base));
  }
  const caps = cx.init.agentCapabilities ?? {};
  const sessionCaps = (caps.sessionCapabilities ?? {}) as Record<string, unknown>;
  const flag = cx.resume.kind === "id" ? `--resume ${cx.resume.id}` : "--continue";
  const how = sessionCaps.resume != null ? "session/resume" : caps.loadSession === true ? "session/load" : undefined;
  if (!how) throw new SettingError(`${flag}: the agent can neither resume nor load sessions (it advertises no sessionCapabilities.resume and no loadSession)`);
  const id = cx.resume.kind === "id" ? cx.resume.id : await newestSession(cx, sessionCaps);
  const params = { sessionId: id, cwd: cx.cwd, mcpServers: cx.mcpServers, ...(cx.meta ? { _meta: cx.meta } : {}) };
  if (how === "session/load") cx.replaying(id);
  try {
    const answer = await withAuth(cx, how, () => cx.peer.request<acp.LoadSessionResponse>(how, params));
    return { ...(answer ?? {}), sessionId: id };
  } catch (err) {
    if (!(err instanceof RpcError) || err.code === AUTH_REQUIRED) throw err;
    const said = `(it said: ${err.message}, code ${err.code})`;
    if (err.code === RESOURCE_NOT_FOUND) throw new SessionError(`${flag}: the agent has no session ${id} ${said}`);
    throw new SessionError(`${flag}: the agent could not ${how === "session/load" ? "load" : "resume"} session ${id} ${said}`);
  } finally {
    cx.replaying(undefined);
  }
}

/** `--continue`: the session session/list shows as updated last for the cwd (list order breaks ties). */
async function newestSession(cx: OpenContext, sessionCaps: Record<string, unknown>): Promise<string> {
  if (sessionCaps.list == null) throw new SettingError("--continue: the agent cannot list its sessions (it advertises no sessionCapabilities.list); give --resume ID");
  let best: { id: string; at: number } | undefined;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const answer = await withAuth(cx, "session/list", () => cx.peer.request<acp.ListSessionsResponse>("session/list", { cwd: cx.cwd, ...(cursor ? { cursor } : {}) }));
    for (const s of Array.isArray(answer?.sessions) ? answer.sessions : []) {
      if (typeof s?.sessionId !== "string" || (typeof s.cwd === "string" && s.cwd !== cx.cwd)) continue;
      const at = typeof s.updatedAt === "string" ? Date.parse(s.updatedAt) : Number.NaN;
      const rank = Number.isNaN(at) ? -Infinity : at;
      if (!best || rank > best.at) best = { id: s.sessionId, at: rank };
    }
    cursor = typeof answer?.nextCursor === "string" ? answer.nextCursor : undefined;
    if (!cursor) break;
  }
  if (!best) throw new SessionError(`--continue: the agent lists no session for ${cx.cwd}`);
  return best.id;
}

/** An auth method as agents advertise it: `agent` (the default), `terminal` (args, env to add to the
 *  agent's command) or the older `env_var` (the variables it reads). */
interface AdvertisedAuth {
  id: string;
  name?: string;
  type?: string;
  varName?: string;
  vars?: { name: string }[];
  args?: string[];
  env?: Record<string, string>;
}

function varsOf(m: AdvertisedAuth): string[] {
  return [...(m.varName ? [m.varName] : []), ...(m.vars ?? []).map((v) => v.name)];
}

function shellWord(w: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, "'\\''")}'`;
}

/** The command a `terminal` method asks the user to run: the agent's own, plus its env and args. */
function terminalCommand(agent: AgentSpawn, m: AdvertisedAuth): string {
  const env = Object.entries(m.env ?? {}).map(([k, v]) => `${k}=${shellWord(v)}`);
  return [...env, agent.command, ...agent.args, ...(Array.isArray(m.args) ? m.args : [])].map((w, i) => (i < env.length ? w : shellWord(w))).join(" ");
}

function isAuthRequired(err: unknown): err is RpcError {
  return err instanceof RpcError && (err.code === AUTH_REQUIRED || /auth/i.test(err.message));
}

/**
 * `ask` (the request `step`), authenticating first when the agent requires it: an `env_var` method whose variables are
 * all set in the agent's environment, else an agent-handled method; when only `terminal` methods
 * are left (or the agent method fails), an error naming the command to run once; none usable → an
 * error that names the methods and the variables they need.
 */
async function withAuth<T>(cx: OpenContext, step: string, ask: () => Promise<T>): Promise<T> {
  cx.setStep(step);
  try {
    return await ask();
  } catch (err) {
    const methods = ((cx.init.authMethods ?? []) as AdvertisedAuth[]).filter((m) => m && typeof m.id === "string");
    if (!isAuthRequired(err) || methods.length === 0) throw err;
    const terminal = methods.find((m) => m.type === "terminal");
    const runOnce = terminal ? `run once in a terminal: ${terminalCommand(cx.agent, terminal)}` : undefined;
    const ready = methods.find((m) => m.type === "env_var" && varsOf(m).length > 0 && varsOf(m).every((v) => cx.agent.env[v]));
    const method = ready ?? methods.find((m) => m.type === undefined || m.type === "agent");
    if (!method) {
      cx.setStep("authenticate");
      if (runOnce) throw new RpcError(err.code, `the agent needs a login first: ${runOnce}`);
      const list = methods.map((m) => `${m.id}${varsOf(m).length ? ` (set ${varsOf(m).join(", ")})` : ` (${m.type ?? "agent"})`}`).join("; ");
      throw new RpcError(err.code, `the agent requires authentication and no advertised method can be used here: ${list}`);
    }
    cx.setStep("authenticate");
    try {
      await cx.peer.request("authenticate", { methodId: method.id });
    } catch (authErr) {
      // The terminal method's command, unless the agent's own message already names it.
      const named = terminal?.args?.length ? authErr instanceof Error && authErr.message.includes(terminal.args.join(" ")) : false;
      if (runOnce && !named && isAuthRequired(authErr)) throw new RpcError(authErr.code, `${authErr.message}; or ${runOnce}`);
      throw authErr;
    }
    cx.setStep(step);
    return ask();
  }
}

// --model and --mode: the config option of category `model`/`mode` (session/set_config_option) when
// the answer lists one, else `modes` (session/set_mode) or the older `models` state (session/set_model).

export interface WantedSettings {
  model?: string;
  mode?: string;
}

/** One request to send after session/new, in order. */
export interface SettingRequest {
  method: "session/set_config_option" | "session/set_mode" | "session/set_model";
  params: Record<string, unknown>;
}

/** The agent does not offer the asked value (or the setting at all): a usage error (exit 2). */
export class SettingError extends Error {}

interface Choice {
  value: string;
  name?: string;
}

/** A select option's values, flat or grouped (`{group, options: [...]}`). */
function selectValues(options: unknown): Choice[] {
  if (!Array.isArray(options)) return [];
  const out: Choice[] = [];
  for (const o of options) {
    if (!isObject(o)) continue;
    if (typeof o.value === "string") out.push({ value: o.value, name: typeof o.name === "string" ? o.name : undefined });
    else if (Array.isArray(o.options)) out.push(...selectValues(o.options));
  }
  return out;
}

function configOption(session: Record<string, unknown>, category: "model" | "mode"): { id: string; choices: Choice[] } | undefined {
  const list = Array.isArray(session.configOptions) ? session.configOptions : [];
  const found = list.find((o) => isObject(o) && o.category === category && typeof o.id === "string");
  return isObject(found) ? { id: found.id as string, choices: selectValues(found.options) } : undefined;
}

function listOf(entries: unknown, key: string): Choice[] {
  if (!Array.isArray(entries)) return [];
  return entries.filter(isObject).flatMap((e) => (typeof e[key] === "string" ? [{ value: e[key] as string }] : []));
}

function pick(flag: string, wanted: string, choices: Choice[]): string {
  if (choices.some((c) => c.value === wanted)) return wanted;
  const names = choices.map((c) => c.value).join(", ");
  throw new SettingError(`${flag} ${JSON.stringify(wanted)} is not offered by the agent; it offers: ${names || "(none)"}`);
}

/** Each flag's setting: the config option's category, else the older session state that lists choices. */
const SETTINGS = [
  { key: "mode", flag: "--mode", state: "modes", list: "availableModes", id: "id", method: "session/set_mode", param: "modeId", none: "the agent offers no session modes" },
  { key: "model", flag: "--model", state: "models", list: "availableModels", id: "modelId", method: "session/set_model", param: "modelId", none: "the agent offers no model choice" },
] as const;

/** The requests that apply `wanted` to a new session, or a SettingError naming the agent's choices. */
export function settingRequests(sessionId: string, session: unknown, wanted: WantedSettings): SettingRequest[] {
  const s = isObject(session) ? session : {};
  const out: SettingRequest[] = [];
  for (const k of SETTINGS) {
    const want = wanted[k.key];
    if (want === undefined) continue;
    const option = configOption(s, k.key);
    const state = s[k.state];
    const listed = isObject(state) ? listOf(state[k.list], k.id) : [];
    if (option) {
      out.push({ method: "session/set_config_option", params: { sessionId, configId: option.id, value: pick(k.flag, want, option.choices) } });
    } else if (listed.length > 0) {
      out.push({ method: k.method, params: { sessionId, [k.param]: pick(k.flag, want, listed) } });
    } else throw new SettingError(`${k.flag}: ${k.none}`);
  }
  return out;
}
