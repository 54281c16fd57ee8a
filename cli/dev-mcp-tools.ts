// Owns the dev tool list: the tools/ functions wrapped as MCP tool definitions with their
// descriptions, hints, precomputed input schemas and limits, plus the server instructions. Loaded
// when `tendril dev-mcp` runs or an agent session opens its in-process `dev` tools (zod only with
// the first tool call); the process and the exit path stay in dev-mcp.ts and agent-dev-tools.ts.
import { join } from "node:path";
import type { Limits } from "../core/limits.ts";
import { defineTool, noInput, type ToolDefinition } from "../core/mcp/tool-definition.ts";
import { serverInstructions, toolDescriptions } from "../tools/dev/instructions.ts";
import { log } from "../core/log.ts";
import { ShellTool, shellInput } from "../tools/dev/shell.ts";
import { GroupExecutor } from "../tools/dev/exec.ts";
import type { SandboxContext } from "../tools/dev/sandbox.ts";
import { pruneStaleSessions } from "../tools/dev/shell-capture.ts";
import { detectStack } from "../tools/dev/stack.ts";
import { StrReplaceTool, strReplaceInput } from "../tools/dev/str-replace.ts";
import { TodoList, todoInput } from "../tools/dev/todo.ts";
import listed from "../tools/dev/input-schemas.json" with { type: "json" };

export interface DevToolsOptions {
  root: string;
  /** Real paths of the session's additional workspace roots: the edit tool may write there too. */
  extraRoots?: readonly string[];
  limits: Limits;
  cacheDir: string;
  /** Environment for shell commands (PATH starts with the shim dir). */
  env: Record<string, string> | (() => Promise<Record<string, string>>);
  /** The sandbox for shell commands; unset or mode `off`: plain process groups. */
  sandbox?: Omit<SandboxContext, "root">;
}

export interface DevTools {
  tools: ToolDefinition[];
  instructions: string;
  shell: ShellTool;
  artifactDir: string;
}

function sessionName(): string {
  return `${new Date().toISOString().replace(/[:.]/g, "-")}-${process.pid}`;
}

export async function buildDevTools(opts: DevToolsOptions): Promise<DevTools> {
  const { root, limits } = opts;
  const artifactsParent = join(opts.cacheDir, "artifacts");
  const artifactDir = join(artifactsParent, sessionName());
  // Artifact dirs of sessions idle for ARTIFACTS_STALE_S are removed when a new server starts.
  void pruneStaleSessions(artifactsParent, limits.ARTIFACTS_STALE_S * 1000).then((n) => n > 0 && log.info("pruned old artifacts", { sessions: n }));
  const sandbox = opts.sandbox && opts.sandbox.settings.mode !== "off" ? { ...opts.sandbox, root } : undefined;
  // Loaded only for a confined setting: `off` (the default) costs nothing.
  const sb = sandbox && (await import("../tools/dev/sandbox.ts"));
  const shell = new ShellTool({
    root,
    env: opts.env,
    ...(sandbox && sb && {
      executor: new GroupExecutor(sb.sandboxLauncher(sandbox)),
      explainFailure: (o) => sb.explainSandboxFailure(sandbox, `${o.capture.stdout}\n${o.capture.stderr}`),
    }),
    artifactDir,
    limits: {
      inlineBytes: limits.SHIM_OUTPUT_BYTES,
      inlineLines: limits.SHIM_OUTPUT_LINES,
      tailBytes: limits.SHELL_TAIL_BYTES,
      captureBytes: limits.SHELL_CAPTURE_BYTES,
      defaultTimeoutS: limits.SHELL_TIMEOUT_S,
      maxTimeoutS: limits.SHELL_MAX_TIMEOUT_S,
      artifacts: limits.SHELL_ARTIFACTS,
      maxRunning: limits.MAX_PARALLEL_TOOLS * 2,
    },
  });
  const editor = new StrReplaceTool({
    root,
    extraRoots: opts.extraRoots ?? [],
    maxFileBytes: limits.MAX_EDIT_FILE_BYTES,
    maxReplyBytes: limits.MAX_TOOL_RESULT_BYTES,
    tempStaleMs: limits.EDIT_TEMP_STALE_S * 1000,
  });
  const todo = new TodoList({ maxItems: limits.TODO_ITEMS, maxItemChars: limits.TODO_ITEM_CHARS });
  const text = toolDescriptions(limits);
  const tools: ToolDefinition[] = [
    defineTool({
      name: "shell",
      title: "Run a shell command",
      description: text.shell,
      inputSchema: shellInput,
      listedSchema: listed.shell,
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
      run: (args, signal) => shell.call(args, signal),
    }),
    defineTool({
      name: "str_replace",
      title: "Edit a file",
      description: text.strReplace,
      inputSchema: strReplaceInput,
      listedSchema: listed.str_replace,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (args) => editor.call(args),
    }),
    // Read-only for permission purposes: it changes only this session's in-memory list, never the workspace.
    defineTool({
      name: "todo",
      title: "Todo list",
      description: text.todo,
      inputSchema: todoInput,
      listedSchema: listed.todo,
      annotations: { readOnlyHint: true, openWorldHint: false },
      run: async (args) => todo.update(args),
    }),
    defineTool({
      name: "_Stop",
      description: text.stop,
      inputSchema: noInput,
      listedSchema: listed.hook,
      annotations: { readOnlyHint: true },
      run: async () => ({ text: todo.stopObjection() }),
    }),
    defineTool({
      name: "_PostCompact",
      description: text.postCompact,
      inputSchema: noInput,
      listedSchema: listed.hook,
      annotations: { readOnlyHint: true },
      run: async () => ({ text: todo.afterCompaction() }),
    }),
  ];
  const plain = serverInstructions(root, await detectStack(root), limits);
  const instructions = sandbox && sb ? `${plain.trimEnd()}\n${sb.describeSandbox(sandbox)}\n` : plain;
  return { tools, instructions, shell, artifactDir };
}
