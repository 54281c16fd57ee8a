// Owns one crate research query (SPEC §5.2): a session opened on the successor, whose MCP server (served
// by this proxy over MCP-over-ACP) offers get_rust_crate_source and return_response_to_user; the prompt;
// waiting for the findings within the timeout; the research's tool calls reported as progress; closing
// the session (and only then its server) on every path. Does not decide which queries run or cache them
// (research-proxy.ts) and knows no registry (the source tool is given).
import type { McpCallContext } from "../conductor/mcp-over-acp.ts";
import { toolServer } from "../conductor/mcp-over-acp.ts";
import type { Proxy, SubSession } from "../conductor/proxy.ts";
import { defineTool, type ToolDefinition } from "../mcp/tool-definition.ts";
import { lazySchema } from "../zod-issue.ts";
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
}

export type ResearchOutcome = { ok: true; findings: string } | { ok: false; error: string };

export const RESEARCH_SERVER = "crate-research";

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function researchPrompt(q: ResearchQuery): string {
  const version = q.crate_version?.trim() ? `version ${q.crate_version.trim()}` : "the version the workspace's Cargo.lock pins, else the newest stable";
  return promptTemplate.replaceAll("{{crate}}", q.crate_name).replaceAll("{{version}}", version).replaceAll("{{prompt}}", q.prompt.trim());
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
  const served = deps.proxy.serveMcp(RESEARCH_SERVER, await toolServer([deps.sourceTool(q.cwd), returnTool(deliver)], deps.sourceInstructions));
  let step = 0;
  const progress = (text: string) => ctx.progress(++step, text);
  const opening = deps.proxy.openSession({ cwd: q.cwd, mcpServers: [served()], _meta: { systemPrompt: { append: systemText.trim() } } });
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
