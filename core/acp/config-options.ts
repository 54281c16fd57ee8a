// Owns how the session's config options are shown (ACP `SessionConfigOption`, by category) and how a
// requested value is checked, for every option but `model` (model-choice.ts): the `mode` (and the
// modes state), `thought_level` (off/low/medium/high, for a provider that maps it), and the dev shell's `sandbox`. Applying a
// value is session-config.ts's; mapping the level onto an API is the provider adapters' (core/llm).
import type { SessionConfigOption, SessionModeState } from "@agentclientprotocol/sdk";
import { PERMISSION_MODES, type PermissionMode } from "../policy/modes.ts";
import { isSandboxMode, SANDBOX_MODES, type SandboxMode } from "../sandbox-modes.ts";
import { THOUGHT_LEVELS, type ThoughtLevel } from "../llm/types.ts";
import { AcpError, INVALID_PARAMS } from "./acp-error.ts";

export const MODE_OPTION_ID = "mode";
export const THOUGHT_OPTION_ID = "thought_level";

const MODE_INFO: Record<PermissionMode, { name: string; description: string }> = {
  ask: { name: "Ask", description: "Ask before any tool that may change things (rules and read-only tools decide first)" },
  "auto-edit": { name: "Auto-edit", description: "Edit files without asking; ask before commands" },
  yolo: { name: "Yolo", description: "Run every tool without asking (deny rules still apply)" },
  "read-only": { name: "Read-only", description: "Only read-only tools run; everything else is denied" },
  plan: { name: "Plan", description: "Explore and write a plan; nothing that may change things runs until you approve the plan and switch modes" },
};

/** The modes as session/new's `modes` (the older form some clients read). */
export function modeState(current: PermissionMode): SessionModeState {
  return { currentModeId: current, availableModes: PERMISSION_MODES.map((id) => ({ id, ...MODE_INFO[id] })) };
}

/** The mode as a config option (category `mode`): what clients that read config options show. */
export function modeOption(current: PermissionMode): SessionConfigOption {
  return {
    id: MODE_OPTION_ID,
    name: "Mode",
    category: "mode",
    type: "select",
    currentValue: current,
    options: PERMISSION_MODES.map((id) => ({ value: id, name: MODE_INFO[id].name, description: MODE_INFO[id].description })),
  };
}

const THOUGHT_INFO: Record<ThoughtLevel, { name: string; description: string }> = {
  off: { name: "Off", description: "No extended reasoning requested (OpenAI-style endpoints: the model's default)" },
  low: { name: "Low", description: "A little reasoning first (Anthropic: a small thinking budget; OpenAI: reasoning effort low)" },
  medium: { name: "Medium", description: "More reasoning (Anthropic: a larger thinking budget; OpenAI: reasoning effort medium)" },
  high: { name: "High", description: "The most reasoning (Anthropic: the largest thinking budget; OpenAI: reasoning effort high)" },
};

/** `thought_level` as clients show it (category `thought_level`). */
export function thoughtOption(current: ThoughtLevel): SessionConfigOption {
  return {
    id: THOUGHT_OPTION_ID,
    name: "Thinking",
    category: "thought_level",
    type: "select",
    currentValue: current,
    options: THOUGHT_LEVELS.map((value) => ({ value, ...THOUGHT_INFO[value] })),
  };
}

/** A requested level, or -32602 naming the levels. */
export function checkThoughtLevel(value: unknown): ThoughtLevel {
  if (typeof value === "string" && THOUGHT_LEVELS.includes(value as ThoughtLevel)) return value as ThoughtLevel;
  throw new AcpError(INVALID_PARAMS, `unknown thought_level ${JSON.stringify(value)} (levels: ${THOUGHT_LEVELS.join(", ")})`);
}

export const SANDBOX_OPTION_ID = "sandbox";

const SANDBOX_INFO: Record<SandboxMode, { name: string; description: string }> = {
  off: { name: "Off", description: "Shell commands run unconfined" },
  "read-only": { name: "Read-only", description: "Shell commands run in a sandbox: nothing writable but a private temp dir, secrets hidden, network only as configured" },
  "workspace-write": { name: "Workspace-write", description: "Shell commands run in a sandbox: the workspace writable (not .git/hooks, .git/config), secrets hidden, network only as configured" },
};

/** The dev shell's sandbox setting as a config option, switchable per session. */
export function sandboxOption(current: SandboxMode): SessionConfigOption {
  return {
    id: SANDBOX_OPTION_ID,
    name: "Sandbox",
    type: "select",
    currentValue: current,
    options: SANDBOX_MODES.map((id) => ({ value: id, ...SANDBOX_INFO[id] })),
  };
}

export function checkSandboxMode(value: unknown): SandboxMode {
  if (!isSandboxMode(value)) {
    throw new AcpError(INVALID_PARAMS, `unknown sandbox setting: ${JSON.stringify(value)} (settings: ${SANDBOX_MODES.join(", ")})`);
  }
  return value;
}
