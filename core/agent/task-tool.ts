// Owns the `agent__task` tool the model hands work to a subagent with (SPEC §3.10): its description and
// schema, checking its arguments (an empty prompt or description is an error the model reads), the
// per-turn bound (MAX_SUBAGENTS_PER_TURN) and offering it beside the session's tools. Running the
// child session is the runner's (core/acp/subagents.ts); this module knows nothing of ACP.
import type { McpCallOptions, McpCallResult, McpSessionTools, McpToolInfo } from "../mcp/types.ts";
import { overlayTools } from "../mcp/tool-overlay.ts";
import description from "./task.md" with { type: "text" };

export const TASK_TOOL = "agent__task";

/** What the model asked a subagent to do. */
export interface TaskRequest {
  description: string;
  prompt: string;
  /** Another model for the child; absent = the parent's. */
  model?: string;
}

/** Runs one subagent to its final answer (or says why it could not, as an error result). */
export type TaskRunner = (task: TaskRequest, opts: McpCallOptions) => Promise<McpCallResult>;

export const toolResult = (text: string, isError = false, structured?: unknown): McpCallResult => ({
  content: [{ type: "text", text }],
  text,
  isError,
  ...(structured !== undefined ? { structured } : {}),
});

function toolInfo(maxPerTurn: number): McpToolInfo {
  return {
    qualifiedName: TASK_TOOL,
    server: "agent",
    tool: "task",
    title: "Run a subagent",
    description: description.replaceAll("{{MAX_SUBAGENTS_PER_TURN}}", String(maxPerTurn)).trim(),
    inputSchema: {
      type: "object",
      properties: {
        description: { type: "string", description: "a short title for the task (3–6 words)" },
        prompt: { type: "string", description: "the whole task, self-contained: the subagent sees nothing else" },
        model: { type: "string", description: "another model for the subagent (optional; default: yours)" },
      },
      required: ["description", "prompt"],
    },
    // It changes nothing itself: what the child does passes the policy call by call.
    readOnly: true,
    hook: false,
  };
}

/** The task, or what is wrong with the arguments (the model reads it and tries again). */
export function taskOf(args: Record<string, unknown>): TaskRequest | string {
  const { description: d, prompt, model } = args;
  if (typeof prompt !== "string" || prompt.trim() === "") return "prompt must be a non-empty string: the whole task for the subagent";
  if (typeof d !== "string" || d.trim() === "") return "description must be a non-empty string: a short title for the task";
  if (model !== undefined && (typeof model !== "string" || model.trim() === "")) return "model must be a non-empty string (a model id) when given";
  return { description: d.trim(), prompt, ...(typeof model === "string" ? { model: model.trim() } : {}) };
}

/** The task tool's calls for one turn: arguments checked, at most `maxPerTurn` tasks run. */
export function taskCalls(run: TaskRunner, maxPerTurn: number): (args: Record<string, unknown>, opts?: McpCallOptions) => Promise<McpCallResult> {
  let started = 0;
  return (args, opts = {}) => {
    const task = taskOf(args);
    if (typeof task === "string") return Promise.resolve(toolResult(`task not started: ${task}`, true));
    if (started >= maxPerTurn) return Promise.resolve(toolResult(`task not started: this turn already started ${maxPerTurn} subagents (MAX_SUBAGENTS_PER_TURN); do the rest yourself or in the next turn`, true));
    started++;
    return run(task, opts);
  };
}

/** `tools` with `agent__task` among them (last); at most `maxPerTurn` tasks run for one wrapper (one turn). */
export function withTaskTool(tools: McpSessionTools, run: TaskRunner, maxPerTurn: number): McpSessionTools {
  const info = toolInfo(maxPerTurn);
  const call = taskCalls(run, maxPerTurn);
  return overlayTools(tools, {
    tools: (inner) => [...inner, info],
    call: (name, args, opts, next) => (name === TASK_TOOL ? call(args, opts) : next(name, args, opts)),
  });
}
