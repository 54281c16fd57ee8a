// Owns the dev tool list: this folder's functions wrapped as MCP tool definitions with their
// descriptions, hints, precomputed input schemas and limits, plus the server instructions. Loaded
// when `tendril dev-mcp` runs or an agent session opens its in-process `dev` tools (zod only with
// the first tool call); the process and the exit path stay in cli/ (modes/dev-mcp-run.ts, compose/agent-dev-tools.ts).
import { join } from "node:path";
import type { Limits } from "../../core/limits.ts";
import { defineTool, HOOK, noInput, type ToolDefinition } from "../../core/mcp/tool-definition.ts";
import { serverInstructions, toolDescriptions } from "./instructions.ts";
import { log } from "../../core/log.ts";
import { ShellTool, shellInput, shellKillInput, shellReadInput, shellWriteInput } from "./shell.ts";
import { backgroundLimits } from "./background.ts";
import { GroupExecutor } from "./exec.ts";
import type { SandboxContext } from "./sandbox.ts";
import type { SandboxMode } from "../../core/sandbox-modes.ts";
import { type Launcher, plainLauncher } from "./exec.ts";
import { pruneStaleSessions } from "./shell-capture.ts";
import { detectStack } from "./stack.ts";
import { StrReplaceTool, strReplaceInput } from "./str-replace.ts";
import { TodoList, todoInput } from "./todo.ts";
import listed from "./input-schemas.json" with { type: "json" };

export interface DevToolsOptions {
  root: string;
  /** Real paths of the session's additional workspace roots: the edit tool may write there too. */
  extraRoots?: readonly string[];
  /** Offer the `_ShellUnsandboxed` hook (a confined shell only): for the agent's own in-process tools,
   *  where the agent asks the user first. Never over `tendril dev-mcp`: any client could call it by name. */
  unsandboxedRetry?: boolean;
  limits: Limits;
  cacheDir: string;
  /** Environment for shell commands (PATH starts with the shim dir). */
  env: Record<string, string> | (() => Promise<Record<string, string>>);
  /** The sandbox for shell commands; unset or mode `off`: plain process groups. */
  sandbox?: Omit<SandboxContext, "root">;
  /** The mode in force, read at each command (an agent session's `sandbox` config option); unset:
   *  `sandbox.settings.mode`, fixed. */
  sandboxMode?: () => SandboxMode;
  /** `shell_output` (config): `raw` sends a long output as printed (its tail past the cap); default `digest`. */
  shellOutput?: "digest" | "raw";
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
  const base = opts.sandbox;
  const current = opts.sandboxMode ?? (() => base?.settings.mode ?? "off");
  const ctxFor = (mode: SandboxMode): SandboxContext => ({ ...base!, settings: { ...base!.settings, mode }, root, extraRoots: opts.extraRoots ?? [], gitWalkDirs: limits.SANDBOX_GIT_WALK_DIRS, killHoldMs: limits.SANDBOX_KILL_HOLD_MS, proxyHead: { maxBytes: limits.SANDBOX_PROXY_HEAD_BYTES, timeoutMs: limits.SANDBOX_PROXY_HEAD_TIMEOUT_S * 1000 }, alsoShown: [artifactDir] });
  // Confinement can apply: the setting is confined now, or a session may switch it on.
  const sandbox = base !== undefined && (opts.sandboxMode !== undefined || base.settings.mode !== "off");
  // Loaded only for a confined setting: `off` (the default) costs nothing.
  const load = () => import("./sandbox.ts");
  const sb = sandbox && current() !== "off" ? await load() : undefined;
  const launchers = new Map<SandboxMode, Promise<Launcher>>();
  const launcher: Launcher = async (req) => {
    const mode = current();
    if (mode === "off") return plainLauncher(req);
    let l = launchers.get(mode);
    if (!l) launchers.set(mode, (l = load().then((m) => m.sandboxLauncher(ctxFor(mode)))));
    return (await l)(req);
  };
  const shell = new ShellTool({
    root,
    env: opts.env,
    ...(sandbox && { executor: new GroupExecutor(launcher) }),
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
      background: backgroundLimits(limits),
      ...(opts.shellOutput !== "raw" ? { digestAboveBytes: limits.SHELL_DIGEST_ABOVE_BYTES } : {}),
    },
  });
  const tools = devToolDefinitions(opts, shell, sandbox);
  const plain = serverInstructions(root, await detectStack(root), limits);
  const instructions = sb ? `${plain.trimEnd()}\n${sb.describeSandbox(ctxFor(current()))}\n` : plain;
  return { tools, instructions, shell, artifactDir };
}

