// Owns the `plan` mode's way out: the `plan__ready` tool, offered to the model only while the session
// is in plan mode, which shows the plan as ACP `plan` entries and asks the user whether to switch
// modes and carry it out. The denials themselves are the policy engine's (policy.ts); the mode switch
// and what the client hears of it are the session's (the `switchMode` it is given).
import type { PermissionOption, SessionUpdate } from "@agentclientprotocol/sdk";
import type { PermissionMode } from "../policy/modes.ts";
import type { McpCallResult, McpSessionTools, McpToolInfo } from "../mcp/types.ts";
import type { Policy } from "../policy/policy.ts";
import { cutChars } from "../text-bounds.ts";
import { overlayTools } from "../mcp/tool-overlay.ts";
import type { PermissionAnswer, PermissionAsk } from "./permission-ask.ts";
import description from "./plan-ready.md" with { type: "text" };

export const PLAN_TOOL = "plan__ready";

export interface PlanModeDeps {
  policy: Policy;
  /** The turn's updates (recorded, so a reload shows the plan). */
  emit(update: SessionUpdate): void;
  askPermission(ask: PermissionAsk, signal: AbortSignal): Promise<PermissionAnswer>;
  /** Switches the session's mode, telling the client as every other path does. */
  switchMode(mode: PermissionMode): Promise<void>;
  maxSteps: number;
  maxStepChars: number;
}

/** The question's options; each kind names one answer, so the answer's kind says which was chosen. */
const CHOICES: { option: PermissionOption; mode: PermissionMode | undefined }[] = [
  { option: { optionId: "auto-edit", name: "Switch to Auto-edit and carry out the plan", kind: "allow_always" }, mode: "auto-edit" },
  { option: { optionId: "ask", name: "Switch to Ask and carry out the plan", kind: "allow_once" }, mode: "ask" },
  { option: { optionId: "plan", name: "Stay in Plan mode", kind: "reject_once" }, mode: undefined },
];

function toolInfo(maxSteps: number, maxStepChars: number): McpToolInfo {
  const text = description.replaceAll("{{TODO_ITEMS}}", String(maxSteps)).replaceAll("{{TODO_ITEM_CHARS}}", String(maxStepChars)).trim();
  return {
    qualifiedName: PLAN_TOOL,
    server: "plan",
    tool: "ready",
    title: "Present the plan",
    description: text,
    inputSchema: {
      type: "object",
      properties: {
        steps: { type: "array", items: { type: "string" }, minItems: 1, maxItems: maxSteps, description: "the plan, one short step each" },
        summary: { type: "string", description: "what the plan does, in a sentence or two (optional)" },
      },
      required: ["steps"],
    },
    // It changes nothing itself: the policy lets it run in plan mode.
    readOnly: true,
    hook: false,
  };
}

const TITLE_CHARS = 200;
const clip = (text: string) => cutChars(text, TITLE_CHARS);

const result = (text: string, isError = false): McpCallResult => ({ content: [{ type: "text", text }], text, isError });

/** The steps, or what is wrong with them (the model reads it and tries again). */
function stepsOf(args: Record<string, unknown>, maxSteps: number, maxChars: number): string[] | string {
  const steps = args.steps;
  if (!Array.isArray(steps) || steps.length === 0) return "steps must be a non-empty array of strings";
  if (steps.length > maxSteps) return `at most ${maxSteps} steps (TODO_ITEMS); merge some`;
  for (const [i, s] of steps.entries()) {
    if (typeof s !== "string" || s.trim() === "") return `steps[${i}] must be a non-empty string`;
    if (s.length > maxChars) return `steps[${i}] is over ${maxChars} characters (TODO_ITEM_CHARS); shorten it`;
  }
  if (args.summary !== undefined && typeof args.summary !== "string") return "summary must be a string";
  return steps.map((s: string) => s.trim());
}

/** The session's tools with `plan__ready` among them while the mode is `plan`. */
export function withPlanTool(tools: McpSessionTools, deps: PlanModeDeps): McpSessionTools {
  const info = toolInfo(deps.maxSteps, deps.maxStepChars);
  return overlayTools(tools, {
    tools: (inner) => (deps.policy.mode === "plan" ? [...inner, info] : inner),
    call: (name, args, opts, next) => (name === PLAN_TOOL ? ready(args, deps, opts?.callId ?? PLAN_TOOL, opts?.signal) : next(name, args, opts)),
  });
}

async function ready(args: Record<string, unknown>, deps: PlanModeDeps, toolCallId: string, signal = new AbortController().signal): Promise<McpCallResult> {
  if (deps.policy.mode !== "plan") return result(`the session is in ${deps.policy.mode} mode, not plan mode: go on with the work`, true);
  const steps = stepsOf(args, deps.maxSteps, deps.maxStepChars);
  if (typeof steps === "string") return result(`plan not presented: ${steps}`, true);
  deps.emit({ sessionUpdate: "plan", entries: steps.map((content) => ({ content, priority: "medium", status: "pending" })) });
  const summary = typeof args.summary === "string" && args.summary.trim() !== "" ? args.summary.trim() : undefined;
  const answer = await deps.askPermission(
    {
      toolCallId,
      title: summary ? clip(`Ready to carry out the plan? ${summary}`) : "Ready to carry out the plan?",
      kind: "switch_mode",
      rawInput: { steps, ...(summary ? { summary } : {}) },
      _meta: { toolName: PLAN_TOOL },
      options: CHOICES.map((c) => c.option),
    },
    signal,
  );
  if (answer === "cancelled") return result("cancelled", true);
  const mode = CHOICES.find((c) => c.option.kind === answer)?.mode;
  if (!mode) return result("The user kept plan mode: the plan is not approved yet. Ask what to change, or refine the plan and present it again.");
  await deps.switchMode(mode);
  return result(`The user approved the plan and switched to ${mode} mode. Carry out the plan now, step by step; keep the todo list current.`);
}
