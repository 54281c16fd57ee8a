// Owns one live MCP connection (the only product module that imports the MCP SDK client): connect over
// stdio (our process-group transport; confined through `confine` when the spec says `sandbox`),
// Streamable HTTP or SSE; initialize and the paginated tools/list within MCP_INIT_TIMEOUT_S;
// prompts/list beside it and prompts/get; tool calls with timeout and cancellation; list_changed
// refreshes (tools and prompts); elicitation handed to the caller.
// Does not restart, share or name anything (shared-server.ts and pool.ts do).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { pathToFileURL } from "node:url";
import { basename } from "node:path";
import type { Limits } from "../limits.ts";
import { log as defaultLog, logFailure } from "../log.ts";
import { VERSION } from "../version.ts";
import { toCallResult, errorResult, type RawTool } from "./call-result.ts";
import { childEnv, StdioTransport } from "./stdio-transport.ts";
import { type AcpMcpRelay, AcpMcpTransport } from "./acp-transport.ts";
import { clampDescription } from "./catalog.ts";
import { wellFormedDeep } from "../text-bounds.ts";
import {
  McpLinkLost,
  McpStartError,
  type StdioConfine,
  type McpCallOptions,
  type McpCallResult,
  type McpContent,
  type McpElicitAnswer,
  type McpElicitation,
  type McpPromptInfo,
  type McpPromptMessage,
  type McpLog,
  type McpServerSpec,
} from "./types.ts";

export type { RawTool } from "./call-result.ts";

export interface ConnectOptions {
  /** The session's working directory (stdio servers without their own `cwd` run there). */
  cwd: string;
  limits: Limits;
  /** The parent process env; stdio children get only its whitelisted part plus the declared env. */
  parentEnv: Readonly<Record<string, string | undefined>>;
  log?: McpLog;
  /** The server's tool list changed (after a refresh following `notifications/tools/list_changed`). */
  onToolsChanged?: () => void;
  /** The server's prompt list changed (after a refresh following `notifications/prompts/list_changed`). */
  onPromptsChanged?: () => void;
  /** The link ended without close() being called (process exit, stream error). */
  onLost?: () => void;
  /** Carries `acp` servers' messages over the ACP connection. */
  acpRelay?: AcpMcpRelay;
  /** Answers the server's questions (elicitation); absent = every one is declined. */
  onElicit?: (e: McpElicitation) => Promise<McpElicitAnswer>;
  /** Starts `sandbox = …` stdio servers confined; absent = such a server cannot start. */
  confine?: StdioConfine;
}

export interface McpConnection {
  readonly server: string;
  /** The stdio server's pid (= process group id); undefined for HTTP/SSE. */
  readonly pid: number | undefined;
  readonly instructions: string | undefined;
  tools(): RawTool[];
  /** Its prompts (prompts/list), `server` left as the spec names it; none when it offers none. */
  prompts(): McpPromptInfo[];
  /** prompts/get; rejects with an Error naming the cause (McpLinkLost when the link failed). */
  getPrompt(name: string, args: Record<string, string>, opts: { signal?: AbortSignal; timeoutMs: number }): Promise<McpPromptMessage[]>;
  /** Tool errors, timeouts and cancellation come back as isError results; throws McpLinkLost only. */
  call(tool: string, args: Record<string, unknown>, opts: { signal?: AbortSignal; timeoutMs: number; onProgress?: McpCallOptions["onProgress"] }): Promise<McpCallResult>;
  close(): Promise<void>;
}


const CLIENT_INFO = { name: "tendril", version: VERSION };
const HTTP_CLOSE_BUDGET_MS = 300;

/** The HTTP and SSE transports, loaded with the first http or sse server (stdio servers never need them). */
interface HttpTransports {
  sse: typeof import("@modelcontextprotocol/sdk/client/sse.js");
  streamable: typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js");
}
let httpTransports: HttpTransports | undefined;

async function loadHttpTransports(): Promise<HttpTransports> {
  if (!httpTransports) {
    const [sse, streamable] = await Promise.all([import("@modelcontextprotocol/sdk/client/sse.js"), import("@modelcontextprotocol/sdk/client/streamableHttp.js")]);
    httpTransports = { sse, streamable };
  }
  return httpTransports;
}

/**
 * What a tools/call answer must be for the SDK to hand it over: an object. toCallResult reads every
 * field tolerantly (unknown content kinds kept as text), so the SDK's full result schema, parsed on
 * every call, would only add time.
 */
