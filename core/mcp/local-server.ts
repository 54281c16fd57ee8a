// Owns a tool server that runs inside the agent (the default `dev` tools): the same place in a
// session's catalog as an MCP server — listed, named and called alike — without a process, a pipe
// or the MCP SDK. Each session gets its own (the tools hold session state). Does not define the
// tools (cli/ builds them from tools/ and passes a factory in the spec).
import { errorResult, type RawTool } from "./call-result.ts";
import type { ToolDefinition } from "./tool-definition.ts";
import { callInProcess, listedTool } from "./tool-serving.ts";
import type { LocalTools, McpCallOptions, McpCallResult, McpServerSpec } from "./types.ts";

export class LocalServer {
  state: "starting" | "live" | "gone" = "starting";
  refs = 0;
  idleTimer?: ReturnType<typeof setTimeout>;
  readonly ready: Promise<void>;
  #local?: LocalTools;
  #listed: RawTool[] = [];
  readonly #byName = new Map<string, ToolDefinition>();

  constructor(readonly spec: McpServerSpec) {
    const factory = spec.local;
    if (!factory) throw new Error(`MCP server ${spec.name}: a local server needs a factory`);
    this.ready = factory().then(async (local) => {
      this.#local = local;
      this.#listed = await Promise.all(local.tools.map(async (t) => ({ ...(await listedTool(t)), ...(t.liveOutput ? { liveOutput: true as const } : {}) })));
      for (const t of local.tools) this.#byName.set(t.name, t);
      if (this.state === "starting") this.state = "live";
    });
  }

  get label(): string {
    return this.spec.name;
  }

  get pid(): number | undefined {
    return undefined;
  }

  tools(): RawTool[] {
    return this.state === "live" ? this.#listed : [];
  }

  instructions(): string | undefined {
    return this.#local?.instructions;
  }

  /** Its tools never change while it lives. */
  subscribe(_listener: () => void): () => void {
    return () => {};
  }

  async call(tool: string, args: Record<string, unknown>, opts: McpCallOptions & { label?: string }): Promise<McpCallResult> {
    const def = this.#byName.get(tool);
    if (this.state !== "live" || !def) return errorResult(`unknown tool: ${tool}`);
    const signal = opts.signal ?? new AbortController().signal;
    if (signal.aborted) return errorResult("cancelled");
    const io = opts.onOutput || opts.onEnd ? { ...(opts.onOutput ? { onOutput: opts.onOutput } : {}), ...(opts.onEnd ? { onEnd: opts.onEnd } : {}) } : undefined;
    const result = await callInProcess(def, args, signal, io);
    return signal.aborted ? errorResult("cancelled") : result;
  }

  async stop(): Promise<void> {
    this.state = "gone";
    await this.ready.catch(() => undefined);
    await this.#local?.close();
  }
}
