// Owns the list of every `import()` in product code, with why it is deferred and what it costs. The rule
// (ARCHITECTURE.md): a mode loads its own chunk with one import; inside a mode imports are static, except
// these measured exceptions. scripts/check-layers.ts refuses an `import()` missing here, and an entry no
// longer in the code. Costs were measured on a 2-core VM against a ~10-15 ms start (`tendril --version`
// ~10 ms, `tendril agent` spawn → initialize answer ~14 ms).

export interface Deferred {
  /** The importing file. */
  from: string;
  /** The specifier, as written. */
  spec: string;
  why: string;
}

const MODE = "a mode's (or sub-mode's) own chunk, loaded once when it runs";

export const DEFERRED_IMPORTS: readonly Deferred[] = [
  // ---- mode chunks: the entry chooses, the mode loads once
  { from: "main.ts", spec: "./cli/program.ts", why: "the command line parser (commander and every mode's flags, ~3 ms): only when no fast path (cli/quick.ts) answers" },
  { from: "cli/quick.ts", spec: "./modes/agent-run.ts", why: MODE },
  { from: "cli/quick.ts", spec: "./modes/prompt-run.ts", why: MODE },
  { from: "cli/quick.ts", spec: "./modes/rg.ts", why: MODE },
  { from: "cli/quick.ts", spec: "./modes/tree.ts", why: MODE },
  { from: "cli/quick.ts", spec: "../tools/dev/sandbox-forward.ts", why: MODE },
  { from: "cli/modes/agent.ts", spec: "./agent-run.ts", why: MODE },
  { from: "cli/modes/prompt.ts", spec: "./prompt-run.ts", why: MODE },
  { from: "cli/modes/dev-mcp.ts", spec: "./dev-mcp-run.ts", why: MODE },
  { from: "cli/modes/crate-fetch.ts", spec: "./crate-fetch-run.ts", why: MODE },
  { from: "cli/modes/crate-fetch-run.ts", spec: "./crate-fetch-mcp.ts", why: MODE },
  { from: "cli/modes/crate-fetch-run.ts", spec: "./crate-fetch-proxy.ts", why: MODE },
  { from: "cli/modes/conductor.ts", spec: "./conductor-run.ts", why: MODE },
  { from: "cli/modes/conductor.ts", spec: "./conductor-bridge.ts", why: "the MCP bridge an agent starts per proxy server: its start stays a bare process start" },
  { from: "cli/modes/conductor.ts", spec: "./conductor-trace.ts", why: MODE },
  { from: "cli/modes/conductor.ts", spec: "./trace-view.ts", why: MODE },
  { from: "cli/modes/conductor-run.ts", spec: "./crate-fetch-run.ts", why: "an in-process component (`tendril:crate-sources`): only when a chain names it" },
  { from: "cli/modes/conductor-run.ts", spec: "./crate-fetch-proxy.ts", why: "an in-process component (`tendril:crate-sources`): only when a chain names it" },
  { from: "cli/modes/rg.ts", spec: "./rg-real.ts", why: "the real ripgrep's runner (node:child_process, node:os): only when one is on PATH" },
  { from: "cli/modes/rg.ts", spec: "./rg-builtin.ts", why: "the built-in search: only when no real ripgrep is on PATH" },
  // ---- measured exceptions inside a mode
  { from: "core/subreaper.ts", spec: "bun:ffi", why: "the FFI and libc (~2 ms to load and link): only when a process group is first started" },
  { from: "tools/dev/fs-events.ts", spec: "bun:ffi", why: "the FFI and libc (~2 ms to load and link): only when a confined command's git check first walks" },
  { from: "core/host-patterns.ts", spec: "./public-suffix.ts", why: "the Public Suffix List (tldts, ~30 ms to load, ~430 KB of the binary): only when a sandbox_allow_domains pattern is a `*.` wildcard" },
  { from: "cli/modes/prompt-run.ts", spec: "../compose/prompt-agent.ts", why: "the whole in-process agent (~5 ms): only without --agent" },
  { from: "cli/modes/prompt-run.ts", spec: "../../core/acp-client/output-schema.ts", why: "the JSON Schema validator (~0.6 ms to load, ~0.8 ms to check a schema and an answer): only with --output-schema" },
  { from: "cli/modes/agent-run.ts", spec: "../../tools/dev/sandbox.ts", why: "the sandbox engine (node:net, node:os, child_process, ~1.5 ms): only for a confined setting, sandbox_hide or --check-sandbox" },
  { from: "cli/compose/agent-dev-tools.ts", spec: "../../tools/dev/sandbox.ts", why: "the sandbox engine: only for a confined setting" },
  { from: "tools/dev/tool-list.ts", spec: "./sandbox.ts", why: "the sandbox engine: only for a confined setting" },
  { from: "cli/compose/agent-runtime.ts", spec: "./agent-sessions.ts", why: "the session layer (sessions, the turn loop, the MCP pool, the stores: ~1 ms to load and build): once the first initialize is answered, so the handshake does not wait for it" },
  { from: "core/acp/agent-server.ts", spec: "./v1/server.ts", why: "the v1 method table and the session engine behind it: once the first initialize is answered (initialize.ts answers it)" },
  { from: "core/acp/agent-server.ts", spec: "./v2/server.ts", why: "the v2 method table and the session engine behind it: once the first initialize is answered (initialize.ts answers it)" },
  { from: "cli/compose/agent-dev-tools.ts", spec: "../../tools/dev/tool-list.ts", why: "the dev tools (~2 ms): with the first session, after initialize is answered" },
  { from: "cli/compose/lazy-shims.ts", spec: "../process/shim-dir.ts", why: "the rg/tree shim folder: made with the first shell command, never for a session without one" },
  { from: "core/llm/provider.ts", spec: "./anthropic.ts", why: "the Anthropic SDK (its base client and Messages, ~2 ms): with the first LLM request, after initialize is answered" },
  { from: "core/llm/provider.ts", spec: "./openai.ts", why: "the OpenAI SDK (~10 ms): with the first LLM request, after initialize is answered" },
  { from: "core/llm/provider.ts", spec: "./replay.ts", why: "replay: only with TENDRIL_PROVIDER=replay" },
  { from: "core/llm/provider.ts", spec: "./record.ts", why: "recording: only with TENDRIL_RECORD" },
  { from: "core/mcp/shared-server.ts", spec: "./client.ts", why: "the MCP client SDK (~8 ms): only when a session declares an external server" },
  { from: "core/mcp/client.ts", spec: "@modelcontextprotocol/sdk/client/sse.js", why: "HTTP transports: only for a url server" },
  { from: "core/mcp/client.ts", spec: "@modelcontextprotocol/sdk/client/streamableHttp.js", why: "HTTP transports: only for a url server" },
  { from: "core/zod-issue.ts", spec: "zod", why: "zod (~5 ms): only when something is validated (a config file, a tool call)" },
  { from: "core/policy/rules.ts", spec: "picomatch", why: "globs (~1 ms): with the first permission rule" },
  { from: "tools/search/rg-types.ts", spec: "picomatch", why: "globs: only for a search that names file types" },
  { from: "tools/search/rg-run.ts", spec: "./rg-types.ts", why: "file types (~0.5 ms): only with -t/-T/--type-list" },
  { from: "tools/search/rg-parallel.ts", spec: "node:os", why: "node:os (~0.3 ms of a small search or tree): only once a walk is large enough for worker threads" },
  { from: "tools/crates/cache.ts", spec: "./verify-extract.ts", why: "tar and the archive checks: only on a cache miss" },
];
