// Owns one crate research query (SPEC §5.2): a session opened on the successor, whose MCP server (served
// by this proxy over MCP-over-ACP) offers get_rust_crate_source, read_crate_file and
// return_response_to_user; its read-only mode and permission answers (a crate's text must not act); the prompt;
// waiting for the findings within the timeout; the research's tool calls reported as progress; closing
// the session (and only then its server) on every path. Does not decide which queries run or cache them
// (research-proxy.ts) and knows no registry (the source tool is given).
import type { McpCallContext } from "../conductor/mcp-over-acp.ts";
import { toolServer } from "../conductor/mcp-over-acp.ts";
import { optionOfKind, type Proxy, type SubSession } from "../conductor/proxy.ts";
import { log } from "../log.ts";
import { defineTool, type ToolDefinition } from "../mcp/tool-definition.ts";
import { lazySchema } from "../zod-issue.ts";
import { CrateRoots, READ_CRATE_FILE, readCrateFileTool } from "./crate-reader.ts";
import promptTemplate from "./research-prompt.md" with { type: "text" };
import systemText from "./research-system.md" with { type: "text" };
import returnDescription from "./return-response-to-user.md" with { type: "text" };

export interface ResearchQuery {
  crate_name: string;
  crate_version?: string;
  prompt: string;
  /** The asking session's folder: the research session works there and its Cargo.lock pins the version. */
  cwd: string;
}

export interface ResearchDeps {
  proxy: Proxy;
  /** get_rust_crate_source for a session working in `cwd`. */
  sourceTool(cwd: string): ToolDefinition;
  sourceInstructions?: string;
  /** RESEARCH_TIMEOUT_S, in ms. */
  timeoutMs: number;
  /** How long closing the research session may hold the answer back. */
  closeWaitMs: number;
  /** MAX_TOOL_RESULT_BYTES and RESEARCH_READ_FILE_BYTES, for read_crate_file. */
  readMaxBytes: number;
  readFileMaxBytes: number;
}

export type ResearchOutcome = { ok: true; findings: string } | { ok: false; error: string };

export const RESEARCH_SERVER = "crate-research";

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function researchPrompt(q: ResearchQuery): string {
  const version = q.crate_version?.trim() ? `version ${q.crate_version.trim()}` : "the version the workspace's Cargo.lock pins, else the newest stable";
  const values: Record<string, string> = { crate: q.crate_name, version, prompt: q.prompt.trim() };
  // One pass with a function: the values are the user's text, taken literally (`$&`, `$$` and a
  // `{{crate}}` inside the question stay as typed).
  return promptTemplate.replace(/\{\{(crate|version|prompt)\}\}/g, (_, key: string) => values[key]!);
}

const OWN_TOOLS = ["get_rust_crate_source", READ_CRATE_FILE, "return_response_to_user"];
const OWN_NAMES = new Set(OWN_TOOLS.flatMap((t) => [`${RESEARCH_SERVER}__${t}`, `mcp__${RESEARCH_SERVER}__${t}`]));
/** ACP tool kinds a research session may use on its own agent's tools: looking, never acting. */
const LOOKING_KINDS = new Set(["read", "search"]);

/**
 * Answers the research session's permission requests. The model reads source any crate author wrote,
 * so what it asks is untrusted: only this research's own tools (named exactly) and tools the agent
 * calls read or search are allowed, once; everything else (a shell, an edit, a fetch that could carry
 * what was read elsewhere) is rejected.
 */
export function researchPermission(request: any): string | undefined {
  const call = request?.toolCall;
  const names = [call?._meta?.toolName, call?.title].filter((n): n is string => typeof n === "string");
  const allowed = names.some((n) => OWN_NAMES.has(n)) || LOOKING_KINDS.has(call?.kind);
  return optionOfKind(request, allowed ? "allow_once" : "reject_once");
}

/** The agent's mode that changes nothing, if it offers one: `read-only` (or alike), else `plan`. */
export function readOnlyModeOf(modes: { availableModes?: readonly { id?: unknown }[] | null } | undefined): string | undefined {
  const ids = (modes?.availableModes ?? []).map((m) => m?.id).filter((id): id is string => typeof id === "string");
  return ids.find((id) => /^read[-_ ]?only$/i.test(id)) ?? ids.find((id) => /^plan$/i.test(id));
}

/** Puts a fresh research session in its agent's read-only mode; without one, the answerer alone guards it. */
async function makeReadOnly(session: SubSession, label: string): Promise<void> {
  const mode = readOnlyModeOf(session.modes);
  if (!mode) {
    log.info("the research agent offers no read-only mode; its permission requests are answered read-only", { crate: label });
    return;
  }
  if (session.modes?.currentModeId === mode) return;
  await session.setMode(mode);
}