const anyResult = z.looseObject({}) as unknown as typeof CallToolResultSchema; // the SDK reads the same fields either way

async function makeTransport(spec: McpServerSpec, opts: ConnectOptions): Promise<{ transport: Transport; stdio?: StdioTransport }> {
  if (spec.transport === "stdio") {
    // The pool checked the spec (checkSpec): a stdio spec has a command here.
    let start = { command: spec.command!, args: spec.args ?? [], env: childEnv(opts.parentEnv, spec.env) } as Awaited<ReturnType<StdioConfine>>;
    const cwd = spec.cwd ?? opts.cwd;
    if (spec.sandbox && spec.sandbox !== "off") {
      if (!opts.confine) throw new McpStartError(spec.name, `sandbox = "${spec.sandbox}" cannot be honoured here (no sandbox in this process)`);
      try {
        start = await opts.confine({ mode: spec.sandbox, ...start, cwd, root: opts.cwd });
      } catch (err) {
        throw new McpStartError(spec.name, `sandbox = "${spec.sandbox}": ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const stdio = new StdioTransport({
      name: spec.name,
      command: start.command,
      args: start.args,
      env: start.env,
      cwd,
      ...(start.cleanup ? { cleanup: start.cleanup } : {}),
      maxLineBytes: opts.limits.MAX_LINE_BYTES,
      log: opts.log,
    });
    return { transport: stdio, stdio };
  }
  if (spec.transport === "acp") {
    if (!opts.acpRelay) throw new McpStartError(spec.name, "MCP-over-ACP is not available here");
    return { transport: new AcpMcpTransport(spec.url!.slice("acp:".length), opts.acpRelay) };
  }
  let url: URL;
  try {
    url = new URL(spec.url ?? "");
  } catch {
    throw new McpStartError(spec.name, `an ${spec.transport} server needs a valid url, got ${JSON.stringify(spec.url)}`);
  }
  const requestInit = { headers: spec.headers ?? {} };
  const { sse, streamable } = await loadHttpTransports();
  const transport =
    spec.transport === "http"
      ? new streamable.StreamableHTTPClientTransport(url, { requestInit })
      : new sse.SSEClientTransport(url, { requestInit });
  return { transport };
}

function describeFailure(step: string, err: unknown, timeoutS: number, stdio?: StdioTransport): string {
  const timedOut = err instanceof McpError && err.code === ErrorCode.RequestTimeout;
  let why = timedOut
    ? `did not answer ${step} within ${timeoutS} s (MCP_INIT_TIMEOUT_S); check that it is an MCP server and starts quickly`
    : `${step} failed: ${err instanceof Error ? err.message : String(err)}`;
  const tail = stdio?.stderrTail() ?? [];
  if (tail.length > 0) why += `; its last stderr: ${tail.slice(-3).join(" | ")}`;
  return why;
}

/** Every page of tools/list, within the time left before `deadline`. */
async function listAllTools(client: Client, deadline: number, maxTools: number, maxPages: number, server: string, log: McpLog) {
  const tools: RawTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const timeout = Math.max(1, deadline - Date.now());
    const res = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout });
    tools.push(...wellFormedDeep(res.tools as RawTool[]));
    cursor = res.nextCursor;
    if (cursor === undefined) return tools;
    if (tools.length >= maxTools) break;
  }
  log.warn("MCP server lists too many tools; the rest are ignored", { server, listed: tools.length });
  return tools;
}

/** Connects one server: rejects with McpStartError (the stdio group already killed) when it cannot. */
export async function connectMcpServer(spec: McpServerSpec, opts: ConnectOptions): Promise<McpConnection> {
  const log = opts.log ?? defaultLog;
  const { transport, stdio } = await makeTransport(spec, opts);
  // roots: the server's working directory is the session's workspace (one server, one directory:
  // the fingerprint includes it, so the list never changes). Elicitation, both modes: a question
  // during a call goes to the session that made it, which asks its user or declines. No sampling.
  const client = new Client(CLIENT_INFO, { capabilities: { roots: {}, elicitation: { form: {}, url: {} } } });
  const root = spec.cwd ?? opts.cwd;
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: pathToFileURL(root).href, name: basename(root) }] }));
  // Accepted URL questions waiting for the server's `notifications/elicitation/complete`, oldest first.
  const completions = new Map<string, () => void>();
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    const question = elicitationOf(req.params as Record<string, unknown>);
    const answer: McpElicitAnswer = opts.onElicit ? await opts.onElicit(question) : { action: "decline" };
    if (answer.action !== "accept") return { action: answer.action };
    if (question.mode === "form") return { action: "accept", content: formContent(answer.content) };
    if (answer.onComplete) {
      completions.set(question.elicitationId, answer.onComplete);
      if (completions.size > opts.limits.MAX_OPEN_URL_ELICITATIONS) completions.delete(completions.keys().next().value!);
    }
    return { action: "accept" };
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => {
    const done = completions.get(n.params.elicitationId);
    completions.delete(n.params.elicitationId);
    done?.();
  });
  const initS = opts.limits.MCP_INIT_TIMEOUT_S;
  // A server may list hooks beyond the offered tools; past this many, the session catalog would drop them anyway.
  const maxListed = opts.limits.MAX_TOOLS * 4;
  let closing = false;
  let lost = false;
  let tools: RawTool[] = [];
  client.onclose = () => {
    lost = true;
    if (!closing) opts.onLost?.();
  };
  client.onerror = (err) => log.debug("MCP client error", { server: spec.name, err });
  const abandon = async (step: string, err: unknown): Promise<never> => {
    closing = true;
    await Promise.allSettled([client.close(), stdio?.close()]);
    throw new McpStartError(spec.name, describeFailure(step, err, initS, stdio));
  };
  try {
    await client.connect(transport, { timeout: initS * 1000 });
  } catch (err) {
    return abandon("initialize", err);
  }
  const caps = client.getServerCapabilities();
  const listTools = () => listAllTools(client, Date.now() + initS * 1000, maxListed, opts.limits.MCP_LIST_PAGES, spec.name, log);
  const listPrompts = () => listAllPrompts(client, Date.now() + initS * 1000, opts.limits, maxListed, spec.name, log);
  // Prompts are listed beside the tools; a server whose prompts/list fails still serves its tools.
  const promptsListed = caps?.prompts
    ? listPrompts().catch((err) => (log.warn("MCP prompts/list failed; the server's prompts are not offered", { server: spec.name, err }), []))
    : Promise.resolve([]);
  try {
    if (caps?.tools) tools = await listTools();
  } catch (err) {
    return abandon("tools/list", err);
  }
  let prompts: McpPromptInfo[] = await promptsListed;
  const refresh = serialRefresh(async () => {
    tools = await listTools();
    opts.onToolsChanged?.();
  }, (err) => log.warn("MCP tools/list refresh failed; keeping the old list", { server: spec.name, err }));
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => refresh());
  const refreshPrompts = serialRefresh(async () => {
    prompts = await listPrompts();
    opts.onPromptsChanged?.();
  }, (err) => log.warn("MCP prompts/list refresh failed; keeping the old list", { server: spec.name, err }));
  client.setNotificationHandler(PromptListChangedNotificationSchema, async () => refreshPrompts());

  return {
    server: spec.name,
    pid: stdio?.pid,
    instructions: client.getInstructions(),
    tools: () => tools,
    prompts: () => prompts,
    getPrompt: (name, args, getOpts) => getPrompt(client, name, args, getOpts, () => lost),
    call: (tool, args, callOpts) => callTool(client, tool, args, callOpts, () => lost),
    async close() {
      closing = true;
      if (httpTransports && transport instanceof httpTransports.streamable.StreamableHTTPClientTransport) {
        const budget = new Promise((r) => setTimeout(r, HTTP_CLOSE_BUDGET_MS).unref?.());
        await Promise.race([transport.terminateSession().catch(logFailure("MCP HTTP session termination")), budget]);
      }
      await client.close().catch(logFailure("MCP client close"));
    },
  };
}

/** Every page of prompts/list, within the time left before `deadline`; malformed entries skipped. */
async function listAllPrompts(client: Client, deadline: number, limits: Limits, maxPrompts: number, server: string, log: McpLog) {
  const clamp = (text: unknown) => (typeof text === "string" ? clampDescription(text, limits.MAX_TOOL_DESCRIPTION_BYTES) : undefined);
  const prompts: McpPromptInfo[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < limits.MCP_LIST_PAGES; page++) {
    const timeout = Math.max(1, deadline - Date.now());
    const res = await client.listPrompts(cursor === undefined ? {} : { cursor }, { timeout });
    for (const p of res.prompts) {
      if (typeof p.name !== "string" || p.name === "") continue;
      prompts.push({
        server,
        name: p.name,
        ...(typeof p.title === "string" ? { title: p.title } : {}),
        ...(typeof p.description === "string" ? { description: clamp(p.description) } : {}),
        arguments: (p.arguments ?? []).map((a) => ({
          name: a.name,
          ...(typeof a.description === "string" ? { description: clamp(a.description) } : {}),
          required: a.required === true,
        })),
      });
    }
    cursor = res.nextCursor;
    if (cursor === undefined) return prompts;
    if (prompts.length >= maxPrompts) break;
  }
  log.warn("MCP server lists too many prompts; the rest are ignored", { server, listed: prompts.length });
  return prompts;
}

async function getPrompt(
  client: Client,
  name: string,
  args: Record<string, string>,
  opts: { signal?: AbortSignal; timeoutMs: number },
  isLost: () => boolean,
): Promise<McpPromptMessage[]> {
  try {
    const res = await client.getPrompt({ name, arguments: args }, { signal: opts.signal, timeout: opts.timeoutMs });
    return res.messages.map((m) => ({ role: m.role, content: m.content as McpContent }));
  } catch (err) {
    if (opts.signal?.aborted) throw new Error("cancelled");
    if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
      throw new Error(`prompts/get did not answer within ${Math.round(opts.timeoutMs / 100) / 10} s`);
    }
    const message = err instanceof Error ? err.message : String(err);
    if (isLinkFailure(err, isLost())) throw new McpLinkLost(message);
    throw new Error(message);
  }
}

/** The question of an `elicitation/create` the SDK already checked (a form or a URL). */
function elicitationOf(p: Record<string, unknown>): McpElicitation {
  const message = String(p.message ?? "");
  if (p.mode === "url") return { mode: "url", message, url: String(p.url), elicitationId: String(p.elicitationId) };
  const requestedSchema = (p.requestedSchema ?? { type: "object", properties: {} }) as Record<string, unknown>;
  const required = Array.isArray(requestedSchema.required) ? requestedSchema.required.map(String) : [];
  return { mode: "form", message, requestedSchema, required };
}

/** Form content as MCP takes it: string, number, boolean or string-array values; anything else dropped. */
function formContent(content: Record<string, unknown> | undefined): Record<string, string | number | boolean | string[]> {
  const out: Record<string, string | number | boolean | string[]> = {};
  for (const [k, v] of Object.entries(content ?? {})) {
    if (typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))) out[k] = v;
    else if (Array.isArray(v) && v.every((x) => typeof x === "string")) out[k] = v;
  }
  return out;
}

/** Runs `job` now, or once more after the running one if asked again meanwhile: never two at once. */
function serialRefresh(job: () => Promise<void>, onError: (err: unknown) => void): () => void {
  let running = false;
  let again = false;
  return function refresh() {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void (async () => {
      do {
        again = false;
        await job().catch(onError);
      } while (again);
      running = false;
    })();
  };
}

function isLinkFailure(err: unknown, lost: boolean): boolean {
  if (lost) return true;
  if (err instanceof McpError) return err.code === ErrorCode.ConnectionClosed;
  const http = httpTransports;
  return err instanceof TypeError || (http !== undefined && (err instanceof http.streamable.StreamableHTTPError || err instanceof http.sse.SseError));
}

async function callTool(
  client: Client,
  tool: string,
  args: Record<string, unknown>,
  opts: { signal?: AbortSignal; timeoutMs: number; onProgress?: McpCallOptions["onProgress"] },
  isLost: () => boolean,
): Promise<McpCallResult> {
  if (opts.signal?.aborted) return errorResult("cancelled");
  try {
    const res = await client.callTool({ name: tool, arguments: args }, anyResult, {
      signal: opts.signal,
      timeout: opts.timeoutMs,
      ...(opts.onProgress ? { onprogress: opts.onProgress } : {}),
    });
    return toCallResult(res);
  } catch (err) {
    if (opts.signal?.aborted) return errorResult("cancelled");
    if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
      return errorResult(`tool timed out after ${Math.round(opts.timeoutMs / 100) / 10} s`);
    }
    const message = err instanceof Error ? err.message : String(err);
    if (isLinkFailure(err, isLost())) throw new McpLinkLost(message);
    return errorResult(`tool call failed: ${message}`);
  }
}