/** What a tool may do, as MCP's hints say it (the permission policy reads them). */
const HINTS = {
  /** Runs programs: anything may change, here or elsewhere. */
  runs: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  /** Reads or changes only what this session started or keeps (its background commands, its todo list). */
  session: { readOnlyHint: true, openWorldHint: false },
  /** Changes a workspace file. */
  edits: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  /** A hook the agent calls, never offered to a model. */
  hook: { readOnlyHint: true },
} as const;

/** The tool definitions over one shell: the model's tools and the agent's hooks. */
function devToolDefinitions(opts: DevToolsOptions, shell: ShellTool, sandbox: boolean): ToolDefinition[] {
  const { root, limits } = opts;
  const editor = new StrReplaceTool({
    root,
    extraRoots: opts.extraRoots ?? [],
    maxFileBytes: limits.MAX_EDIT_FILE_BYTES,
    maxReplyBytes: limits.MAX_TOOL_RESULT_BYTES,
    tempStaleMs: limits.EDIT_TEMP_STALE_S * 1000,
  });
  const todo = new TodoList({ maxItems: limits.TODO_ITEMS, maxItemChars: limits.TODO_ITEM_CHARS });
  const text = toolDescriptions(limits);
  return [
    defineTool({
      name: "shell",
      title: "Run a shell command",
      description: text.shell,
      inputSchema: shellInput,
      listedSchema: listed.shell,
      annotations: HINTS.runs,
      liveOutput: true,
      run: (args, signal, io) => shell.call(args, signal, false, io?.onOutput, io?.onEnd),
    }),
    // Reading what this session's background commands printed changes nothing.
    defineTool({
      name: "shell_read",
      title: "Read a background command's output",
      description: text.shellRead,
      inputSchema: shellReadInput,
      listedSchema: listed.shell_read,
      annotations: HINTS.session,
      run: (args) => shell.read(args),
    }),
    // What is written is input to a program the session started: asked as a command is (the policy
    // reads the text as one, core/policy/policy.ts).
    defineTool({
      name: "shell_write",
      title: "Write to a background command's stdin",
      description: text.shellWrite,
      inputSchema: shellWriteInput,
      listedSchema: listed.shell_write,
      annotations: HINTS.runs,
      run: (args) => shell.write(args),
    }),
    // Ending a command this session started changes nothing else.
    defineTool({
      name: "shell_kill",
      title: "End a background command",
      description: text.shellKill,
      inputSchema: shellKillInput,
      listedSchema: listed.shell_kill,
      annotations: HINTS.session,
      run: (args) => shell.kill(args),
    }),
    defineTool({
      name: "str_replace",
      title: "Edit a file",
      description: text.strReplace,
      inputSchema: strReplaceInput,
      listedSchema: listed.str_replace,
      annotations: HINTS.edits,
      run: (args) => editor.call(args),
    }),
    // Read-only for permission purposes: it changes only this session's in-memory list, never the workspace.
    defineTool({
      name: "todo",
      title: "Todo list",
      description: text.todo,
      inputSchema: todoInput,
      listedSchema: listed.todo,
      annotations: HINTS.session,
      run: async (args) => todo.update(args),
    }),
    // Only with a confined shell: the agent runs one command the sandbox stopped again, unconfined, once the
    // user allowed it (core/agent/sandbox-retry.ts). A hook: never offered to a model.
    ...(sandbox && opts.unsandboxedRetry
      ? [
          defineTool({
            name: HOOK.shellUnsandboxed,
            description: "Runs one shell command without the sandbox, after the user allowed it (called by the agent, never by a model).",
            inputSchema: shellInput,
            listedSchema: listed.shell,
            annotations: HINTS.runs,
            liveOutput: true,
            run: (args, signal, io) => shell.call(args, signal, true, io?.onOutput),
          }),
        ]
      : []),
    defineTool({
      name: HOOK.stop,
      description: text.stop,
      inputSchema: noInput,
      listedSchema: listed.hook,
      annotations: HINTS.hook,
      run: async () => ({ text: todo.stopObjection() }),
    }),
    defineTool({
      name: HOOK.postCompact,
      description: text.postCompact,
      inputSchema: noInput,
      listedSchema: listed.hook,
      annotations: HINTS.hook,
      run: async () => ({ text: todo.afterCompaction() }),
    }),
  ];
}
