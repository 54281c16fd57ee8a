// Owns the crate-sources research proxy (SPEC §5.2) on top of the proxy library: every session the
// client opens (new, load, resume) gets an MCP server offering `rust_crate_query`; a call runs one
// research query (research-session.ts), or answers from the cache of recent identical ones.
// Does not touch processes, argv or the registry: cli/modes/crate-fetch-proxy.ts wires those in.
import { z } from "zod";
import type { McpCallContext, McpToolResult } from "../conductor/mcp-over-acp.ts";
import type { Proxy, ServedMcp } from "../conductor/proxy.ts";
import { log } from "../log.ts";
import { describeToolArgIssues } from "../zod-issue.ts";
import { ResearchCache } from "./research-cache.ts";
import { type ResearchDeps, type ResearchQuery, runResearch } from "./research-session.ts";
import queryDescription from "./rust-crate-query.md" with { type: "text" };

export const QUERY_SERVER = "crate-sources";

export interface CrateResearchOptions extends Omit<ResearchDeps, "proxy"> {
  /** RESEARCH_CACHE_ENTRIES and RESEARCH_CACHE_S (in ms). */
  cacheEntries: number;
  cacheMs: number;
  /** The folder of a session opened without a usable cwd. */
  defaultCwd: string;
  now?: () => number;
}

const queryInput = z.object({
  crate_name: z.string().min(1).describe("the crate's name, e.g. tokio"),
  crate_version: z.string().optional().describe("a semver range or exact version; default: Cargo.lock's pin, else the newest stable"),
  prompt: z.string().min(1).describe("the question to answer from the crate's source"),
});

const QUERY_TOOL = {
  name: "rust_crate_query",
  title: "Research a Rust crate's source",
  description: queryDescription.trim(),
  inputSchema: z.toJSONSchema(queryInput, { target: "draft-7", io: "input" }) as Record<string, unknown>,
  // Not read-only: the research agent's own tool calls are approved by this proxy, so the user approves the query.
  annotations: { readOnlyHint: false, openWorldHint: true },
};

function text(t: string, isError = false): McpToolResult {
  return { content: [{ type: "text", text: t }], ...(isError ? { isError: true } : {}) };
}

/** What makes two queries the same question: the folder (its Cargo.lock), the crate, the version asked, the prompt. */
function cacheKey(q: ResearchQuery): string {
  return JSON.stringify([q.cwd, q.crate_name.trim().toLowerCase(), q.crate_version?.trim() ?? "", q.prompt.trim()]);
}

/** Makes `proxy` the crate-sources component. */
export function attachCrateResearch(proxy: Proxy, opts: CrateResearchOptions): void {
  const cache = new ResearchCache<string>(opts.cacheEntries, opts.cacheMs, opts.now);
  const deps: ResearchDeps = { ...opts, proxy };
  // One server per folder (not per session): a query needs the asking session's cwd, and mcp/message
  // does not say which session asks. A folder's server is stopped when the last session opened in it
  // closes (one whose session/new failed waits for the next close in that folder).
  const servers = new Map<string, { served: ServedMcp; sessions: Set<string> }>();
  const sessionCwd = new Map<string, string>();
  const cwdOf = (params: any) => (typeof params?.cwd === "string" && params.cwd.startsWith("/") ? params.cwd : opts.defaultCwd);
  const release = (cwd: string) => {
    const entry = servers.get(cwd);
    if (!entry || entry.sessions.size > 0) return;
    entry.served.stop();
    servers.delete(cwd);
  };

  const query = async (cwd: string, args: Record<string, unknown>, ctx: McpCallContext): Promise<McpToolResult> => {
    const parsed = queryInput.safeParse(args);
    if (!parsed.success) return text(`rust_crate_query: invalid arguments: ${describeToolArgIssues(parsed.error)}`, true);
    const q: ResearchQuery = { ...parsed.data, cwd };
    const key = cacheKey(q);
    const hit = cache.get(key);
    if (hit) {
      ctx.progress(1, `answered from a research ${Math.round(hit.ageMs / 1000)} s ago`);
      return text(hit.value);
    }
    const started = Date.now();
    log.info("research started", { crate: q.crate_name, version: q.crate_version, cwd });
    const outcome = await runResearch(q, deps, ctx);
    log.info("research ended", { crate: q.crate_name, ms: Date.now() - started, ...(outcome.ok ? {} : { error: outcome.error }) });
    if (!outcome.ok) return text(outcome.error, true);
    cache.set(key, outcome.findings);
    return text(outcome.findings);
  };

  proxy.addMcpServers((params) => {
    const cwd = cwdOf(params);
    let entry = servers.get(cwd);
    if (!entry) {
      entry = { served: proxy.serveMcp(QUERY_SERVER, { tools: [QUERY_TOOL], call: (_name, args, ctx) => query(cwd, args, ctx) }), sessions: new Set() };
      servers.set(cwd, entry);
    }
    return [entry.served()];
  });
  proxy.onSessionOpened((sessionId, params) => {
    const cwd = cwdOf(params);
    sessionCwd.set(sessionId, cwd);
    servers.get(cwd)?.sessions.add(sessionId);
  });
  proxy.onRequest("session/close", async (params, next) => {
    try {
      return await next();
    } finally {
      const cwd = typeof params?.sessionId === "string" ? sessionCwd.get(params.sessionId) : undefined;
      if (cwd !== undefined) {
        sessionCwd.delete(params.sessionId);
        servers.get(cwd)?.sessions.delete(params.sessionId);
        release(cwd);
      }
    }
  });
}