/** get_rust_crate_source, remembering each folder it returns as readable by read_crate_file. */
function recordingRoots(source: ToolDefinition, roots: CrateRoots): ToolDefinition {
  return {
    ...source,
    run: async (args, signal) => {
      const reply = await source.run(args, signal);
      const path = reply.structured?.checkout_path;
      if (typeof path === "string" && !reply.isError) await roots.add(path);
      return reply;
    },
  };
}

const returnInput = lazySchema((z) => z.object({ response: z.string().min(1).describe("your findings, complete: the answer first, then the evidence") }));

/** The tool the research agent answers with; `deliver` gets its findings. */
function returnTool(deliver: (findings: string) => void): ToolDefinition {
  return defineTool({
    name: "return_response_to_user",
    title: "Return findings",
    description: returnDescription.trim(),
    inputSchema: returnInput,
    annotations: { readOnlyHint: true },
    run: async ({ response }) => {
      deliver(response);
      return { text: "Delivered to the user. Your research is done: stop here." };
    },
  });
}

/** Runs one query to its end; never throws (failures are outcomes the caller shows as isError). */
export async function runResearch(q: ResearchQuery, deps: ResearchDeps, ctx: McpCallContext): Promise<ResearchOutcome> {
  const label = `${q.crate_name}${q.crate_version?.trim() ? `@${q.crate_version.trim()}` : ""}`;
  let deliver!: (findings: string) => void;
  const delivered = new Promise<string>((resolve) => (deliver = resolve));
  const roots = new CrateRoots();
  const tools = [recordingRoots(deps.sourceTool(q.cwd), roots), readCrateFileTool(roots, deps.readMaxBytes, deps.readFileMaxBytes), returnTool(deliver)];
  const served = deps.proxy.serveMcp(RESEARCH_SERVER, await toolServer(tools, deps.sourceInstructions));
  let step = 0;
  const progress = (text: string) => ctx.progress(++step, text);
  const opening = deps.proxy.openSession({ cwd: q.cwd, mcpServers: [served()], _meta: { systemPrompt: { append: systemText.trim() } } }, researchPermission);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stopped = new Promise<ResearchOutcome>((resolve) => {
    const seconds = deps.timeoutMs / 1000;
    timer = setTimeout(() => resolve({ ok: false, error: `research on ${label} timed out after ${seconds} s without an answer (RESEARCH_TIMEOUT_S)` }), deps.timeoutMs);
    ctx.signal.addEventListener("abort", () => resolve({ ok: false, error: `research on ${label} was cancelled` }), { once: true });
  });
  const research = async (): Promise<ResearchOutcome> => {
    let session: SubSession;
    try {
      session = await opening;
    } catch (err) {
      return { ok: false, error: `could not open a research session for ${label}: ${message(err)}` };
    }
    try {
      await makeReadOnly(session, label);
    } catch (err) {
      return { ok: false, error: `could not make the research session on ${label} read-only: ${message(err)}` };
    }
    progress(`researching ${label}`);
    session.onUpdate((u) => {
      if (u?.sessionUpdate === "tool_call") progress(`research: ${String(u.title ?? "a tool call")}`);
    });
    const turn = session.prompt(researchPrompt(q)).then(
      (ended) => ({ ended }),
      (err: unknown) => ({ failed: message(err) }),
    );
    const first = await Promise.race([delivered.then((findings) => ({ findings })), turn]);
    if ("findings" in first) return { ok: true, findings: first.findings };
    if ("failed" in first) return { ok: false, error: `the research session on ${label} failed: ${first.failed}` };
    // The agent ended its turn without return_response_to_user: what it said is the best answer there is.
    const said = first.ended.text.trim();
    if (said) return { ok: true, findings: said };
    return { ok: false, error: `the research session on ${label} ended (${first.ended.stopReason}) without findings` };
  };
  try {
    return await Promise.race([stopped, research()]);
  } finally {
    clearTimeout(timer);
    await closeWithin(opening, served.stop, deps.closeWaitMs);
  }
}

/**
 * Cancels and closes the research session, then stops serving its tools (in that order: a tool call
 * still on its way must find its server). Waits at most `ms`; the rest goes on in the background.
 */
async function closeWithin(opening: Promise<SubSession>, stopServing: () => void, ms: number): Promise<void> {
  const closing = opening.then(
    async (s) => {
      s.cancel();
      await s.close();
    },
    () => {},
  );
  const done = closing.finally(stopServing);
  let wait: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([done, new Promise<void>((resolve) => (wait = setTimeout(resolve, ms)))]);
  clearTimeout(wait);
}
